"""Kueue queues the stack creates (``platform.kueue``): ClusterQueues with quotas per pool, the
LocalQueues workloads name, and WorkloadPriorityClasses. Written as ``kueue.x-k8s.io/v1beta2``
(Kueue v0.19.2); each pool a quota names becomes a ResourceFlavor with the pool's node labels."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from components.spec.base import K8sName, Model, Quantity

RESOURCE_NAMES = {"cpu": "cpu", "memory": "memory", "gpu": "nvidia.com/gpu", "tpu": "google.com/tpu"}
"""Quota keys of the spec -> the Kubernetes resource names Kueue counts."""


class ResourceQuota(Model):
    nominal: Quantity
    """``nominalQuota``: what this ClusterQueue owns."""
    borrowing_limit: Quantity | None = None
    """How much more it may borrow from its cohort (unset: unlimited). Needs a cohort."""
    lending_limit: Quantity | None = None
    """How much of its nominal quota its cohort may borrow (unset: all of it)."""


class FlavorQuota(Model):
    """Quotas of one pool (a ResourceFlavor): a quantity (nominal) or ``{nominal, borrowingLimit,
    lendingLimit}`` per resource. Resources a pool lacks are 0."""

    cpu: Quantity | ResourceQuota | None = None
    memory: Quantity | ResourceQuota | None = None
    gpu: Quantity | ResourceQuota | None = None
    """``nvidia.com/gpu``."""
    tpu: Quantity | ResourceQuota | None = None
    """``google.com/tpu``."""

    def resources(self) -> dict[str, ResourceQuota]:
        out: dict[str, ResourceQuota] = {}
        for key, name in RESOURCE_NAMES.items():
            value = getattr(self, key)
            if value is not None:
                out[name] = value if isinstance(value, ResourceQuota) else ResourceQuota(nominal=value)
        return out


class PreemptionSpec(Model):
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Never"
    """Preempt workloads of other ClusterQueues in the cohort that borrow this queue's quota."""
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "Never"
    borrow_within_cohort: Literal["Never", "LowerPriority"] = "Never"
    """Preempt lower-priority workloads of the cohort to borrow. Kueue requires reclaimWithinCohort
    other than Never for it."""

    @model_validator(mode="after")
    def _kueue_combination(self) -> PreemptionSpec:
        if self.reclaim_within_cohort == "Never" and self.borrow_within_cohort != "Never":
            raise ValueError(
                "borrowWithinCohort: Kueue refuses it with reclaimWithinCohort: Never; set reclaimWithinCohort "
                "to LowerPriority or Any"
            )
        return self


class ClusterQueueSpec(Model):
    name: K8sName
    cohort: K8sName | None = None
    """Queues of one cohort lend and borrow unused quota."""
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = "BestEffortFIFO"
    namespaces: list[K8sName] | None = None
    """Namespaces whose LocalQueues may use it (``namespaceSelector``); unset: any."""
    quotas: dict[K8sName, FlavorQuota] = Field(min_length=1)
    """Per pool name (each a ResourceFlavor), in the order Kueue tries them: list CPU pools first so
    a CPU-only pod set (a Ray head) is not placed on an accelerator flavor."""
    preemption: PreemptionSpec = PreemptionSpec()
    fair_sharing_weight: int | None = Field(default=None, ge=0)
    """Share of the cohort's unused quota under fair sharing (Kueue's default weight is 1)."""

    @model_validator(mode="after")
    def _borrowing_needs_cohort(self) -> ClusterQueueSpec:
        if self.cohort is None:
            borrowing = [
                f"quotas.{pool}"
                for pool, quota in self.quotas.items()
                if any(r.borrowing_limit is not None for r in quota.resources().values())
            ]
            if borrowing:
                raise ValueError(f"{borrowing[0]}: borrowingLimit needs a cohort (Kueue refuses it without one)")
            if self.preemption.reclaim_within_cohort != "Never":
                raise ValueError("preemption.reclaimWithinCohort: needs a cohort")
        if not any(quota.resources() for quota in self.quotas.values()):
            raise ValueError("quotas: give at least one resource a quota")
        return self


class LocalQueueSpec(Model):
    name: K8sName
    namespace: K8sName
    cluster_queue: K8sName


class PriorityClassSpec(Model):
    name: K8sName
    value: int
    """Higher is admitted (and preempts) first."""
    description: str = ""


class KueueSpec(Model):
    """Kueue must be installed (``prerequisites.kueue: true``): its CRDs, controller and the Ray
    integrations (``ray.io/rayjob``) enabled."""

    cluster_queues: list[ClusterQueueSpec] = []
    local_queues: list[LocalQueueSpec] = []
    priority_classes: list[PriorityClassSpec] = []

    @property
    def enabled(self) -> bool:
        return bool(self.cluster_queues or self.local_queues or self.priority_classes)
