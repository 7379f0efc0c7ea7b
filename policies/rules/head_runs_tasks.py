"""head-runs-tasks: the Ray head must not schedule tasks or actors.

Severity: mandatory in staging and prod, advisory in dev (a laptop-sized dev cluster may
legitimately run work on its head).

Why: the head runs GCS, the dashboard and the autoscaler; tasks there compete with them for
memory, and a head OOM takes the whole cluster down (seeds ch. 9.1, 9.9; KubeRay docs "Ray head
should not run tasks"). ``num-cpus: "0"`` keeps tasks off it; where the cluster has GPUs,
``num-gpus: "0"`` keeps GPU work off it too, and the head pod itself must not request GPUs/TPUs.
Applies to RayCluster, RayService ``spec.rayClusterConfig``, RayJob ``spec.rayClusterSpec`` and
RayCronJob ``spec.jobTemplate.rayClusterSpec`` alike.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import (
    ACCELERATOR_RESOURCES,
    GPU_RESOURCES,
    container_resource,
    head_group,
    pod_groups,
)
from policies.rules.base import ResourceRule, RuleContext, levels


def _zero(value: Any) -> bool:
    return str(value).strip() in ("0", "0.0")


def _has_gpus(containers: list[Mapping[str, Any]]) -> bool:
    return any(container_resource(c, gpu) not in (None, 0, "0") for c in containers for gpu in GPU_RESOURCES)


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    groups = list(pod_groups(props))
    head = head_group(props)
    if head is None:
        return
    params = head.ray_start_params
    where = f"{head.path}.rayStartParams"
    if "num-cpus" not in params:
        yield f'{where}: set num-cpus: "0" so tasks and actors are never scheduled on the head'
    elif not _zero(params["num-cpus"]):
        yield f'{where}.num-cpus is {params["num-cpus"]!r}: set it to "0" so the head runs no tasks'
    for acc in ACCELERATOR_RESOURCES:
        amount = container_resource(head.ray_container, acc)
        if amount not in (None, 0, "0"):
            yield (
                f"{head.path}.template.spec.containers[0].resources requests {acc}: {amount}: "
                f"the head needs no accelerators; move them to a worker group"
            )
    gpus_anywhere = any(_has_gpus(g.containers) for g in groups)
    if gpus_anywhere and not _zero(params.get("num-gpus", "missing")):
        yield f'{where}: the cluster has GPUs; set num-gpus: "0" so GPU work never lands on the head'


RULE = ResourceRule(
    name="head-runs-tasks",
    description='The Ray head must not run tasks: rayStartParams num-cpus "0" (and num-gpus "0" with GPUs).',
    levels=levels(dev="advisory", staging="mandatory", prod="mandatory"),
    check=check,
)
