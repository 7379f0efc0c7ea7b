"""rayservice-upgrade-none: RayService ``upgradeStrategy.type: None`` means downtime on every change.

Severity: advisory in dev, mandatory in staging and prod.

Why: with ``None`` KubeRay updates the serving cluster in place; a new image or Ray version takes
the service down (seeds ch. 8.7, 9.9: "use NewCluster / incremental upgrade"). ``None`` is only
for development.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import dig
from policies.rules.base import NOT_DEV, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") == "RayService" and dig(props, "spec", "upgradeStrategy", "type") == "None":
        yield (
            "spec.upgradeStrategy.type is None: changes take the service down; use NewCluster, or "
            "NewClusterWithIncrementalUpgrade for accelerator services"
        )


RULE = ResourceRule(
    name="rayservice-upgrade-none",
    description="RayService must not use upgradeStrategy None (in-place, with downtime).",
    levels=NOT_DEV,
    check=check,
)
