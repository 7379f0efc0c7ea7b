"""incremental-upgrade-requirements: ``NewClusterWithIncrementalUpgrade`` has what it needs.

Severity: mandatory everywhere (the operator refuses to upgrade).

Why: the incremental upgrade shifts traffic through Gateway API step by step and grows the new
cluster with the autoscaler, so it needs ``upgradeStrategy.clusterUpgradeOptions`` (with a
``gatewayClassName``) and ``rayClusterConfig.enableInTreeAutoscaling: true`` (KubeRay 1.7.0
RayService validation; DESIGN.md upstream facts).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, dig, number
from policies.rules.base import MANDATORY, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayService":
        return
    if dig(props, "spec", "upgradeStrategy", "type") != "NewClusterWithIncrementalUpgrade":
        return
    options = as_map(dig(props, "spec", "upgradeStrategy", "clusterUpgradeOptions"))
    if not options.get("gatewayClassName"):
        yield (
            "spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName: required for "
            "NewClusterWithIncrementalUpgrade (with stepSizePercent and intervalSeconds)"
        )
    step, surge = number(options.get("stepSizePercent")), number(options.get("maxSurgePercent"))
    if step is not None and surge is not None and step > surge:
        yield (
            f"spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent {int(step)} exceeds maxSurgePercent "
            f"{int(surge)}: traffic would move faster than capacity is added; keep step <= surge"
        )
    if dig(props, "spec", "rayClusterConfig", "enableInTreeAutoscaling") is not True:
        yield (
            "spec.rayClusterConfig.enableInTreeAutoscaling: must be true for "
            "NewClusterWithIncrementalUpgrade (the new cluster grows through the autoscaler)"
        )


RULE = ResourceRule(
    name="incremental-upgrade-requirements",
    description="Incremental RayService upgrades set clusterUpgradeOptions and in-tree autoscaling.",
    levels=MANDATORY,
    check=check,
)
