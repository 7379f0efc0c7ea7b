"""Capacity planning: what each Ray workload needs in steady state, scaled out, and while upgrading.

Read from the emitted objects (so it is true of what is deployed): every pod's containers (the
autoscaler sidecar included) times hosts per replica times replicas. Steady state is each group at
its floor (``max(replicas, minReplicas)``), scaled out is each group at ``maxReplicas``. A
RayService's upgrade peak follows its strategy: blue-green (``NewCluster``) runs a whole second
cluster (2x steady), ``NewClusterWithIncrementalUpgrade`` adds one surge step
(``ceil(steady * maxSurgePercent%)``): the seeds' 5-GPU service in 20% steps peaks at 6, not 10.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.manifests.quantity import parse_quantity
from components.manifests.ray_objects import (
    PodGroup,
    as_map,
    cluster_spec,
    dig,
    group_accelerators,
    number,
    object_ref,
    pod_groups,
)

INCREMENTAL_SURGE_PERCENT = 20
"""The seeds' worked example: a 5-GPU service upgraded in 20% steps peaks at 6 GPUs."""
RESOURCES = ("gpu", "tpu", "cpu", "memory")


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


@dataclass
class Amounts:
    gpu: float = 0.0
    tpu: float = 0.0
    cpu: float = 0.0
    memory: float = 0.0

    def add(self, other: Amounts, times: float = 1) -> None:
        for name in RESOURCES:
            setattr(self, name, getattr(self, name) + getattr(other, name) * times)


@dataclass
class Capacity:
    workload: str
    kind: str
    steady: Amounts = field(default_factory=Amounts)
    scaled_out: Amounts = field(default_factory=Amounts)
    upgrade_peak: Amounts | None = None
    strategy: str | None = None


def _pod(group: PodGroup, autoscaler: Mapping[str, Any] | None) -> Amounts:
    per_pod = Amounts()
    containers = list(group.containers) + ([autoscaler] if autoscaler else [])
    for container in containers:
        res = as_map(container.get("resources"))
        limits, requests = as_map(res.get("limits")), as_map(res.get("requests"))
        per_pod.cpu += parse_quantity(requests.get("cpu", limits.get("cpu"))) or 0
        per_pod.memory += parse_quantity(limits.get("memory", requests.get("memory"))) or 0
    accel = group_accelerators(group)
    per_pod.gpu = sum(v for k, v in accel.items() if k != "google.com/tpu")
    per_pod.tpu = accel.get("google.com/tpu", 0)
    return per_pod


def steady_accelerators(obj: Mapping[str, Any]) -> float:
    """GPUs and TPU chips a Ray object holds in steady state."""
    plan = capacity(obj)
    return plan.steady.gpu + plan.steady.tpu


def capacity(obj: Mapping[str, Any]) -> Capacity:
    kind = str(obj.get("kind"))
    plan = Capacity(workload=object_ref(obj), kind=kind)
    found = cluster_spec(obj)
    cluster = found[1] if found else {}
    autoscaler = as_map(cluster.get("autoscalerOptions")) if cluster.get("enableInTreeAutoscaling") is True else None
    for group in pod_groups(obj):
        if group.group.get("suspend") is True:
            continue
        if group.role == "head":  # the autoscaler runs as a sidecar of the head
            pod = _pod(group, {"resources": autoscaler.get("resources")} if autoscaler is not None else None)
            plan.steady.add(pod)
            plan.scaled_out.add(pod)
            continue
        hosts = number(group.group.get("numOfHosts", 1)) or 1
        floor = max(number(group.group.get("replicas", 0)) or 0, number(group.group.get("minReplicas", 0)) or 0)
        ceiling = max(floor, number(group.group.get("maxReplicas", floor)) or floor)
        pod = _pod(group, None)
        plan.steady.add(pod, hosts * floor)
        plan.scaled_out.add(pod, hosts * ceiling)
    if kind == "RayService":
        strategy = str(dig(obj, "spec", "upgradeStrategy", "type") or "NewCluster")
        surge = number(dig(obj, "spec", "upgradeStrategy", "clusterUpgradeOptions", "maxSurgePercent"))
        plan.strategy = strategy
        plan.upgrade_peak = Amounts(
            **{
                name: upgrade_peak(getattr(plan.steady, name), strategy, surge or INCREMENTAL_SURGE_PERCENT)
                for name in RESOURCES
            }
        )
    return plan


def total(plans: list[Capacity]) -> Capacity:
    """The sum over workloads; the peak assumes one service upgrades at a time while the rest run steady."""
    out = Capacity(workload="total", kind="")
    for plan in plans:
        out.steady.add(plan.steady)
        out.scaled_out.add(plan.scaled_out)
    surges = [p for p in plans if p.upgrade_peak is not None]
    if surges:
        out.upgrade_peak = Amounts()
        out.upgrade_peak.add(out.steady)
        for name in RESOURCES:
            surge = max(getattr(p.upgrade_peak, name) - getattr(p.steady, name) for p in surges if p.upgrade_peak)
            setattr(out.upgrade_peak, name, getattr(out.upgrade_peak, name) + surge)
    return out


def plans(objects: Sequence[Mapping[str, Any]]) -> list[Capacity]:
    """The capacity of every object that embeds a Ray cluster."""
    return [capacity(o) for o in objects if cluster_spec(o) is not None]
