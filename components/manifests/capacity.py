"""Accelerator arithmetic shared by capacity planning and the policy rules."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from components.manifests.ray_objects import group_accelerators, number, pod_groups

INCREMENTAL_SURGE_PERCENT = 20
"""The seeds' worked example: a 5-GPU service upgraded in 20% steps peaks at 6 GPUs."""


def upgrade_peak(steady: float, strategy: str, surge_percent: float = INCREMENTAL_SURGE_PERCENT) -> float:
    """Peak of a resource during a RayService upgrade.

    ``NewCluster`` (blue-green) runs a whole second cluster beside the first: twice the steady
    amount. ``NewClusterWithIncrementalUpgrade`` grows the new cluster one surge step at a time:
    steady plus ``ceil(steady * surge%)``. ``None`` upgrades in place: no surge.
    """
    if strategy == "NewCluster":
        return 2 * steady
    if strategy == "NewClusterWithIncrementalUpgrade":
        return steady + math.ceil(steady * surge_percent / 100)
    return steady


def steady_accelerators(obj: Mapping[str, Any]) -> float:
    """Accelerators (GPUs and TPU chips) a Ray object holds in steady state: every group's
    per-pod amount x hosts per replica x its floor (``max(replicas, minReplicas)``)."""
    total = 0.0
    for group in pod_groups(obj):
        per_pod = sum(group_accelerators(group).values())
        if not per_pod or group.group.get("suspend") is True:
            continue
        if group.role == "head":
            total += per_pod
            continue
        hosts = number(group.group.get("numOfHosts", 1)) or 1
        replicas = max(number(group.group.get("replicas", 0)) or 0, number(group.group.get("minReplicas", 0)) or 0)
        total += per_pod * hosts * replicas
    return total
