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

from components.manifests.ray_objects import accelerators, as_map, head_group, is_gpu_resource, pod_groups
from policies.rules.base import ResourceRule, RuleContext, levels


def _zero(value: Any) -> bool:
    return str(value).strip() in ("0", "0.0")


def _has_gpus(containers: list[Mapping[str, Any]]) -> bool:
    return any(is_gpu_resource(k) for c in containers for k in accelerators(c))


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    groups = list(pod_groups(props))
    head = head_group(props)
    if head is None:
        return
    params = head.ray_start_params
    # KubeRay 1.7.0 also takes Ray resources from the group's ``resources`` map, and refuses a group
    # that sets them in both places (``validateRayGroupResources``): advise the place in use.
    group_resources = {str(k).lower(): v for k, v in as_map(head.group.get("resources")).items()}
    uses_map = bool(group_resources)
    where = f"{head.path}.resources" if uses_map else f"{head.path}.rayStartParams"
    cpu_key, gpu_key = ("cpu", "gpu") if uses_map else ("num-cpus", "num-gpus")
    cpu_name, gpu_name = ("CPU", "GPU") if uses_map else (cpu_key, gpu_key)
    values = group_resources if uses_map else dict(params)
    if cpu_key not in values:
        yield f'{where}: set {cpu_name}: "0" so tasks and actors are never scheduled on the head'
    elif not _zero(values[cpu_key]):
        yield f'{where}.{cpu_name} is {values[cpu_key]!r}: set it to "0" so the head runs no tasks'
    for acc, amount in accelerators(head.ray_container).items():
        yield (
            f"{head.path}.template.spec.containers[0].resources requests {acc}: {amount:g}: "
            f"the head needs no accelerators; move them to a worker group"
        )
    gpus_anywhere = any(_has_gpus(g.containers) for g in groups)
    if gpus_anywhere and not _zero(values.get(gpu_key, "missing")):
        yield f'{where}: the cluster has GPUs; set {gpu_name}: "0" so GPU work never lands on the head'


RULE = ResourceRule(
    name="head-runs-tasks",
    description='The Ray head must not run tasks: rayStartParams num-cpus "0" (and num-gpus "0" with GPUs).',
    levels=levels(dev="advisory", staging="mandatory", prod="mandatory"),
    check=check,
)
