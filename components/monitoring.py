"""RayMonitoring: the platform's PodMonitors, the operator's ServiceMonitor, the PrometheusRule and
the dashboard ConfigMaps, created once the workloads' namespaces exist."""

from __future__ import annotations

from components.objects import ObjectGroup


class RayMonitoring(ObjectGroup):
    TYPE = "kuberay-platform:index:RayMonitoring"
