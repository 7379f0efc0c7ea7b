"""Kueue queues the stack creates (``platform.kueue``): ClusterQueues with quotas per pool, the
LocalQueues workloads name, and WorkloadPriorityClasses. Written as ``kueue.x-k8s.io/v1beta2``
(Kueue v0.19.2); each pool a quota names becomes a ResourceFlavor with the pool's node labels."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.spec.base import ImageTag, K8sName, Model, Quantity
from components.spec.chart import ChartSource

KUEUE_VERSION = "0.19.2"
KUEUE_CHART_OCI = "oci://registry.k8s.io/kueue/charts/kueue"

RAY_FRAMEWORKS = {"RayJob": "ray.io/rayjob", "RayCluster": "ray.io/raycluster", "RayService": "ray.io/rayservice"}
"""The Kueue integration each queued Ray kind needs (a RayCronJob's RayJobs need ``ray.io/rayjob``)."""

KueueFramework = Literal[
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
]
"""``integrations.frameworks`` Kueue v0.19.2 accepts (the chart's list, commented-out ones included)."""

KUEUE_FEATURE_GATES = frozenset(
    """
    PartialAdmission FlavorFungibility VisibilityOnDemand DisableWaitForPodsReady PrioritySortingWithinCohort
    FairSharingPreemptWithinNominal FairSharingPrioritizeNonBorrowing MultiKueue TopologyAwareScheduling
    LocalQueueMetrics TASProfileMixed HierarchicalCohorts AdmissionFairSharing ObjectRetentionPolicies
    TASFailedNodeReplacement ElasticJobsViaWorkloadSlices ElasticJobsViaWorkloadSlicesWithTAS
    TASFailedNodeReplacementFailFast TASReplaceNodeOnPodTermination SkipReassignmentForPodOwnedWorkloads
    TASReplaceNodeDueToNotReadyOverFixedTime ManagedJobsNamespaceSelectorAlwaysRespected TASBalancedPlacement
    TASAssignmentsEncodingByHostnamePrefix KueueDRAIntegration KueueDRAIntegrationExtendedResource
    KueueDRARejectWorkloadsWhenDRADisabled KueueDRAIntegrationPartitionableDevices
    KueueDRAIntegrationConsumableCapacity MultiKueueAdaptersForCustomJobs WorkloadRequestUseMergePatch
    MultiKueueAllowInsecureKubeconfigs MultiKueueKubeConfigPathValidation ReclaimablePods
    PropagateBatchJobLabelsToWorkload MultiKueueClusterProfile FailureRecoveryPolicy
    SkipFinalizersForPodsSuspendedByParent MultiKueueWaitForWorkloadAdmitted
    MultiKueueRedoAdmissionOnEvictionInWorker TLSOptions RemoveFinalizersWithStrictPatch
    TASReplaceNodeOnNodeTaints AssignQueueLabelsForPods TASMultiLayerTopology SchedulingEquivalenceHashing
    SchedulerLongRequeueInterval SchedulerTimestampPreemptionBuffer CustomMetricLabels
    SparkApplicationIntegration MultiKueueOrchestratedPreemption PriorityBoost AdmissionGatedBy
    ShortWorkloadNames FastQuotaReleaseInPodIntegration RejectUpdatesToCQWithInvalidOnFlavors
    FinishOrphanedWorkloads MultiKueueIncrementalDispatcherConfig
    MultiKueueIncrementalDispatcherRespectConfigOrder ConcurrentAdmission QuotaCheckStrategy
    MetricForWorkloadCreationLatency TASRespectNodeAffinityPreferred MultiKueueManagerQuotaAutomation
    WorkloadIdentifierAnnotations WorkloadPriorityClassDefaulting MetricsForCohorts
    CleanupProvisioningRequestsOnEviction TASHandleOverlappingFlavors UnadmittedWorkloadsObservability
    TASRecomputeAssignmentWithinSchedulingCycle UnadmittedWorkloadsExplicitStatus
    DeferRayServiceFinalizationForRedisCleanup TASCacheNodeMatchResults TASCachingRemainingResources
    TASCacheTopologyTree SchedulerLibraryIntegration VectorizedResourceRequests
    WorkloadValidateResourcesAreNonNegative TASValidateWorkloadSliceSize WorkloadValidationForPodSetMetadata
    PrioritizePreemptorWorkloads LWSImmutableGroupSize FlavorFungibilityPreserveScanProgress
    SkipAncestorCheckForDeletedWorkloads MultiKueueRemoteSpecSync
    RecomputeAssignmentUponPreemptionTargetsOverlap PodIntegrationValidateGroupOwner
    ValidateRayAndSparkJobUpdates
    """.split()  # noqa: SIM905 (a list of ~90 names reads better as words)
)
"""Kueue v0.19.2's feature gates (``pkg/features/kube_features.go`` at tag v0.19.2): the manager exits
on any other name."""


class KueueImage(Model):
    repository: str = "registry.k8s.io/kueue/kueue"
    """The release image (the chart's default points at a staging registry and a moving tag)."""
    tag: ImageTag = f"v{KUEUE_VERSION}"


class KueueInstallSpec(Model):
    """Kueue installed by the stack from its Helm chart (CRDs, controller manager, webhooks with
    Kueue's own certificates), configured for Ray. Without it, ``prerequisites.kueue: true`` says
    Kueue is installed already."""

    namespace: K8sName = "kueue-system"
    chart_version: Literal["0.19.2"] = "0.19.2"
    """Pinned with the Kueue schemas in ``schemas/`` (``schemas/pins.yaml``)."""
    chart: ChartSource = ChartSource(oci=KUEUE_CHART_OCI)
    image: KueueImage = KueueImage()
    replicas: int = Field(default=1, ge=1, le=3)
    """Manager pods (leader election on; more than one adds standbys and a PodDisruptionBudget)."""
    frameworks: list[KueueFramework] = Field(
        default=["ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"], min_length=1
    )
    """Kueue's ``integrations.frameworks``: the Ray integrations by default; add ``batch/job`` and others
    for teams that queue more than Ray."""
    feature_gates: dict[str, bool] = {}
    """Overrides of Kueue's feature gates (``--feature-gates``); names as in Kueue v0.19.2."""
    manage_jobs_without_queue_name: bool = False
    """Also hold workloads without a queue label (in namespaces other than kube-system and Kueue's):
    only when every team queues through Kueue."""

    @field_validator("feature_gates")
    @classmethod
    def _known_gates(cls, gates: dict[str, bool]) -> dict[str, bool]:
        unknown = sorted(set(gates) - KUEUE_FEATURE_GATES)
        if unknown:
            raise ValueError(f"unknown Kueue v{KUEUE_VERSION} feature gate(s): {', '.join(unknown)}")
        return gates

    @model_validator(mode="after")
    def _archive_matches_version(self) -> KueueInstallSpec:
        self.chart.check_archive("kueue", self.chart_version)
        if len(set(self.frameworks)) != len(self.frameworks):
            raise ValueError("frameworks: each integration once")
        return self

    def gate(self, name: str, default: bool = True) -> bool:
        return self.feature_gates.get(name, default)


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
    """Per pool name (each a ResourceFlavor)."""
    flavor_order: list[K8sName] | None = None
    """The order Kueue tries the flavors in. Default: CPU pools, then GPU, then TPU, each by name, so a
    CPU-only pod set (a Ray head) is never placed on an accelerator flavor. (The order of ``quotas``
    cannot be used: the Pulumi CLI hands the program its config with mapping keys sorted.)"""
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
        if self.flavor_order is not None and sorted(self.flavor_order) != sorted(self.quotas):
            raise ValueError(
                f"flavorOrder: list each pool of quotas exactly once (quotas: {', '.join(sorted(self.quotas))})"
            )
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


class WorkerClusterSpec(Model):
    name: K8sName
    """The MultiKueueCluster's name."""
    kubeconfig_secret: K8sName
    """A Secret in Kueue's namespace with the worker cluster's kubeconfig under the key ``kubeconfig``
    (declare it in ``prerequisites.secrets``). Kueue refuses kubeconfigs that read local files or run
    exec plugins: use a token or client certificate."""


class MultiKueueSpec(Model):
    """This cluster is a MultiKueue manager: workloads queued to ``clusterQueues`` are admitted here,
    then dispatched to the first worker cluster that admits them (workers need KubeRay, Kueue and the
    same namespaces and LocalQueues)."""

    clusters: list[WorkerClusterSpec] = Field(min_length=1, max_length=20)
    """Worker clusters, in order of preference (``MultiKueueConfig.spec.clusters``)."""
    cluster_queues: list[K8sName] = Field(min_length=1)
    """The stack's ClusterQueues whose workloads are dispatched (each gets the MultiKueue AdmissionCheck)."""
    kueue_namespace: K8sName | None = None
    """Where Kueue runs when installed already (default ``kueue-system``); the kubeconfig Secrets live
    there. With ``kueue.install`` it is the install's namespace."""

    @model_validator(mode="after")
    def _unique(self) -> MultiKueueSpec:
        for label, names in (("clusters", [c.name for c in self.clusters]), ("clusterQueues", self.cluster_queues)):
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"{label}: names must be unique (repeated: {', '.join(dupes)})")
        return self


class KueueSpec(Model):
    """Kueue installed by the stack (``install``) or already (``prerequisites.kueue: true``), with the
    Ray integrations enabled; the queues, flavors and priorities the stack creates."""

    install: KueueInstallSpec | None = None
    multi_kueue: MultiKueueSpec | None = None
    """Dispatch the workloads of some ClusterQueues to worker clusters."""
    cluster_queues: list[ClusterQueueSpec] = []
    local_queues: list[LocalQueueSpec] = []
    priority_classes: list[PriorityClassSpec] = []

    @property
    def enabled(self) -> bool:
        return bool(self.cluster_queues or self.local_queues or self.priority_classes or self.install)

    @property
    def namespace(self) -> str:
        """Kueue's namespace."""
        if self.install is not None:
            return self.install.namespace
        return (self.multi_kueue.kueue_namespace if self.multi_kueue else None) or "kueue-system"

    def dispatched(self, namespace: str, queue: str | None) -> bool:
        """Whether a workload queued to LocalQueue ``namespace/queue`` goes to a MultiKueue worker."""
        if self.multi_kueue is None or queue is None:
            return False
        target = next((q.cluster_queue for q in self.local_queues if (q.namespace, q.name) == (namespace, queue)), None)
        return target in self.multi_kueue.cluster_queues
