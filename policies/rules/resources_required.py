"""resources-required: every Ray pod container sets CPU and memory requests and a memory limit.

Severity: advisory in dev, mandatory in staging and prod.

Why: KubeRay derives Ray's logical resources (``num-cpus``, memory, object store) from the
container's requests/limits; without them Ray sees the whole node, overcommits it, and the kernel
OOM-kills workers. Memory limits bound the blast radius (KubeRay docs "resource requests and
limits"; seeds ch. 9.2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, pod_groups
from policies.rules.base import NOT_DEV, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        for i, container in enumerate(group.containers):
            res = as_map(container.get("resources"))
            requests, limits = as_map(res.get("requests")), as_map(res.get("limits"))
            missing = []
            # A limit without a request makes the request equal to the limit.
            if "cpu" not in requests and "cpu" not in limits:
                missing.append("requests.cpu")
            if "memory" not in requests and "memory" not in limits:
                missing.append("requests.memory")
            if "memory" not in limits:
                missing.append("limits.memory")
            if missing:
                name = container.get("name", f"#{i}")
                yield (
                    f"{group.path}.template.spec.containers[{i}] ({name}): set resources "
                    f"{', '.join(missing)} so Ray and the scheduler agree on what the pod has"
                )


RULE = ResourceRule(
    name="resources-required",
    description="Ray containers set CPU/memory requests and a memory limit.",
    levels=NOT_DEV,
    check=check,
)
