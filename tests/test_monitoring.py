"""Monitoring: PodMonitors for Ray heads and workers, the operator's ServiceMonitor through the chart,
the environment's PrometheusRule (each alert documented in the runbook), and what they rely on in the
Ray pods."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from components.errors import ConfigError
from components.manifests.monitoring import worker_minimums
from components.manifests.platform import build_manifests
from components.manifests.ray_objects import pod_groups
from components.spec import parse_platform
from tests.conftest import REPO
from tests.test_workloads import POOLS, PREREQUISITES, job
from tools.chart_values import unknown_keys
from tools.preview import run_preview
from tools.schema import Validator

MONITORING = {"prometheus": {"namespace": "obs", "selectorLabels": {"prometheus": "platform"}}}


def platform(monitoring: dict[str, Any] | None = None, **workloads: Any) -> dict[str, Any]:
    return {
        "environment": "staging",
        "prerequisites": {**PREREQUISITES, "prometheusOperator": True},
        "monitoring": MONITORING if monitoring is None else monitoring,
        "workloads": {"pools": POOLS, **workloads},
    }


def cluster(name: str = "shared", namespace: str = "team", **overrides: Any) -> dict[str, Any]:
    group = {"name": "cpu", "minReplicas": 2, "maxReplicas": 4}
    return {"name": name, "namespace": namespace, "workerGroups": [group], **overrides}


def build(data: dict[str, Any]) -> Any:
    return build_manifests(parse_platform(data, "s.yaml"), "s.yaml")


def alerts(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
    return {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}


def test_pod_monitors_scrape_heads_and_workers_of_the_stacks_namespaces() -> None:
    built = build(platform(rayClusters=[cluster(), cluster("other", "team-b")]))
    monitors = {o["metadata"]["name"]: o for o in built.monitoring if o["kind"] == "PodMonitor"}
    heads, workers = monitors["kuberay-platform-staging-ray-heads"], monitors["kuberay-platform-staging-ray-workers"]
    for monitor in (heads, workers):
        assert monitor["metadata"]["namespace"] == "obs"
        assert monitor["metadata"]["labels"]["prometheus"] == "platform"
        assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["team", "team-b"]}
    assert [e["port"] for e in heads["spec"]["podMetricsEndpoints"]] == ["metrics", "as-metrics", "dash-metrics"]
    assert [e["port"] for e in workers["spec"]["podMetricsEndpoints"]] == ["metrics"]
    assert heads["spec"]["selector"]["matchLabels"]["ray.io/node-type"] == "head"
    relabel = {r["targetLabel"]: r["sourceLabels"][0] for r in workers["spec"]["podMetricsEndpoints"][0]["relabelings"]}
    assert relabel == {
        "ray_io_cluster": "__meta_kubernetes_pod_label_ray_io_cluster",
        "ray_io_group": "__meta_kubernetes_pod_label_ray_io_group",
        "ray_io_node_type": "__meta_kubernetes_pod_label_ray_io_node_type",
        "ray_workload": "__meta_kubernetes_pod_label_kuberay_platform_io_workload",
    }
    validator = Validator("1.33")
    assert [e for o in built.monitoring for e in validator.validate(o)] == []


def test_the_pods_carry_what_the_monitors_read() -> None:
    (obj,) = build(platform(rayClusters=[cluster()])).workloads
    head, worker = list(pod_groups(obj))
    for group in (head, worker):
        assert group.group["template"]["metadata"]["labels"]["kuberay-platform.io/workload"] == "shared"
    ports = {p["name"]: p["containerPort"] for p in head.ray_container["ports"]}
    assert (ports["metrics"], ports["as-metrics"], ports["dash-metrics"]) == (8080, 44217, 44227)


def test_the_operators_service_monitor_selects_the_charts_service() -> None:
    built = build(platform(rayClusters=[cluster()]))
    # Not the chart's: a chart rendering a ServiceMonitor needs the API server to say it is namespaced.
    assert built.operator_values["metrics"]["serviceMonitor"]["enabled"] is False
    (monitor,) = [o for o in built.monitoring if o["kind"] == "ServiceMonitor"]
    assert monitor["metadata"]["namespace"] == "obs" and monitor["metadata"]["labels"]["prometheus"] == "platform"
    assert monitor["spec"] == {
        "endpoints": [{"path": "/metrics", "targetPort": "http", "interval": "30s", "honorLabels": True}],
        "namespaceSelector": {"matchNames": ["kuberay-system"]},
        "selector": {
            "matchLabels": {
                "app.kubernetes.io/name": "kuberay-operator",
                "app.kubernetes.io/instance": "kuberay-operator",
            }
        },
    }
    upstream = json.loads((REPO / "schemas" / "charts" / "kuberay-operator.json").read_text())["values"]
    assert unknown_keys(built.operator_values, upstream) == []
    both = platform(rayClusters=[cluster()])
    both["operator"] = {"serviceMonitor": {"enabled": True}}
    with pytest.raises(ConfigError) as info:
        build(both)
    assert any(
        "operator.serviceMonitor.enabled: monitoring emits the operator's ServiceMonitor" in x for x in info.value.lines
    )


def test_every_alert_is_documented_and_linked_to_its_runbook_section() -> None:
    data = platform(rayClusters=[cluster()], monitoring={**MONITORING, "runbookUrl": "https://git.example/p/runbook"})
    found = alerts(build(data).monitoring)
    headings = {
        m.group(1).lower() for m in re.finditer(r"^### (\w+)$", (REPO / "docs" / "runbook.md").read_text(), re.M)
    }
    assert {"RayGcsNotReporting", "RayWorkersBelowMinimum", "RayJobFailed", "KubeRayReconcileErrors"} <= set(found)
    for name, rule in found.items():
        assert rule["labels"]["severity"] in ("critical", "warning"), name
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], name
        assert rule["annotations"]["runbook_url"] == f"https://git.example/p/runbook#{name.lower()}"
        assert name.lower() in headings, f"docs/runbook.md has no section for {name}"
    monitoring_md = (REPO / "docs" / "monitoring.md").read_text()
    assert all(f"`{name}`" in monitoring_md for name in found)


def test_gpu_and_llm_alerts_only_where_the_stack_has_them() -> None:
    assert not {"RayGpuMemoryNearFull", "RayLlmTimeToFirstTokenHigh"} & set(
        alerts(build(platform(rayClusters=[cluster()])).monitoring)
    )
    result = run_preview("prod")
    assert result.exit_code == 0
    found = alerts(result.manifests)
    assert {"RayGpuMemoryNearFull", "RayLlmTimeToFirstTokenHigh", "RayLlmTimePerOutputTokenHigh"} <= set(found)
    assert "> 1.5" in found["RayLlmTimeToFirstTokenHigh"]["expr"]  # prod's threshold


def test_worker_minimums_leave_out_jobs_and_queued_clusters_and_count_hosts() -> None:
    data = platform(
        rayClusters=[cluster(), cluster("zero", workerGroups=[{"name": "cpu", "minReplicas": 0, "maxReplicas": 2}])],
        rayJobs=[
            job(namespace="team", workerGroups=[{"name": "tpu", "pool": "v6e", "minReplicas": 1, "maxReplicas": 1}])
        ],
    )
    assert worker_minimums(build(data).workloads) == [("team", "shared", "cpu", 2)]
    slices = cluster("slices", workerGroups=[{"name": "tpu", "pool": "v6e", "minReplicas": 2, "maxReplicas": 2}])
    assert worker_minimums(build(platform(rayClusters=[slices])).workloads) == [("team", "slices", "tpu", 8)]


def test_monitoring_needs_the_prometheus_operator() -> None:
    data = platform(rayClusters=[cluster()])
    data["prerequisites"] = PREREQUISITES
    with pytest.raises(ConfigError) as info:
        build(data)
    assert any(
        "platform.prerequisites.prometheusOperator: monitoring needs the prometheus-operator CRDs" in x
        for x in info.value.lines
    )


PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers that are neither functions, keywords,
    label names (inside braces or grouping clauses) nor strings and durations."""
    text = re.sub(r'"[^"]*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        rest = text[m.end() :].lstrip()
        if rest.startswith("(") or m.group(0) in PROMQL_WORDS:
            continue
        names.add(m.group(0))
    return names


def test_metric_names_are_read_from_promql() -> None:
    expr = 'sum by (le, a) (rate(x_bucket{b="c"}[5m])) > on (a) group_left y or vector(0) unless z{q=~"v"}'
    assert metric_names(expr) == {"x_bucket", "y", "z"}


def test_every_dashboard_and_rule_query_reads_a_metric_the_rules_or_exporters_produce() -> None:
    from components.manifests.monitoring import EXPORTED_METRICS

    result = run_preview("prod")
    assert result.exit_code == 0
    (rule,) = [o for o in result.manifests if o["kind"] == "PrometheusRule"]
    rules = [r for g in rule["spec"]["groups"] for r in g["rules"]]
    recorded = {r["record"] for r in rules if "record" in r}
    known = set(EXPORTED_METRICS) | recorded
    boards = [
        json.loads(text)
        for o in result.manifests
        if o["kind"] == "ConfigMap" and o["metadata"].get("labels", {}).get("grafana_dashboard") == "1"
        for text in o["data"].values()
    ]
    assert {b["uid"] for b in boards} == {"kuberay-platform-prod-workloads", "kuberay-platform-prod-serving"}
    queries = [t["expr"] for b in boards for p in b["panels"] for t in p["targets"]]
    assert len(queries) >= 12
    for expr in queries + [r["expr"] for r in rules]:
        names = metric_names(expr)
        assert names or expr.startswith("label_replace("), expr  # only the minimums are constants
        assert names <= known, f"{expr}: unknown metric(s) {sorted(names - known)}"
    # ...and each exporter metric is documented with its source.
    monitoring_md = (REPO / "docs" / "monitoring.md").read_text()
    assert [m for m in EXPORTED_METRICS if m.removesuffix("_bucket").removesuffix("_count") not in monitoring_md] == []


def test_dashboards_are_valid_grafana_json_in_the_sidecars_configmaps() -> None:
    built = build(platform(rayClusters=[cluster()]))
    (config_map,) = [o for o in built.monitoring if o["kind"] == "ConfigMap"]  # no services: no serving board
    assert config_map["metadata"]["namespace"] == "obs" and config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    (text,) = config_map["data"].values()
    board = json.loads(text)
    assert board["uid"] == "kuberay-platform-staging-workloads" and len(board["panels"]) == 6
    assert all(p["datasource"] == {"type": "prometheus", "uid": "${datasource}"} for p in board["panels"])
    assert len({p["id"] for p in board["panels"]}) == 6
    off = build(platform(rayClusters=[cluster()], monitoring={**MONITORING, "dashboards": {"enabled": False}}))
    assert [o for o in off.monitoring if o["kind"] == "ConfigMap"] == []


def test_every_resource_type_is_one_the_provider_accepts() -> None:
    """The provider refuses ``kubernetes:v1:ConfigMap`` ("apiVersion does not have both a group and a
    version"): core objects are ``kubernetes:core/v1:<Kind>`` (found by the real engine)."""
    result = run_preview("prod")
    kinds = {r.type for r in result.resources if r.custom and r.type.startswith("kubernetes:")}
    assert "kubernetes:core/v1:ConfigMap" in kinds
    bad = sorted(t for t in kinds if not re.fullmatch(r"kubernetes:[a-z0-9.-]+/v[0-9a-z]+:[A-Za-z]+", t))
    assert bad == []
