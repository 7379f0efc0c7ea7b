"""group-resources-conflict: Ray resources are declared in one place per group.

Severity: mandatory everywhere (KubeRay rejects the object).

Why: KubeRay 1.7.0 takes a group's Ray resources either from ``rayStartParams`` (``num-cpus``,
``num-gpus``, ``memory``, ``resources``) or from the group's ``resources`` map, and refuses a group
that sets both ("resource fields should not be set in both rayStartParams and Resources",
``validateRayGroupResources`` in ray-operator/controllers/ray/utils/validation.go): the RayCluster,
RayService or RayJob is marked invalid and nothing is created.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, pod_groups
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

RAY_START_RESOURCES = ("num-cpus", "num-gpus", "memory", "resources")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        in_params = [k for k in RAY_START_RESOURCES if group.ray_start_params.get(k) not in (None, "")]
        if in_params and as_map(group.group.get("resources")):
            yield (
                f"{group.path}: Ray resources in both rayStartParams ({', '.join(in_params)}) and resources; "
                "KubeRay refuses the group: keep one of them"
            )


RULE = ResourceRule(
    name="group-resources-conflict",
    description="A group declares its Ray resources in rayStartParams or in resources, never both.",
    levels=MANDATORY,
    check=check,
)
