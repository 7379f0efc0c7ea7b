"""blue-green-accelerator-service: large accelerator services upgrade incrementally.

Severity: advisory in dev and staging, mandatory in prod. Tunable: ``largeServiceAccelerators`` (4).

Why: ``NewCluster`` (the default) brings up a complete second cluster before switching traffic, so
an upgrade needs twice the GPUs/TPUs; when the pool cannot supply them the upgrade stalls.
``NewClusterWithIncrementalUpgrade`` surges one step at a time: the seeds' 5-GPU service upgraded
in 20% steps peaks at 6 GPUs instead of 10 (seeds ch. 8.7, 9.6, 9.9).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.capacity import capacity, steady_accelerators
from components.manifests.ray_objects import dig
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext

OPTIONS = {"largeServiceAccelerators": {"type": "number", "minimum": 1, "default": 4}}


def _peak(props: Mapping[str, Any], strategy: str) -> float:
    peak = capacity(props, strategy).upgrade_peak
    return peak.gpu + peak.tpu if peak is not None else 0.0


def _count(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayService":
        return
    strategy = dig(props, "spec", "upgradeStrategy", "type") or "NewCluster"
    if strategy != "NewCluster":
        return
    steady = steady_accelerators(props)
    threshold = float(ctx.options.get("largeServiceAccelerators", OPTIONS["largeServiceAccelerators"]["default"]))
    if steady < threshold:
        return
    shown = "NewCluster" if dig(props, "spec", "upgradeStrategy", "type") else "NewCluster (the default)"
    yield (
        f"spec.upgradeStrategy.type: {shown} for a service holding {_count(steady)} accelerators: "
        "a blue-green upgrade needs "
        f"{_count(_peak(props, 'NewCluster'))}; use NewClusterWithIncrementalUpgrade, which peaks at "
        f"{_count(_peak(props, 'NewClusterWithIncrementalUpgrade'))} in 20% steps"
    )


RULE = ResourceRule(
    name="blue-green-accelerator-service",
    description="RayServices with many accelerators use NewClusterWithIncrementalUpgrade, not blue-green.",
    levels=PROD_ONLY,
    check=check,
    options=OPTIONS,
)
