"""Monitoring objects (pure): PodMonitors for Ray heads and workers, the PrometheusRule of the
environment, and the operator ServiceMonitor's chart values.

Metric names are the real ones, checked at their source (see docs/monitoring.md):
- KubeRay operator 1.7.0 (``controllers/ray/metrics``): ``kuberay_cluster_condition_provisioned``,
  ``kuberay_job_deployment_status``, ``kuberay_service_condition_ready``,
  ``kuberay_service_condition_upgrade_in_progress`` (value 1, state in the ``condition`` or
  ``deployment_status`` label; ``namespace``/``name`` of the object, kept by ``honorLabels``), and
  controller-runtime's ``controller_runtime_reconcile_errors_total{controller}`` (controllers
  ``raycluster``, ``rayjob``, ``rayservice``, ``raycronjob``, ...).
- Ray 2.60 (``ray_`` prefix, OpenTelemetry exporter): ``ray_health_check_rpc_latency_ms_count``
  from the GCS (``Component="gcs_server"``; it health-checks every node every few seconds, so its
  rate is the GCS's heartbeat), ``ray_node_cpu_count`` (one series per live Ray node),
  ``ray_serve_deployment_replica_healthy`` (1/0 per Serve replica).
- vLLM 0.29 through Ray Serve LLM (``RayPrometheusStatLogger``: ``vllm:x`` becomes ``ray_vllm_x``):
  ``ray_vllm_time_to_first_token_seconds`` and ``ray_vllm_request_time_per_output_token_seconds``.
- NVIDIA DCGM exporter: ``DCGM_FI_DEV_FB_USED`` / ``DCGM_FI_DEV_FB_FREE`` (MiB).

Ray's own metrics carry no cluster or workload label: the PodMonitors copy the pods' labels
``ray.io/cluster``, ``ray.io/group``, ``ray.io/node-type`` and the platform's
``kuberay-platform.io/workload`` into ``ray_io_cluster``, ``ray_io_group``, ``ray_io_node_type``
and ``ray_workload``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from components.manifests.cluster import WORKLOAD_LABEL
from components.manifests.common import platform_labels
from components.manifests.ray_objects import as_map, number, pod_groups, queue_name
from components.spec.monitoring import RUNBOOK_PATH, MonitoringSpec

API_VERSION = "monitoring.coreos.com/v1"
HEAD_METRICS_PORTS = ("metrics", "as-metrics", "dash-metrics")
"""Ray's metrics agent (8080), the autoscaler (44217) and the dashboard (44227) on the head."""
EXPORTED_METRICS = {
    "kuberay_cluster_condition_provisioned": "KubeRay operator",
    "kuberay_job_deployment_status": "KubeRay operator",
    "kuberay_service_condition_ready": "KubeRay operator",
    "kuberay_service_condition_upgrade_in_progress": "KubeRay operator",
    "controller_runtime_reconcile_errors_total": "KubeRay operator (controller-runtime)",
    "ray_health_check_rpc_latency_ms_count": "Ray GCS (head)",
    "ray_node_cpu_count": "Ray metrics agent (every node)",
    "ray_node_cpu_utilization": "Ray metrics agent (every node)",
    "ray_serve_deployment_replica_healthy": "Ray Serve controller (head)",
    "ray_serve_num_http_requests_total": "Ray Serve proxy",
    "ray_vllm_time_to_first_token_seconds_bucket": "vLLM via Ray Serve LLM (workers)",
    "ray_vllm_request_time_per_output_token_seconds_bucket": "vLLM via Ray Serve LLM (workers)",
    "ray_vllm_num_requests_waiting": "vLLM via Ray Serve LLM (workers)",
    "ray_vllm_kv_cache_usage_perc": "vLLM via Ray Serve LLM (workers)",
    "DCGM_FI_DEV_FB_USED": "NVIDIA dcgm-exporter",
    "DCGM_FI_DEV_FB_FREE": "NVIDIA dcgm-exporter",
    "DCGM_FI_DEV_GPU_UTIL": "NVIDIA dcgm-exporter",
    "ALERTS": "Prometheus (its alerts)",
}
"""Every metric the rules and dashboards read, by exporter (``docs/monitoring.md`` cites each source)."""
RAY_POD_LABELS = {"app.kubernetes.io/created-by": "kuberay-operator"}
"""Set by KubeRay on every Ray pod (``labelPod``), whatever the template says."""
RAY_CONTROLLERS = ("raycluster", "rayjob", "rayservice", "raycronjob", "raycluster-mtls", "networkpolicy")
"""controller-runtime's names for KubeRay 1.7.0's controllers (the lowercase kind, or ``Named``)."""


def _relabel(label: str) -> str:
    return "__meta_kubernetes_pod_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", label)


RELABELINGS = [
    {"sourceLabels": [_relabel(src)], "targetLabel": target, "action": "replace"}
    for src, target in (
        ("ray.io/cluster", "ray_io_cluster"),
        ("ray.io/group", "ray_io_group"),
        ("ray.io/node-type", "ray_io_node_type"),
        (WORKLOAD_LABEL, "ray_workload"),
    )
]


def _labels(spec: MonitoringSpec, environment: str) -> dict[str, str]:
    return {**spec.prometheus.selector_labels, **platform_labels(environment)}


def pod_monitors(spec: MonitoringSpec, namespaces: Sequence[str], environment: str) -> list[dict[str, Any]]:
    """One PodMonitor for heads, one for workers, in Prometheus's namespace, over the stack's namespaces."""
    out = []
    for node_type, ports in (("head", HEAD_METRICS_PORTS), ("worker", ("metrics",))):
        out.append(
            {
                "apiVersion": API_VERSION,
                "kind": "PodMonitor",
                "metadata": {
                    "name": f"kuberay-platform-{environment}-ray-{node_type}s",
                    "namespace": spec.prometheus.namespace,
                    "labels": _labels(spec, environment),
                },
                "spec": {
                    "jobLabel": "ray.io/node-type",
                    "namespaceSelector": {"matchNames": sorted(namespaces)},
                    "selector": {
                        "matchLabels": {
                            "ray.io/node-type": node_type,
                            "app.kubernetes.io/created-by": "kuberay-operator",
                        }
                    },
                    "podMetricsEndpoints": [{"port": port, "relabelings": RELABELINGS} for port in ports],
                },
            }
        )
    return out


OPERATOR_RELEASE = "kuberay-operator"
"""The operator chart's release name (``components.operator``): its Service carries
``app.kubernetes.io/name`` and ``app.kubernetes.io/instance`` of this value."""


def operator_service_monitor(
    spec: MonitoringSpec, operator_namespace: str, interval: str, environment: str
) -> dict[str, Any]:
    """What the chart's ``templates/servicemonitor.yaml`` renders (endpoint ``http`` ``/metrics``,
    ``honorLabels`` so KubeRay's ``namespace``/``name`` labels stay the Ray objects'), in Prometheus's
    namespace with its selector labels."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ServiceMonitor",
        "metadata": {
            "name": f"kuberay-platform-{environment}-operator",
            "namespace": spec.prometheus.namespace,
            "labels": _labels(spec, environment),
        },
        "spec": {
            "endpoints": [{"path": "/metrics", "targetPort": "http", "interval": interval, "honorLabels": True}],
            "namespaceSelector": {"matchNames": [operator_namespace]},
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/name": OPERATOR_RELEASE,
                    "app.kubernetes.io/instance": OPERATOR_RELEASE,
                }
            },
        },
    }


def worker_minimums(workloads: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str, int]]:
    """(namespace, workload, group, Ray nodes) of every worker group that must keep a minimum: groups
    of RayClusters and RayServices with ``minReplicas`` above 0 (times ``numOfHosts``). RayJobs' clusters
    come and go, and a Kueue-queued cluster may be held suspended: neither has a floor to watch."""
    out = []
    for obj in workloads:
        if obj.get("kind") not in ("RayCluster", "RayService") or queue_name(obj) is not None:
            continue
        meta = as_map(obj.get("metadata"))
        for group in pod_groups(obj):
            if group.role != "worker":
                continue
            floor = int(number(group.group.get("minReplicas")) or 0) * int(number(group.group.get("numOfHosts")) or 1)
            if floor > 0:
                out.append((str(meta.get("namespace")), str(meta.get("name")), group.name, floor))
    return out


def _minimum_series(namespace: str, workload: str, group: str, floor: int) -> str:
    expr = f"vector({floor})"
    for label, value in (("namespace", namespace), ("ray_workload", workload), ("ray_io_group", group)):
        expr = f'label_replace({expr}, "{label}", "{value}", "", "")'
    return expr


def _alert(
    spec: MonitoringSpec,
    name: str,
    expr: str,
    minutes: int,
    severity: str,
    summary: str,
    description: str,
) -> dict[str, Any]:
    rule: dict[str, Any] = {"alert": name, "expr": expr}
    if minutes:
        rule["for"] = f"{minutes}m"
    rule["labels"] = {"severity": severity}
    rule["annotations"] = {
        "summary": summary,
        "description": description,
        "runbook_url": f"{str(spec.runbook_url or RUNBOOK_PATH).rstrip('#')}#{name.lower()}",
    }
    return rule


def rule_groups(
    spec: MonitoringSpec,
    workloads: Sequence[Mapping[str, Any]],
    namespaces: Sequence[str],
    operator_namespace: str,
    has_gpus: bool,
    has_llm: bool,
) -> list[dict[str, Any]]:
    """The environment's recording and alerting rules (Prometheus rule groups)."""
    a = spec.alerts
    ns = "|".join(sorted(namespaces))
    sel = f'namespace=~"{ns}"'
    keys = "namespace, ray_workload, ray_io_group"
    recording = [
        {
            "record": "kuberay_platform:ray_workers:alive",
            "expr": f'count by ({keys}) (ray_node_cpu_count{{{sel}, ray_io_node_type="worker"}})',
        }
    ]
    recording += [
        {"record": "kuberay_platform:ray_workers:minimum", "expr": _minimum_series(*m)}
        for m in worker_minimums(workloads)
    ]
    gcs_heartbeat = (
        f"label_replace(sum by (namespace, ray_io_cluster) (rate(ray_health_check_rpc_latency_ms_count{{{sel}, "
        f'Component="gcs_server"}}[5m])) > 0, "name", "$1", "ray_io_cluster", "(.+)")'
    )
    alerts = [
        _alert(
            spec,
            "RayGcsNotReporting",
            f'max by (namespace, name) (kuberay_cluster_condition_provisioned{{{sel}, condition="true"}}) '
            f"unless on (namespace, name) {gcs_heartbeat}",
            a.gcs_silent_minutes,
            "critical",
            "Ray cluster {{ $labels.namespace }}/{{ $labels.name }}: GCS stopped reporting",
            "The GCS of a provisioned Ray cluster has not health-checked its nodes for "
            f"{a.gcs_silent_minutes} minutes: the head is down, hung or unscraped. Other clusters are unaffected.",
        ),
        _alert(
            spec,
            "RayWorkersBelowMinimum",
            f"kuberay_platform:ray_workers:minimum > on ({keys}) "
            f"(kuberay_platform:ray_workers:alive or on ({keys}) kuberay_platform:ray_workers:minimum * 0)",
            a.workers_below_minimum_minutes,
            "warning",
            "{{ $labels.namespace }}/{{ $labels.ray_workload }}: worker group {{ $labels.ray_io_group }} below its "
            "minimum",
            "Fewer Ray workers are alive than the group's minimum of {{ $value }} for "
            f"{a.workers_below_minimum_minutes} minutes.",
        ),
        _alert(
            spec,
            "RayJobFailed",
            f'kuberay_job_deployment_status{{{sel}, deployment_status=~"Failed|ValidationFailed"}} == 1',
            0,
            "warning",
            "RayJob {{ $labels.namespace }}/{{ $labels.name }} failed ({{ $labels.deployment_status }})",
            "The RayJob ended in {{ $labels.deployment_status }}; its cluster follows its deletion rules.",
        ),
        _alert(
            spec,
            "RayServiceNotReady",
            f'kuberay_service_condition_ready{{{sel}, condition="false"}} == 1',
            a.service_not_ready_minutes,
            "critical",
            "RayService {{ $labels.namespace }}/{{ $labels.name }} is not ready",
            f"The RayService has not been Ready for {a.service_not_ready_minutes} minutes.",
        ),
        _alert(
            spec,
            "RayServeNoHealthyReplicas",
            f"sum by (namespace, ray_workload, application) (ray_serve_deployment_replica_healthy{{{sel}}}) == 0",
            a.service_not_ready_minutes,
            "critical",
            "{{ $labels.namespace }}/{{ $labels.ray_workload }}: application {{ $labels.application }} has no healthy "
            "replica",
            "Ray Serve reports zero healthy replicas for the application: its endpoints serve nothing.",
        ),
        _alert(
            spec,
            "RayServiceUpgradeStuck",
            f'kuberay_service_condition_upgrade_in_progress{{{sel}, condition="true"}} == 1',
            a.upgrade_stuck_minutes,
            "warning",
            "RayService {{ $labels.namespace }}/{{ $labels.name }}: upgrade in progress for too long",
            f"The RayService upgrade has been in progress for {a.upgrade_stuck_minutes} minutes.",
        ),
        _alert(
            spec,
            "KubeRayReconcileErrors",
            f'sum by (controller) (rate(controller_runtime_reconcile_errors_total{{namespace="{operator_namespace}", '
            f'controller=~"{"|".join(RAY_CONTROLLERS)}"}}[5m])) > 0',
            a.reconcile_errors_minutes,
            "warning",
            "KubeRay operator: the {{ $labels.controller }} controller keeps failing reconciles",
            f"Reconcile errors for {a.reconcile_errors_minutes} minutes without a break.",
        ),
    ]
    if has_gpus:
        alerts.append(
            _alert(
                spec,
                "RayGpuMemoryNearFull",
                f"100 * DCGM_FI_DEV_FB_USED{{{sel}}} / (DCGM_FI_DEV_FB_USED{{{sel}}} + DCGM_FI_DEV_FB_FREE{{{sel}}}) "
                f"> {a.gpu_memory_percent:g}",
                10,
                "warning",
                "GPU {{ $labels.gpu }} of {{ $labels.namespace }}/{{ $labels.pod }} is {{ $value | humanize }}% full",
                f"GPU memory use has stayed above {a.gpu_memory_percent:g}% for 10 minutes.",
            )
        )
    if has_llm:
        for name, metric, threshold, what in (
            (
                "RayLlmTimeToFirstTokenHigh",
                "ray_vllm_time_to_first_token_seconds_bucket",
                a.llm.ttft_p95_seconds,
                "time to first token",
            ),
            (
                "RayLlmTimePerOutputTokenHigh",
                "ray_vllm_request_time_per_output_token_seconds_bucket",
                a.llm.tpot_p95_seconds,
                "time per output token",
            ),
        ):
            alerts.append(
                _alert(
                    spec,
                    name,
                    f"histogram_quantile(0.95, sum by (le, namespace, ray_workload, model_name) "
                    f"(rate({metric}{{{sel}}}[5m]))) > {threshold:g}",
                    10,
                    "warning",
                    "{{ $labels.namespace }}/{{ $labels.ray_workload }}: model {{ $labels.model_name }} p95 "
                    f"{what} above {threshold:g}s",
                    f"The 95th percentile {what} has been {{{{ $value | humanizeDuration }}}} for 10 minutes "
                    f"(threshold {threshold:g}s).",
                )
            )
    return [
        {"name": "kuberay-platform.recording", "interval": "30s", "rules": recording},
        {"name": "kuberay-platform.alerts", "interval": "30s", "rules": alerts},
    ]


def prometheus_rule(spec: MonitoringSpec, groups: list[dict[str, Any]], environment: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "PrometheusRule",
        "metadata": {
            "name": f"kuberay-platform-{environment}",
            "namespace": spec.prometheus.namespace,
            "labels": _labels(spec, environment),
        },
        "spec": {"groups": groups},
    }
