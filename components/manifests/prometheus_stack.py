"""Helm values for kube-prometheus-stack (chart 88.6.1), built from ``monitoring.install`` (pure).

Only what the platform depends on is set; every key exists in the chart's values (checked by the
preview against ``schemas/charts/kube-prometheus-stack.json``):

- the release is ``kube-prometheus-stack``, so its Prometheus selects ServiceMonitors, PodMonitors
  and PrometheusRules labelled ``release: kube-prometheus-stack`` in every namespace (the chart's
  ``*SelectorNilUsesHelmValues: true``), which is what ``monitoring.prometheus.selectorLabels`` puts
  on the platform's own;
- Grafana's admin credentials come from a Secret (``grafana.admin.existingSecret``): the Grafana
  chart otherwise generates a password with ``randAlphaNum`` that ``helm template`` (what Chart v4
  renders with) cannot ``lookup`` back, a new one on every ``pulumi up``;
- Grafana's dashboard sidecar watches the label the platform's dashboard ConfigMaps carry, in all
  namespaces.

The chart's admission-webhook certificate Jobs are Helm hooks; Chart v4 renders hooks as ordinary
resources, so they run once when created (the webhooks are ``failurePolicy: Ignore`` until patched).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.manifests.common import metadata
from components.manifests.namespace import namespace
from components.spec.monitoring import PROMETHEUS_STACK_RELEASE, MonitoringSpec, PrometheusStackInstall

GRAFANA_ADMIN_SECRET = "grafana-admin"
"""The Secret the stack creates from ``grafana.adminPassword.config``."""
GRAFANA_ADMIN_USER = "admin"


@dataclass(frozen=True)
class PrometheusStackManifests:
    spec: PrometheusStackInstall
    release: str
    namespace: dict[str, Any]
    values: dict[str, Any]
    grafana_admin: tuple[dict[str, Any], str] | None
    """(metadata, Pulumi config key) of the Grafana admin Secret the stack creates, if any."""


def grafana_admin_secret(install: PrometheusStackInstall) -> tuple[str, str]:
    """(name, password key) of the Secret Grafana reads its admin credentials from."""
    assert install.grafana is not None
    ref = install.grafana.admin_password.secret
    return (ref.name, ref.key) if ref is not None else (GRAFANA_ADMIN_SECRET, "admin-password")


def prometheus_stack_values(monitoring: MonitoringSpec) -> dict[str, Any]:
    install = monitoring.install
    assert install is not None
    prometheus: dict[str, Any] = {"retention": install.retention, "replicas": install.replicas}
    if install.storage is not None:
        claim: dict[str, Any] = {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": install.storage.size}},
        }
        if install.storage.storage_class:
            claim["storageClassName"] = install.storage.storage_class
        prometheus["storageSpec"] = {"volumeClaimTemplate": {"spec": claim}}
    values: dict[str, Any] = {
        "crds": {"enabled": True},
        "prometheus": {"prometheusSpec": prometheus},
        "alertmanager": {"enabled": install.alertmanager},
        "nodeExporter": {"enabled": install.node_exporter},
        "grafana": {"enabled": install.grafana is not None},
    }
    if install.grafana is not None:
        name, key = grafana_admin_secret(install)
        values["grafana"]["admin"] = {"existingSecret": name, "userKey": "admin-user", "passwordKey": key}
        if monitoring.dashboards.enabled:
            ((label, value),) = monitoring.dashboards.labels.items()
            values["grafana"]["sidecar"] = {
                "dashboards": {"enabled": True, "label": label, "labelValue": value, "searchNamespace": "ALL"}
            }
    return values


def prometheus_stack(monitoring: MonitoringSpec, environment: str, kubernetes_version: str) -> PrometheusStackManifests:
    install = monitoring.install
    assert install is not None
    grafana_config = install.grafana.admin_password.config if install.grafana is not None else None
    return PrometheusStackManifests(
        spec=install,
        release=PROMETHEUS_STACK_RELEASE,
        # node-exporter needs hostNetwork, hostPID and host paths: privileged; baseline otherwise.
        namespace=namespace(
            monitoring.prometheus.namespace,
            environment,
            "monitoring",
            "privileged" if install.node_exporter else "baseline",
            kubernetes_version,
        ),
        values=prometheus_stack_values(monitoring),
        grafana_admin=(
            (metadata(GRAFANA_ADMIN_SECRET, monitoring.prometheus.namespace, environment, "monitoring"), grafana_config)
            if grafana_config
            else None
        ),
    )
