"""worker-group-replicas: replica bounds and group names the operator accepts.

Severity: mandatory everywhere (KubeRay rejects the cluster).

Why: KubeRay validates ``minReplicas <= maxReplicas`` and unique ``groupName``s at reconcile time
(the CRD cannot express either), so such an object applies cleanly and then never runs; a
``replicas`` outside the bounds is clamped by the autoscaler, which hides a sizing mistake.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import number, pod_groups
from policies.rules.base import MANDATORY, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    seen: set[str] = set()
    for group in pod_groups(props):
        if group.role != "worker":
            continue
        if group.name in seen:
            yield f"{group.path}.groupName {group.name!r} is used twice; worker group names must be unique"
        seen.add(group.name)
        low, high = number(group.group.get("minReplicas", 0)), number(group.group.get("maxReplicas"))
        if low is not None and high is not None and low > high:
            yield f"{group.path}: minReplicas {int(low)} > maxReplicas {int(high)}"
        replicas = number(group.group.get("replicas"))
        if replicas is not None and low is not None and high is not None and not low <= replicas <= high:
            yield f"{group.path}.replicas {int(replicas)} is outside minReplicas..maxReplicas ({int(low)}..{int(high)})"


RULE = ResourceRule(
    name="worker-group-replicas",
    description="Worker groups have unique names and minReplicas <= replicas <= maxReplicas.",
    levels=MANDATORY,
    check=check,
)
