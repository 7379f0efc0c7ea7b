"""The alert rules, proven with Prometheus's own promtool: every stack's rule groups pass
``promtool check rules``; ``promtool test rules`` feeds synthetic series and checks that each alert
fires when it should and stays silent on a healthy series; a mutated rule fails its test."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.manifests.monitoring import rule_groups
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from components.spec.monitoring import MonitoringSpec
from tests.conftest import REPO, needs_tool
from tools.stackfile import read_stack_config

SPEC = MonitoringSpec.model_validate({"alerts": {"llm": {"ttftP95Seconds": 2, "tpotP95Seconds": 0.2}}})
PLATFORM = {
    "environment": "prod",
    "workloads": {
        "pools": {"cpu": {"type": "cpu"}},
        "rayClusters": [
            {"name": "a", "namespace": "team", "workerGroups": [{"name": "cpu", "minReplicas": 2, "maxReplicas": 4}]},
            {"name": "b", "namespace": "team", "workerGroups": [{"name": "cpu", "minReplicas": 0, "maxReplicas": 4}]},
        ],
    },
}


def groups_under_test() -> list[dict[str, Any]]:
    workloads = build_manifests(parse_platform(PLATFORM, "t.yaml"), "t.yaml").workloads
    return rule_groups(SPEC, workloads, ["team"], "kuberay-system", has_gpus=True, has_llm=True)


def write_rules(path: Path, groups: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    return path


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([needs_tool("promtool", "prometheus"), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_every_stacks_rules_pass_promtool_check(stack: str, tmp_path: Path) -> None:
    config, _ = read_stack_config(REPO / "stacks" / f"Pulumi.{stack}.yaml", stack)
    built = build_manifests(parse_platform(config["kuberay-platform:platform"], stack), stack)
    (rule,) = [o for o in built.monitoring if o["kind"] == "PrometheusRule"]
    path = write_rules(tmp_path / "rules.yaml", rule["spec"]["groups"])
    result = promtool("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def series(labels: dict[str, str], values: str, name: str) -> dict[str, str]:
    inner = ", ".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


TEAM = {"namespace": "team"}
WORKER = {**TEAM, "ray_workload": "a", "ray_io_group": "cpu", "ray_io_node_type": "worker"}


def scenario(alert: str, inputs: list[dict[str, str]], at: str, expected: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "interval": "1m",
        "input_series": inputs,
        "alert_rule_test": [
            {"eval_time": at, "alertname": alert, "exp_alerts": [{"exp_labels": labels} for labels in expected]}
        ],
    }


def buckets(name: str, labels: dict[str, str], per_minute: dict[str, int]) -> list[dict[str, str]]:
    """A histogram's cumulative buckets growing by ``per_minute`` requests in each (cumulative) bucket."""
    return [series({**labels, "le": le}, f"0+{n}x40", name) for le, n in per_minute.items()]


def scenarios() -> dict[str, dict[str, Any]]:
    provisioned = [
        series({**TEAM, "name": n, "uid": n, "condition": "true"}, "1x40", "kuberay_cluster_condition_provisioned")
        for n in ("a", "b")
    ]
    gcs = {"Component": "gcs_server", **TEAM}
    llm = {**TEAM, "ray_workload": "chat", "model_name": "qwen"}
    return {
        # One of two clusters goes silent: only it fires (absent() over all clusters would stay quiet).
        "gcs-one-of-two": scenario(
            "RayGcsNotReporting",
            [
                *provisioned,
                series({**gcs, "ray_io_cluster": "a"}, "0+6x40", "ray_health_check_rpc_latency_ms_count"),
                series({**gcs, "ray_io_cluster": "b"}, "0+6x5 30x35", "ray_health_check_rpc_latency_ms_count"),
            ],
            "20m",
            [{**TEAM, "name": "b", "severity": "critical"}],
        ),
        "gcs-healthy": scenario(
            "RayGcsNotReporting",
            [
                *provisioned,
                *(
                    series({**gcs, "ray_io_cluster": n}, "0+6x40", "ray_health_check_rpc_latency_ms_count")
                    for n in ("a", "b")
                ),
            ],
            "20m",
            [],
        ),
        # a keeps one of its two workers: below its minimum of 2 for 15 minutes.
        "workers-below-minimum": scenario(
            "RayWorkersBelowMinimum",
            [
                series({**WORKER, "pod": "w1"}, "4x40", "ray_node_cpu_count"),
                series({**WORKER, "pod": "w2"}, "4x3", "ray_node_cpu_count"),
            ],
            "30m",
            [{"namespace": "team", "ray_workload": "a", "ray_io_group": "cpu", "severity": "warning"}],
        ),
        "workers-all-gone": scenario(
            "RayWorkersBelowMinimum",
            [series({**TEAM, "pod": "unrelated"}, "1x40", "up")],
            "20m",
            [{"namespace": "team", "ray_workload": "a", "ray_io_group": "cpu", "severity": "warning"}],
        ),
        "workers-healthy": scenario(
            "RayWorkersBelowMinimum",
            [series({**WORKER, "pod": p}, "4x40", "ray_node_cpu_count") for p in ("w1", "w2")],
            "30m",
            [],
        ),
        "job-failed": scenario(
            "RayJobFailed",
            [
                series(
                    {**TEAM, "name": "j", "uid": "j", "deployment_status": "Failed"},
                    "1x10",
                    "kuberay_job_deployment_status",
                )
            ],
            "5m",
            [{**TEAM, "name": "j", "uid": "j", "deployment_status": "Failed", "severity": "warning"}],
        ),
        "job-complete": scenario(
            "RayJobFailed",
            [
                series(
                    {**TEAM, "name": "j", "uid": "j", "deployment_status": "Complete"},
                    "1x10",
                    "kuberay_job_deployment_status",
                )
            ],
            "5m",
            [],
        ),
        "serve-no-healthy-replica": scenario(
            "RayServeNoHealthyReplicas",
            [
                series(
                    {**TEAM, "ray_workload": "chat", "application": "chat", "replica": "r1"},
                    "1x5 0x35",
                    "ray_serve_deployment_replica_healthy",
                )
            ],
            "20m",
            [{**TEAM, "ray_workload": "chat", "application": "chat", "severity": "critical"}],
        ),
        "serve-healthy": scenario(
            "RayServeNoHealthyReplicas",
            [
                series(
                    {**TEAM, "ray_workload": "chat", "application": "chat", "replica": "r1"},
                    "1x40",
                    "ray_serve_deployment_replica_healthy",
                )
            ],
            "20m",
            [],
        ),
        # 100 requests a minute, 60 of them past 2.5 s: p95 far above 2 s.
        "ttft-high": scenario(
            "RayLlmTimeToFirstTokenHigh",
            buckets(
                "ray_vllm_time_to_first_token_seconds_bucket",
                llm,
                {"0.5": 20, "1": 30, "2.5": 40, "5": 100, "+Inf": 100},
            ),
            "20m",
            [{**llm, "severity": "warning"}],
        ),
        "ttft-healthy": scenario(
            "RayLlmTimeToFirstTokenHigh",
            buckets(
                "ray_vllm_time_to_first_token_seconds_bucket",
                llm,
                {"0.5": 99, "1": 100, "2.5": 100, "5": 100, "+Inf": 100},
            ),
            "20m",
            [],
        ),
    }


def run_tests(tmp_path: Path, groups: list[dict[str, Any]], names: list[str]) -> subprocess.CompletedProcess[str]:
    # Annotations are templates promtool check validates; the unit tests check the expressions.
    bare = copy.deepcopy(groups)
    for group in bare:
        for rule in group["rules"]:
            rule.pop("annotations", None)
    write_rules(tmp_path / "rules.yaml", bare)
    chosen = scenarios()
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "30s", "tests": [chosen[n] for n in names]}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    return promtool("test", "rules", str(tmp_path / "tests.yaml"))


def test_each_alert_fires_when_it_should_and_stays_silent_on_healthy_series(tmp_path: Path) -> None:
    result = run_tests(tmp_path, groups_under_test(), list(scenarios()))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def mutate(groups: list[dict[str, Any]], alert: str, old: str, new: str) -> list[dict[str, Any]]:
    out = copy.deepcopy(groups)
    (rule,) = [r for g in out for r in g["rules"] if r.get("alert") == alert]
    assert old in rule["expr"], rule["expr"]
    rule["expr"] = rule["expr"].replace(old, new)
    return out


@pytest.mark.parametrize(
    ("alert", "old", "new", "scenario_name"),
    [
        ("RayGcsNotReporting", 'condition="true"', 'condition="false"', "gcs-one-of-two"),
        ("RayGcsNotReporting", 'Component="gcs_server"', 'Component="raylet"', "gcs-healthy"),
        ("RayWorkersBelowMinimum", "minimum > on", "minimum < on", "workers-below-minimum"),
        ("RayJobFailed", "Failed|ValidationFailed", "ValidationFailed", "job-failed"),
        ("RayServeNoHealthyReplicas", "== 0", "== 1", "serve-healthy"),
        ("RayLlmTimeToFirstTokenHigh", "> 2", "> 20", "ttft-high"),
    ],
)
def test_a_mutated_rule_fails_its_test(tmp_path: Path, alert: str, old: str, new: str, scenario_name: str) -> None:
    result = run_tests(tmp_path, mutate(groups_under_test(), alert, old, new), [scenario_name])
    assert result.returncode != 0, f"the mutant of {alert} ({old} -> {new}) passed:\n{result.stdout}"
