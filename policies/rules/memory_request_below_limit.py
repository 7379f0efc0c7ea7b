"""memory-request-below-limit: Ray containers request the memory they may use.

Severity: advisory everywhere.

Why: Ray sizes its object store and memory monitor from the container's memory *limit*; when the
request is lower, the scheduler packs the node on the request and the kernel OOM-kills Ray under
load. KubeRay recommends requests equal to limits (Guaranteed QoS) for Ray containers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.quantity import parse_quantity
from components.manifests.ray_objects import as_map, pod_groups
from policies.rules.base import ResourceRule, RuleContext, levels


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        container = group.ray_container
        res = as_map(container.get("resources"))
        request = parse_quantity(as_map(res.get("requests")).get("memory"))
        limit = parse_quantity(as_map(res.get("limits")).get("memory"))
        if request is not None and limit is not None and request < limit:
            yield (
                f"{group.path}.template.spec.containers[0]: memory request {res['requests']['memory']} is below "
                f"the limit {res['limits']['memory']}; Ray sizes itself from the limit, so request it too"
            )


RULE = ResourceRule(
    name="memory-request-below-limit",
    description="Ray containers request as much memory as their limit.",
    levels=levels("advisory", "advisory", "advisory"),
    check=check,
)
