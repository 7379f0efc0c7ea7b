"""RayMonitoring: the platform's PodMonitors and PrometheusRule (and dashboards), in Prometheus's
namespace, created once the workloads' namespaces exist. The operator's ServiceMonitor comes with
the operator chart (``metrics.serviceMonitor`` values)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.objects import KubernetesObject

RAY_MONITORING_TYPE = "kuberay-platform:index:RayMonitoring"


@dataclass(frozen=True)
class RayMonitoringArgs:
    objects: list[dict[str, Any]]
    after: list[pulumi.Resource] = field(default_factory=list)


class RayMonitoring(pulumi.ComponentResource):
    def __init__(self, name: str, args: RayMonitoringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(RAY_MONITORING_TYPE, name, None, opts)
        self.resources = [
            KubernetesObject(
                f"{name}-{obj['kind'].lower()}-{obj['metadata']['name']}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=args.after),
            )
            for obj in args.objects
        ]
        self.register_outputs({})
