"""serving-min-replicas: serving keeps a floor of at least 2 replicas.

Severity: advisory in dev and staging, mandatory in prod. Tunable: ``servingMinReplicas`` (2).

Why: a service that may scale to 0 or 1 answers a traffic spike with pod start-up latency (minutes
for GPU images) and has no redundancy when its only replica is rescheduled (seeds ch. 8.4, 9.4
"Serving: minReplicas 2", anti-pattern "no minReplicas" in 9.9).

Where the floor lives: normally in the worker groups' ``minReplicas``. With
``NewClusterWithIncrementalUpgrade`` the accelerator groups start at ``minReplicas: 0`` (the pending
cluster must grow one step at a time) and the floor is the Serve replicas' minimum, which keeps
their nodes busy: ``num_replicas`` or ``autoscaling_config.min_replicas`` of the deployments the
config names, and for Ray Serve LLM ``deployment_config.autoscaling_config.min_replicas`` (1 when
unset). Deployments the config does not mention keep their code defaults, which cannot be read here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, dig, number, pod_groups
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext
from policies.rules.helpers import serve_config

OPTIONS = {"servingMinReplicas": {"type": "integer", "minimum": 1, "default": 2}}
LLM_DEFAULT_MIN_REPLICAS = 1


def _serve_floors(props: Mapping[str, Any]) -> Iterator[tuple[str, float]]:
    for i, app in enumerate(as_list(serve_config(props).get("applications"))):
        where = f"spec.serveConfigV2 applications[{i}]"
        for j, dep in enumerate(as_list(as_map(app).get("deployments"))):
            dep = as_map(dep)
            floor = number(dig(dep, "autoscaling_config", "min_replicas"))
            if floor is None and dig(dep, "autoscaling_config") is None:
                floor = number(dep.get("num_replicas"))
            if floor is not None:
                yield f"{where}.deployments[{j}]", floor
        for j, config in enumerate(as_list(dig(app, "args", "llm_configs"))):
            floor = number(dig(config, "deployment_config", "autoscaling_config", "min_replicas"))
            yield f"{where}.args.llm_configs[{j}]", LLM_DEFAULT_MIN_REPLICAS if floor is None else floor


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayService":
        return
    floor = int(ctx.options.get("servingMinReplicas", OPTIONS["servingMinReplicas"]["default"]))
    if dig(props, "spec", "upgradeStrategy", "type") == "NewClusterWithIncrementalUpgrade":
        for where, replicas in _serve_floors(props):
            if replicas < floor:
                yield (
                    f"{where}: at least {int(replicas)} replica(s); a service that upgrades incrementally keeps its "
                    f"floor in Serve: set min_replicas (or num_replicas) to {floor} or more"
                )
        return
    for group in pod_groups(props):
        if group.role != "worker" or group.group.get("suspend") is True:
            continue
        current = number(group.group.get("minReplicas", 0))
        if current is not None and current < floor:
            yield (
                f"{group.path}.minReplicas is {int(current)}: serving group {group.name} needs a floor of at "
                f"least {floor} replicas for latency and redundancy"
            )


RULE = ResourceRule(
    name="serving-min-replicas",
    description="RayServices keep a floor of at least 2 replicas (worker groups, or Serve with incremental upgrades).",
    levels=PROD_ONLY,
    check=check,
    options=OPTIONS,
)
