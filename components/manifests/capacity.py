"""Capacity planning: what each Ray workload needs in steady state, scaled out, and while upgrading.

Read from the emitted objects (so it is true of what is deployed): every pod's containers (the
autoscaler sidecar included) times hosts per replica times replicas. Steady state is each group at
its floor (``max(replicas, minReplicas)``), scaled out is each group at ``maxReplicas``. A
RayService's upgrade peak follows its strategy: blue-green (``NewCluster``) runs a whole second
cluster (2x steady); ``NewClusterWithIncrementalUpgrade`` adds the new cluster's head and one surge
step per group, ``ceil(replicas * maxSurgePercent%)`` rounded up to whole model replicas (a
pipeline-parallel LLM replica spans several pods): the seeds' 5-GPU service in 20% steps peaks at
6 GPUs, not 10.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

from components.manifests.quantity import parse_quantity
from components.manifests.ray_objects import (
    PodGroup,
    as_list,
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


def _model_unit(obj: Mapping[str, Any]) -> int:
    """Pods one model replica spans in a RayService (Ray Serve LLM pipeline parallelism), else 1:
    capacity can only be added in whole model replicas."""
    text = dig(obj, "spec", "serveConfigV2")
    return _model_unit_of(text) if isinstance(text, str) else 1


@lru_cache(maxsize=256)
def _model_unit_of(text: str) -> int:
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return 1
    units = [
        number(dig(config, "engine_kwargs", "pipeline_parallel_size")) or 1
        for app in as_list(as_map(doc).get("applications"))
        for config in as_list(dig(app, "args", "llm_configs"))
    ]
    return int(max(units, default=1))


def capacity(obj: Mapping[str, Any], strategy: str | None = None) -> Capacity:
    """The plan of one Ray object; ``strategy`` overrides a RayService's own (to compare them)."""
    kind = str(obj.get("kind"))
    plan = Capacity(workload=object_ref(obj), kind=kind)
    found = cluster_spec(obj)
    cluster = found[1] if found else {}
    autoscaler = as_map(cluster.get("autoscalerOptions")) if cluster.get("enableInTreeAutoscaling") is True else None
    head = Amounts()
    surge_percent = number(dig(obj, "spec", "upgradeStrategy", "clusterUpgradeOptions", "maxSurgePercent"))
    surge_percent = surge_percent or INCREMENTAL_SURGE_PERCENT
    unit = _model_unit(obj)
    incremental_surge = Amounts()
    for group in pod_groups(obj):
        if group.group.get("suspend") is True:
            continue
        if group.role == "head":  # the autoscaler runs as a sidecar of the head
            head = _pod(group, {"resources": autoscaler.get("resources")} if autoscaler is not None else None)
            plan.steady.add(head)
            plan.scaled_out.add(head)
            continue
        hosts = number(group.group.get("numOfHosts", 1)) or 1
        floor = max(number(group.group.get("replicas", 0)) or 0, number(group.group.get("minReplicas", 0)) or 0)
        ceiling = max(floor, number(group.group.get("maxReplicas", floor)) or floor)
        pod = _pod(group, None)
        plan.steady.add(pod, hosts * floor)
        plan.scaled_out.add(pod, hosts * ceiling)
        # One surge step of this group, in whole replicas, and in whole model replicas where a model
        # spans several pods (accelerator groups only).
        step = math.ceil(floor * surge_percent / 100) if floor else 0
        group_unit = unit if (pod.gpu or pod.tpu) else 1
        step = math.ceil(step / group_unit) * group_unit
        incremental_surge.add(pod, hosts * step)
    if kind == "RayService":
        plan.strategy = strategy or str(dig(obj, "spec", "upgradeStrategy", "type") or "NewCluster")
        plan.upgrade_peak = Amounts()
        plan.upgrade_peak.add(plan.steady)
        if plan.strategy == "NewCluster":  # a whole second cluster
            plan.upgrade_peak.add(plan.steady)
        elif plan.strategy == "NewClusterWithIncrementalUpgrade":  # the new head, then one step
            plan.upgrade_peak.add(head)
            plan.upgrade_peak.add(incremental_surge)
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
