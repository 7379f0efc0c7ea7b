"""The KubeRay operator's part of the spec: chart, image, scale, namespaces, feature gates."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from components.spec.base import (
    KUBERAY_CHART_REPO,
    KUBERAY_VERSION,
    Duration,
    FeatureGate,
    ImageTag,
    K8sName,
    Model,
    Resources,
)
from components.spec.chart import ChartSource


class ImageRef(Model):
    repository: str
    tag: ImageTag


class OperatorResources(Model):
    requests: Resources
    limits: Resources


class ScaleProfile(Model):
    reconcile_concurrency: int = Field(ge=1)
    kube_client_qps: float = Field(gt=0)
    kube_client_burst: int = Field(ge=1)
    resources: OperatorResources


SCALE_PROFILES: dict[str, ScaleProfile] = {
    # Chart defaults: one reconcile at a time, 100 QPS / 200 burst. The chart notes that about 500
    # Ray pods need roughly 500 MB of operator memory, so 512Mi covers a small platform.
    "small": ScaleProfile(
        reconcile_concurrency=1,
        kube_client_qps=100.0,
        kube_client_burst=200,
        resources=OperatorResources(
            requests=Resources(cpu="100m", memory="512Mi"),
            limits=Resources(cpu="500m", memory="512Mi"),
        ),
    ),
    # KubeRay v1.5 scale test: 100 RayClusters with 10,000 pods created in 3m20s with
    # reconcileConcurrency 20, kubeClient.qps 100, kubeClient.burst 200 (seeds ch. 8.10). Memory
    # follows the chart's ~1 MB per Ray pod; CPU is raised so 20 reconcilers are not throttled.
    "large": ScaleProfile(
        reconcile_concurrency=20,
        kube_client_qps=100.0,
        kube_client_burst=200,
        resources=OperatorResources(
            requests=Resources(cpu="1", memory="10Gi"),
            limits=Resources(cpu="4", memory="10Gi"),
        ),
    ),
}


class ServiceMonitorSpec(Model):
    enabled: bool = False
    """Off by default: it needs the prometheus-operator CRDs in the cluster."""
    interval: Duration = "30s"
    """Prometheus scrape interval (the chart's default)."""
    labels: dict[str, str] = {}
    """Extra labels, e.g. ``release: prometheus`` so a Prometheus selector picks it up."""


class OperatorSpec(Model):
    namespace: K8sName = "kuberay-system"
    chart_version: Literal["1.7.0"] = "1.7.0"
    """Pinned: the KubeRay schemas in ``schemas/`` (``schemas/pins.yaml``) and every value below are for
    this version; a test fails when they disagree."""
    chart: ChartSource = ChartSource(repository=KUBERAY_CHART_REPO)
    """The chart's source; ``chartVersion`` is the version whatever the source."""
    image: ImageRef = ImageRef(repository="quay.io/kuberay/operator", tag=f"v{KUBERAY_VERSION}")
    replicas: int = Field(default=1, ge=1, le=3)
    """Operator pods; more than one only adds a standby (leader election is on)."""
    watch_namespaces: list[K8sName] | None = None
    """Multi-tenant mode: when set, the operator gets namespaced RBAC and watches only these."""
    scale: Literal["small", "large"] = "small"
    """``small``: chart defaults, up to ~500 Ray pods. ``large``: ~100 RayClusters / 10,000 pods."""
    reconcile_concurrency: int | None = Field(default=None, ge=1, le=100)
    """Overrides the scale profile's concurrent reconciles."""
    kube_client_qps: float | None = Field(default=None, gt=0)
    kube_client_burst: int | None = Field(default=None, ge=1)
    resources: OperatorResources | None = None
    """Overrides the scale profile's operator requests/limits."""
    feature_gates: dict[FeatureGate, bool] = {}
    """Explicit overrides; alpha gates are otherwise derived from what the workloads use."""
    service_monitor: ServiceMonitorSpec = ServiceMonitorSpec()
    batch_scheduler: Literal["volcano", "yunikorn", "scheduler-plugins", "kai-scheduler"] | None = None
    """A gang scheduler for every Ray workload the operator manages (chart ``batchScheduler.name``;
    KubeRay 1.7.0 runs one for all of them). Install the scheduler itself first. Workloads tune it with
    ``batchScheduling``; it excludes Kueue-queued workloads."""
    extra_values: dict[str, Any] = {}
    """Escape hatch: raw chart values merged last. Every key must exist in the chart's values."""

    @model_validator(mode="after")
    def _archive_matches_version(self) -> OperatorSpec:
        self.chart.check_archive("kuberay-operator", self.chart_version)
        legacy = self.extra_values.get("batchScheduler")
        if isinstance(legacy, dict) and legacy.get("enabled"):
            raise ValueError(
                "extraValues.batchScheduler.enabled: deprecated, and the operator exits when it is set with a name; "
                "use batchScheduler: volcano"
            )
        return self

    @property
    def profile(self) -> ScaleProfile:
        return SCALE_PROFILES[self.scale]
