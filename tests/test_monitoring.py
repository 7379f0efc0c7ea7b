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


def test_the_operators_service_monitor_comes_from_the_chart() -> None:
    values = build(platform(rayClusters=[cluster()])).operator_values
    assert values["metrics"]["serviceMonitor"] == {
        "enabled": True,
        "interval": "30s",
        "additionalLabels": {"prometheus": "platform"},
        "namespace": "obs",
    }
    upstream = json.loads((REPO / "schemas" / "charts" / "kuberay-operator.json").read_text())["values"]
    assert unknown_keys(values, upstream) == []


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
