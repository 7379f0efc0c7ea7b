"""memory-request-below-limit: Ray containers request the memory they may use.

Severity: advisory everywhere.

Why: Ray sizes its object store and memory monitor from the container's memory *limit*; when the
request is lower, the scheduler packs the node on the request and the kernel OOM-kills Ray under
load. KubeRay recommends requests equal to limits (Guaranteed QoS) for Ray containers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, pod_groups
from policies.rules.base import ResourceRule, RuleContext, levels

_UNITS = {
    "": 1,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "m": 1e-3,
}
_QUANTITY = re.compile(r"^([0-9.]+)([A-Za-z]*)$")


def bytes_of(quantity: Any) -> float | None:
    match = _QUANTITY.match(str(quantity).strip())
    if not match or match.group(2) not in _UNITS:
        return None
    try:
        return float(match.group(1)) * _UNITS[match.group(2)]
    except ValueError:
        return None


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        container = group.ray_container
        res = as_map(container.get("resources"))
        request = bytes_of(as_map(res.get("requests")).get("memory"))
        limit = bytes_of(as_map(res.get("limits")).get("memory"))
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
