"""serving-min-replicas: serving worker groups keep a floor of at least 2 replicas.

Severity: advisory in dev and staging, mandatory in prod. Tunable: ``servingMinReplicas`` (2).

Why: a serving group that may scale to 0 or 1 answers a traffic spike with pod start-up latency
(minutes for GPU images) and has no redundancy when its only pod is rescheduled
(seeds ch. 8.4, 9.4 "Serving: minReplicas 2", anti-pattern "no minReplicas" in 9.9).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import number, pod_groups
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext

OPTIONS = {"servingMinReplicas": {"type": "integer", "minimum": 1, "default": 2}}


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayService":
        return
    floor = int(ctx.options.get("servingMinReplicas", OPTIONS["servingMinReplicas"]["default"]))
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
    description="RayService worker groups keep minReplicas >= 2.",
    levels=PROD_ONLY,
    check=check,
    options=OPTIONS,
)
