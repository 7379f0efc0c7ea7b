"""Ray History Server collectors (KubeRay 1.7.0 ``historyServerOptions``): what the clusters carry,
the alpha gate switched on for them, and what KubeRay would refuse caught before deploy."""

from __future__ import annotations

from typing import Any

import pytest

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.manifests.ray_objects import cluster_spec
from components.spec import parse_platform
from tests.test_workloads import POOLS, PREREQUISITES, job
from tools.schema import Validator

S3 = {
    "collectorImage": "quay.io/kuberay/collector:v1.7.0",
    "storage": {
        "backend": "s3",
        "bucket": "ray-history",
        "region": "eu-west-1",
        "endpoint": "http://minio.storage:9000",
    },
    "credentials": {
        "AWS_ACCESS_KEY_ID": {"name": "history-s3", "key": "access-key"},
        "AWS_SECRET_ACCESS_KEY": {"name": "history-s3", "key": "secret-key"},
    },
}
SECRET = {"namespace": "team", "name": "history-s3", "keys": ["access-key", "secret-key"]}


def cluster(**overrides: Any) -> dict[str, Any]:
    return {"name": "c", "namespace": "team", "workerGroups": [{"name": "cpu", "maxReplicas": 2}], **overrides}


def platform(history: dict[str, Any] | None = S3, **workloads: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "environment": "staging",
        "prerequisites": {**PREREQUISITES, "secrets": [SECRET]},
        "workloads": {"pools": POOLS, **workloads},
    }
    if history is not None:
        data["historyServer"] = history
    return data


def build(data: dict[str, Any]) -> Any:
    return build_manifests(parse_platform(data, "s.yaml"), "s.yaml")


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build(data)
    return info.value.lines


def test_a_workload_with_history_gets_the_collector_and_the_gate() -> None:
    built = build(platform(rayClusters=[cluster(historyServer=True), cluster(name="plain")]))
    with_history, plain = built.workloads
    found = cluster_spec(with_history)
    assert found is not None
    collector = found[1]["historyServerOptions"]["collectorOptions"]
    assert collector["image"] == "quay.io/kuberay/collector:v1.7.0"
    assert collector["env"] == [
        {"name": "STORAGE_BACKEND", "value": "s3"},
        {"name": "S3_BUCKET", "value": "ray-history"},
        {"name": "S3_REGION", "value": "eu-west-1"},
        {"name": "S3_ENDPOINT", "value": "http://minio.storage:9000"},
        {"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef": {"name": "history-s3", "key": "access-key"}}},
        {"name": "AWS_SECRET_ACCESS_KEY", "valueFrom": {"secretKeyRef": {"name": "history-s3", "key": "secret-key"}}},
    ]
    assert "historyServerOptions" not in plain["spec"]
    gates = {g["name"]: g["enabled"] for g in built.operator_values["featureGates"]}
    assert gates["RayClusterHistoryServer"] is True
    assert Validator("1.33").validate(with_history) == []


def test_jobs_and_services_carry_it_in_their_cluster_spec() -> None:
    (obj,) = build(platform(rayJobs=[job(namespace="team", historyServer=True)])).workloads
    assert obj["spec"]["rayClusterSpec"]["historyServerOptions"]["collectorOptions"]["env"][0]["value"] == "s3"


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ({**S3, "storage": {"backend": "s3", "bucket": "b"}}, "storage.region: required for s3"),
        (
            {**S3, "storage": {"backend": "aliyunoss", "bucket": "b", "region": "r"}},
            "storage.endpoint: required for aliyunoss",
        ),
        ({**S3, "storage": {"backend": "azureblob", "bucket": "b"}}, "azureblob needs the storage account URL"),
        ({**S3, "credentials": {"RAY_ROLE": {"name": "x"}}}, "credentials: RAY_ROLE is set by the platform or KubeRay"),
        ({**S3, "collectorImage": "quay.io/kuberay/collector"}, "collectorImage"),
    ],
)
def test_what_kuberay_refuses_is_a_config_error(history: dict[str, Any], message: str) -> None:
    lines = errors(platform(history, rayClusters=[cluster(historyServer=True)]))
    assert any(message in line for line in lines), lines


def test_history_needs_the_platform_storage_and_declared_credentials() -> None:
    lines = errors(platform(None, rayClusters=[cluster(historyServer=True)]))
    assert any("rayClusters[0].historyServer: needs platform.historyServer" in x for x in lines)
    data = platform(rayClusters=[cluster(historyServer=True)])
    data["prerequisites"]["secrets"] = []
    lines = errors(data)
    assert any(
        "historyServer.credentials.AWS_ACCESS_KEY_ID: Secret team/history-s3 is neither created" in x for x in lines
    )
