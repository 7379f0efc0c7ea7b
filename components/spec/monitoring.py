"""Monitoring of the platform (``platform.monitoring``): what the stack's Prometheus scrapes and
alerts on, and the Grafana dashboards it ships. Needs the prometheus-operator CRDs
(``prerequisites.prometheusOperator: true``)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import AnyHttpUrl, Field, model_validator

from components.spec.base import K8sName, Model, Quantity
from components.spec.chart import ChartSource
from components.spec.storage import ConfigOrSecret, SecretKeyRef

PROMETHEUS_STACK_VERSION: Final = "88.6.1"
"""kube-prometheus-stack's chart, pinned with its values in ``schemas/pins.yaml`` (prometheus-operator
v0.93.1, the CRDs' line)."""
PROMETHEUS_STACK_REPOSITORY = "https://prometheus-community.github.io/helm-charts"
PROMETHEUS_STACK_RELEASE = "kube-prometheus-stack"
"""The Helm release name: its Prometheus selects monitors and rules labelled ``release: <release>``."""


class PrometheusSpec(Model):
    namespace: K8sName = "monitoring"
    """Where the PodMonitors, the operator's ServiceMonitor and the PrometheusRule go (the stack's
    Prometheus must select monitors and rules in this namespace)."""
    selector_labels: dict[str, str] = {"release": "kube-prometheus-stack"}
    """The labels the stack's Prometheus selects ServiceMonitors, PodMonitors and PrometheusRules by
    (kube-prometheus-stack: ``release: <helm release>``)."""


class LlmThresholds(Model):
    ttft_p95_seconds: float = Field(default=2.0, gt=0)
    """Alert when a model's 95th-percentile time to first token stays above this."""
    tpot_p95_seconds: float = Field(default=0.2, gt=0)
    """Alert when a model's 95th-percentile time per output token stays above this."""


class AlertThresholds(Model):
    gcs_silent_minutes: int = Field(default=5, ge=1)
    """A provisioned cluster whose GCS has stopped health-checking its nodes for this long."""
    workers_below_minimum_minutes: int = Field(default=15, ge=1)
    """A worker group with fewer alive Ray workers than its ``minReplicas`` for this long."""
    service_not_ready_minutes: int = Field(default=10, ge=1)
    """A RayService not Ready, or serving from zero healthy replicas, for this long."""
    upgrade_stuck_minutes: int = Field(default=60, ge=1)
    """A RayService upgrade still in progress after this long."""
    reconcile_errors_minutes: int = Field(default=15, ge=1)
    """The operator failing reconciles continuously for this long."""
    gpu_memory_percent: float = Field(default=97, gt=0, le=100)
    """GPU framebuffer use (DCGM) above this for 10 minutes. vLLM preallocates 90% by design."""
    llm: LlmThresholds = LlmThresholds()


class DashboardsSpec(Model):
    enabled: bool = True
    namespace: K8sName | None = None
    """Where the dashboard ConfigMaps go (default: the Prometheus namespace)."""
    labels: dict[str, str] = {"grafana_dashboard": "1"}
    """The label Grafana's dashboard sidecar watches (kube-prometheus-stack's default)."""


class PrometheusStorage(Model):
    size: Quantity = "50Gi"
    """Each Prometheus replica's PVC (``volumeClaimTemplate``); it outlives the pod."""
    storage_class: K8sName | None = None
    """Unset: the cluster's default StorageClass."""


class GrafanaInstall(Model):
    admin_password: ConfigOrSecret
    """Grafana's admin password: ``config`` (a Pulumi config secret; the stack creates the Secret with
    ``admin-user: admin``) or ``secret`` (an existing Secret in the monitoring namespace holding that
    key and ``admin-user``). Required: left unset, the Grafana chart generates a random password on
    every render (it cannot ``lookup`` the last one under ``helm template``), so every ``pulumi up``
    would change it."""


class PrometheusStackInstall(Model):
    """kube-prometheus-stack installed by the stack for a bare cluster: the prometheus-operator and its
    CRDs, a Prometheus that selects the platform's monitors and rules (``release:
    kube-prometheus-stack``), Alertmanager, kube-state-metrics, node-exporter and, optionally, Grafana
    whose dashboard sidecar loads the platform's dashboards. Without it,
    ``prerequisites.prometheusOperator: true`` says one is installed already."""

    chart_version: Literal["88.6.1"] = PROMETHEUS_STACK_VERSION
    chart: ChartSource = ChartSource(repository=PROMETHEUS_STACK_REPOSITORY)
    retention: str = Field(default="15d", pattern=r"^[0-9]+(ms|s|m|h|d|w|y)$")
    """How long Prometheus keeps samples."""
    replicas: int = Field(default=1, ge=1, le=5)
    """Prometheus replicas (each scrapes everything; more than one for HA)."""
    storage: PrometheusStorage | None = PrometheusStorage()
    """Persistent TSDB per replica; ``null`` keeps it in an emptyDir (lost with the pod)."""
    alertmanager: bool = True
    node_exporter: bool = True
    """node-exporter on every node (hostNetwork, hostPID, host paths): its namespace then enforces
    Pod Security ``privileged`` instead of ``baseline``."""
    grafana: GrafanaInstall | None = None
    """Grafana with the platform's dashboards; unset: no Grafana."""

    @model_validator(mode="after")
    def _archive_matches_version(self) -> PrometheusStackInstall:
        self.chart.check_archive("kube-prometheus-stack", self.chart_version)
        return self


RUNBOOK_PATH = "docs/runbook.md"


class MonitoringSpec(Model):
    runbook_url: AnyHttpUrl | None = None
    """Where your users read this repository's ``docs/runbook.md`` (e.g. on your Git host); each alert's
    ``runbook_url`` links to its section there. Unset: the path ``docs/runbook.md#<alert>`` in this
    repository."""
    prometheus: PrometheusSpec = PrometheusSpec()
    alerts: AlertThresholds = AlertThresholds()
    dashboards: DashboardsSpec = DashboardsSpec()
    install: PrometheusStackInstall | None = None
    """Install kube-prometheus-stack into ``prometheus.namespace`` (a bare cluster); exclusive with
    ``prerequisites.prometheusOperator``."""

    @model_validator(mode="after")
    def _installed_stack_selects_the_platform(self) -> MonitoringSpec:
        install = self.install
        if install is None:
            return self
        release = {"release": PROMETHEUS_STACK_RELEASE}
        if self.prometheus.selector_labels != release:
            raise ValueError(
                f"prometheus.selectorLabels: the installed kube-prometheus-stack selects release: "
                f"{PROMETHEUS_STACK_RELEASE}; drop selectorLabels"
            )
        if install.grafana is not None and self.dashboards.enabled and len(self.dashboards.labels) != 1:
            raise ValueError("dashboards.labels: the installed Grafana's sidecar watches one label; give exactly one")
        return self


HISTORY_BUCKET_ENV = {
    "s3": "S3_BUCKET",
    "gcs": "GCS_BUCKET",
    "azureblob": "AZURE_STORAGE_CONTAINER",
    "aliyunoss": "OSS_BUCKET",
}
HISTORY_MANAGED_ENV = frozenset(
    [
        "POD_IP",
        "FQ_RAY_IP",
        "RAY_CLUSTER_NAME",
        "RAY_CLUSTER_NAMESPACE",
        "RAY_ROLE",
        "OWNER_KIND",
        "OWNER_NAME",
        "EVENTS_PORT",
    ]
)
"""Set by KubeRay 1.7.0 on the collector; it refuses a spec that sets them (``validation.go``)."""


class HistoryStorage(Model):
    backend: Literal["s3", "gcs", "azureblob", "aliyunoss"]
    bucket: str = Field(min_length=1)
    """The bucket (S3, GCS, OSS) or container (Azure Blob) the collectors write Ray's events to."""
    region: str | None = None
    """S3 and Aliyun OSS: required."""
    endpoint: str | None = None
    """S3: a non-AWS endpoint (MinIO); Aliyun OSS: required; Azure: the storage account URL."""


class HistoryServerSpec(Model):
    """Ray History Server collectors (KubeRay 1.7.0 ``historyServerOptions``, alpha gate
    RayClusterHistoryServer, switched on automatically): a ``ray-history-collector`` sidecar in every
    pod of the workloads with ``historyServer: true`` ships Ray's task, actor, job and node events and
    logs to object storage, where a history server reads them after the cluster is gone."""

    collector_image: str = Field(pattern=r"^[^\s:@]+(:[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64})$")
    """The collector image, pinned (KubeRay publishes none by default; its samples use
    ``quay.io/kuberay/collector``). Build it from ``historyserver/`` at the operator's tag."""
    storage: HistoryStorage
    credentials: dict[str, SecretKeyRef] = {}
    """Collector environment variables from Secrets in each workload's namespace, e.g.
    ``AWS_ACCESS_KEY_ID: {name: history-s3, key: access-key}``; never inline. Not needed with workload
    identity (GKE, IRSA, Azure)."""

    @model_validator(mode="after")
    def _what_kuberay_requires(self) -> HistoryServerSpec:
        s = self.storage
        if s.backend in ("s3", "aliyunoss") and not s.region:
            raise ValueError(f"storage.region: required for {s.backend} (KubeRay refuses the cluster without it)")
        if s.backend == "aliyunoss" and not s.endpoint:
            raise ValueError("storage.endpoint: required for aliyunoss")
        if s.backend == "azureblob" and not s.endpoint and "AZURE_STORAGE_CONNECTION_STRING" not in self.credentials:
            raise ValueError(
                "storage.endpoint: azureblob needs the storage account URL here, or "
                "credentials.AZURE_STORAGE_CONNECTION_STRING"
            )
        managed = sorted(set(self.credentials) & (HISTORY_MANAGED_ENV | {"STORAGE_BACKEND"}))
        if managed:
            raise ValueError(f"credentials: {', '.join(managed)} is set by the platform or KubeRay")
        return self
