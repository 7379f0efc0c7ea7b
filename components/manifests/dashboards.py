"""The platform's own Grafana dashboards, as ConfigMaps Grafana's dashboard sidecar loads (pure).

Two compact dashboards: **KubeRay platform: workloads** (clusters, workers against their minimum,
jobs, operator health, firing alerts) and **KubeRay platform: serving and GPUs** (RayServices,
Serve replicas and traffic, GPU use, LLM latency). Every query reads a metric the platform's rules
record or an exporter named in ``docs/monitoring.md`` exports (a test checks each panel); Ray's own
detailed dashboards work beside them on the same series.
"""

from __future__ import annotations

import json
from typing import Any

from components.manifests.common import platform_labels
from components.spec.monitoring import MonitoringSpec

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _panel(
    title: str, exprs: list[tuple[str, str]], x: int, y: int, kind: str = "timeseries", unit: str = ""
) -> dict[str, Any]:
    panel: dict[str, Any] = {
        "type": kind,
        "title": title,
        "datasource": DATASOURCE,
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "targets": [
            {"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(exprs)
        ],
    }
    if unit:
        panel["fieldConfig"] = {"defaults": {"unit": unit}, "overrides": []}
    return panel


def _dashboard(uid: str, title: str, namespaces: list[str], panels: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "uid": uid,
        "title": title,
        "tags": ["kuberay-platform"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
                {
                    "name": "namespace",
                    "type": "custom",
                    "label": "Namespace",
                    "query": ",".join(namespaces),
                    "multi": True,
                    "includeAll": True,
                    "current": {"text": "All", "value": "$__all"},
                },
            ]
        },
        "panels": [{**p, "id": i + 1} for i, p in enumerate(panels)],
    }


def workloads_dashboard(environment: str, namespaces: list[str], operator_namespace: str) -> dict[str, Any]:
    ns = 'namespace=~"$namespace"'
    return _dashboard(
        f"kuberay-platform-{environment}-workloads",
        f"KubeRay platform ({environment}): workloads",
        namespaces,
        [
            _panel(
                "Ray clusters (provisioned / not yet)",
                [
                    (
                        f'count by (namespace) (kuberay_cluster_condition_provisioned{{{ns}, condition="true"}})',
                        "{{namespace}} provisioned",
                    ),
                    (
                        f'count by (namespace) (kuberay_cluster_condition_provisioned{{{ns}, condition="false"}})',
                        "{{namespace}} pending",
                    ),
                ],
                0,
                0,
            ),
            _panel(
                "Live workers against their minimum",
                [
                    (f"kuberay_platform:ray_workers:alive{{{ns}}}", "{{ray_workload}}/{{ray_io_group}} alive"),
                    (f"kuberay_platform:ray_workers:minimum{{{ns}}}", "{{ray_workload}}/{{ray_io_group}} minimum"),
                ],
                12,
                0,
            ),
            _panel(
                "RayJobs by deployment status",
                [(f"count by (deployment_status) (kuberay_job_deployment_status{{{ns}}})", "{{deployment_status}}")],
                0,
                8,
            ),
            _panel(
                "Operator reconcile errors per second",
                [
                    (
                        "sum by (controller) (rate(controller_runtime_reconcile_errors_total"
                        f'{{namespace="{operator_namespace}"}}[5m]))',
                        "{{controller}}",
                    )
                ],
                12,
                8,
            ),
            _panel(
                "Firing platform alerts",
                [('ALERTS{alertstate="firing", alertname=~"Ray.*|KubeRay.*"}', "{{alertname}} {{namespace}}")],
                0,
                16,
                kind="table",
            ),
            _panel(
                "Ray node CPU use",
                [(f"avg by (ray_workload) (ray_node_cpu_utilization{{{ns}}})", "{{ray_workload}}")],
                12,
                16,
                unit="percent",
            ),
        ],
    )


def serving_dashboard(environment: str, namespaces: list[str]) -> dict[str, Any]:
    ns = 'namespace=~"$namespace"'
    return _dashboard(
        f"kuberay-platform-{environment}-serving",
        f"KubeRay platform ({environment}): serving and GPUs",
        namespaces,
        [
            _panel(
                "RayServices not ready",
                [(f'kuberay_service_condition_ready{{{ns}, condition="false"}}', "{{namespace}}/{{name}}")],
                0,
                0,
            ),
            _panel(
                "Healthy Serve replicas per application",
                [
                    (
                        f"sum by (ray_workload, application) (ray_serve_deployment_replica_healthy{{{ns}}})",
                        "{{ray_workload}}/{{application}}",
                    )
                ],
                12,
                0,
            ),
            _panel(
                "Serve requests per second by status",
                [
                    (
                        f"sum by (ray_workload, status_code) (rate(ray_serve_num_http_requests_total{{{ns}}}[5m]))",
                        "{{ray_workload}} {{status_code}}",
                    )
                ],
                0,
                8,
                unit="reqps",
            ),
            _panel(
                "GPU utilization and memory",
                [
                    (f"avg by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL{{{ns}}})", "{{pod}} util %"),
                    (
                        f"100 * sum by (namespace, pod) (DCGM_FI_DEV_FB_USED{{{ns}}}) / sum by (namespace, pod) "
                        f"(DCGM_FI_DEV_FB_USED{{{ns}}} + DCGM_FI_DEV_FB_FREE{{{ns}}})",
                        "{{pod}} memory %",
                    ),
                ],
                12,
                8,
                unit="percent",
            ),
            _panel(
                "LLM p95 time to first token and per output token",
                [
                    (
                        "histogram_quantile(0.95, sum by (le, ray_workload, model_name) "
                        f"(rate(ray_vllm_time_to_first_token_seconds_bucket{{{ns}}}[5m])))",
                        "{{model_name}} TTFT",
                    ),
                    (
                        "histogram_quantile(0.95, sum by (le, ray_workload, model_name) "
                        f"(rate(ray_vllm_request_time_per_output_token_seconds_bucket{{{ns}}}[5m])))",
                        "{{model_name}} TPOT",
                    ),
                ],
                0,
                16,
                unit="s",
            ),
            _panel(
                "LLM queue and KV cache",
                [
                    (f"sum by (model_name) (ray_vllm_num_requests_waiting{{{ns}}})", "{{model_name}} waiting"),
                    (f"max by (model_name) (ray_vllm_kv_cache_usage_perc{{{ns}}})", "{{model_name}} KV cache used"),
                ],
                12,
                16,
            ),
        ],
    )


def dashboard_config_maps(
    spec: MonitoringSpec, environment: str, namespaces: list[str], operator_namespace: str, serving: bool
) -> list[dict[str, Any]]:
    if not spec.dashboards.enabled:
        return []
    boards = [workloads_dashboard(environment, namespaces, operator_namespace)]
    if serving:
        boards.append(serving_dashboard(environment, namespaces))
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": board["uid"],
                "namespace": spec.dashboards.namespace or spec.prometheus.namespace,
                "labels": {**spec.dashboards.labels, **platform_labels(environment)},
            },
            "data": {f"{board['uid']}.json": json.dumps(board, indent=1, sort_keys=True)},
        }
        for board in boards
    ]
