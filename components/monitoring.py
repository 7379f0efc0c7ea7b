"""Monitoring components: kube-prometheus-stack when the stack installs it (``monitoring.install``),
and RayMonitoring, the platform's PodMonitors, the operator's ServiceMonitor, the PrometheusRule and
the dashboard ConfigMaps, created once the workloads' namespaces (and an installed stack) exist."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.charts import namespaced_chart
from components.manifests.prometheus_stack import GRAFANA_ADMIN_USER, PrometheusStackManifests
from components.objects import ObjectGroup
from components.stack_config import config_secret


class RayMonitoring(ObjectGroup):
    TYPE = "kuberay-platform:index:RayMonitoring"


class PrometheusStack(pulumi.ComponentResource):
    """The monitoring namespace, Grafana's admin Secret (from a config secret) and the pinned
    kube-prometheus-stack chart. Its CRDs are retained on destroy (``crd_transform``): deleting them
    would delete every ServiceMonitor, PodMonitor and PrometheusRule in the cluster."""

    def __init__(
        self, name: str, manifests: PrometheusStackManifests, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("kuberay-platform:index:PrometheusStack", name, None, opts)
        spec = manifests.spec

        def admin_secret(ns: k8s.core.v1.Namespace) -> list[pulumi.Resource]:
            if manifests.grafana_admin is None:
                return []
            meta, key = manifests.grafana_admin
            return [
                k8s.core.v1.Secret(
                    f"{name}-grafana-admin",
                    metadata=meta,
                    type="Opaque",
                    string_data={
                        "admin-user": GRAFANA_ADMIN_USER,
                        "admin-password": config_secret(key, "Grafana's admin password"),
                    },
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[ns]),
                )
            ]

        ns, self.chart = namespaced_chart(
            name,
            manifests.release,
            spec.chart,
            spec.chart_version,
            manifests.namespace,
            manifests.values,
            parent=self,
            inside=admin_secret,
        )
        self.register_outputs({"namespace": ns.metadata.name, "chartVersion": spec.chart_version})
