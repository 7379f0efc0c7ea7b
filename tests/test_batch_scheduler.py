"""KubeRay's batch schedulers (Volcano, YuniKorn, scheduler-plugins, KAI): the operator's chart value,
the labels each reads from a workload, what each refuses, and exclusion with Kueue."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.conftest import REPO
from tests.test_workloads import POOLS, PREREQUISITES, job
from tools.chart_values import unknown_keys

CHART_VALUES = json.loads((REPO / "schemas" / "charts" / "kuberay-operator.json").read_text())["values"]


def cluster(**overrides: Any) -> dict[str, Any]:
    return {"name": "c", "namespace": "team", "workerGroups": [{"name": "cpu", "maxReplicas": 2}], **overrides}


def platform(scheduler: str | None, **workloads: Any) -> dict[str, Any]:
    operator = {"batchScheduler": scheduler} if scheduler else {}
    return {
        "environment": "dev",
        "prerequisites": PREREQUISITES,
        "operator": operator,
        "workloads": {"pools": POOLS, **workloads},
    }


def labels_of(data: dict[str, Any]) -> list[dict[str, str]]:
    built = build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    out = []
    for obj in built.workloads:
        meta = obj["spec"]["metadata"] if obj["kind"] == "RayCronJob" else obj["metadata"]
        out.append(
            {
                k: v
                for k, v in meta.get("labels", {}).items()
                if not k.startswith(("app.kubernetes.io", "kuberay-platform"))
            }
        )
    return out


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def test_the_operator_gets_only_the_schedulers_name() -> None:
    built = build_manifests(parse_platform(platform("volcano", rayClusters=[cluster()]), "s.yaml"), "s.yaml")
    assert built.operator_values["batchScheduler"] == {"name": "volcano"}  # never with the deprecated enabled
    assert unknown_keys(built.operator_values, CHART_VALUES) == []
    built = build_manifests(parse_platform(platform(None, rayClusters=[cluster()]), "s.yaml"), "s.yaml")
    assert "batchScheduler" not in built.operator_values
    data = platform(None, rayClusters=[cluster()])
    data["operator"]["extraValues"] = {"batchScheduler": {"enabled": True}}
    assert any("extraValues.batchScheduler.enabled: deprecated" in x for x in errors(data))


@pytest.mark.parametrize(
    ("scheduler", "options", "expected"),
    [
        (
            "volcano",
            {"queue": "research", "priorityClass": "high"},
            {"volcano.sh/queue-name": "research", "ray.io/priority-class-name": "high"},
        ),
        (
            "yunikorn",
            {"queue": "root.research"},
            {
                "yunikorn.apache.org/app-id": "team-c",
                "yunikorn.apache.org/queue": "root.research",
                "ray.io/gang-scheduling-enabled": "true",
            },
        ),
        ("yunikorn", None, {"yunikorn.apache.org/app-id": "team-c"}),
        ("scheduler-plugins", {}, {"ray.io/gang-scheduling-enabled": "true"}),
        ("scheduler-plugins", {"gang": False}, {}),
        ("kai-scheduler", {"queue": "gpu"}, {"kai.scheduler/queue": "gpu"}),
    ],
)
def test_each_scheduler_gets_the_labels_kuberay_reads(
    scheduler: str, options: dict[str, Any] | None, expected: dict[str, str]
) -> None:
    workload = cluster(batchScheduling=options) if options is not None else cluster()
    assert labels_of(platform(scheduler, rayClusters=[workload])) == [expected]


def test_a_scheduled_jobs_labels_go_on_its_job_template() -> None:
    scheduled = job(namespace="team", schedule="0 3 * * *", batchScheduling={"queue": "nightly"})
    assert labels_of(platform("volcano", rayJobs=[scheduled])) == [{"volcano.sh/queue-name": "nightly"}]


@pytest.mark.parametrize(
    ("scheduler", "workloads", "message"),
    [
        (None, {"rayClusters": [cluster(batchScheduling={"queue": "q"})]}, "batchScheduling: needs a batch scheduler"),
        ("yunikorn", {"rayClusters": [cluster(batchScheduling={"priorityClass": "high"})]}, "only Volcano reads it"),
        ("kai-scheduler", {"rayClusters": [cluster()]}, "batchScheduling.queue: required with kai-scheduler"),
        (
            "kai-scheduler",
            {"rayJobs": [job(namespace="team", batchScheduling={"queue": "q"})]},
            "rayJobs[0].submissionMode: KAI-Scheduler refuses RayJobs in K8sJobMode",
        ),
        (
            "scheduler-plugins",
            {"rayJobs": [job(namespace="team")]},
            "scheduler-plugins integration supports only RayClusters",
        ),
    ],
)
def test_what_each_scheduler_refuses_is_a_config_error(
    scheduler: str | None, workloads: dict[str, Any], message: str
) -> None:
    assert any(message in line for line in errors(platform(scheduler, **workloads)))


def test_kueue_and_a_batch_scheduler_exclude_each_other() -> None:
    data = platform("volcano", rayJobs=[job(namespace="team", queue="default")])
    data["prerequisites"] = {**PREREQUISITES, "kueue": True, "localQueues": [{"namespace": "team", "name": "default"}]}
    (line,) = errors(data)
    assert "rayJobs[0].queue: Kueue and the operator's batch scheduler volcano would both gate this workload" in line
    sidecar = job(namespace="team", submissionMode="SidecarMode", batchScheduling={"queue": "q"})
    assert labels_of(platform("kai-scheduler", rayJobs=[sidecar])) == [{"kai.scheduler/queue": "q"}]
