"""Monitoring of the platform (``platform.monitoring``): what the stack's Prometheus scrapes and
alerts on, and the Grafana dashboards it ships. Needs the prometheus-operator CRDs
(``prerequisites.prometheusOperator: true``)."""

from __future__ import annotations

from pydantic import AnyHttpUrl, Field

from components.spec.base import K8sName, Model


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


RUNBOOK_PATH = "docs/runbook.md"


class MonitoringSpec(Model):
    runbook_url: AnyHttpUrl | None = None
    """Where your users read this repository's ``docs/runbook.md`` (e.g. on your Git host); each alert's
    ``runbook_url`` links to its section there. Unset: the path ``docs/runbook.md#<alert>`` in this
    repository."""
    prometheus: PrometheusSpec = PrometheusSpec()
    alerts: AlertThresholds = AlertThresholds()
    dashboards: DashboardsSpec = DashboardsSpec()
