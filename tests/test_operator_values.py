"""Chart values for kuberay-operator 1.7.0: built from the spec, every key one the chart has."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.manifests.operator_values import deep_merge, operator_values
from components.manifests.platform import build_manifests
from components.spec import FEATURE_GATES, OperatorSpec, parse_platform
from tests.conftest import minimal_platform
from tools.chart_values import unknown_keys
from tools.schema_store import load_store


def values_for(**operator: object) -> dict:
    spec = parse_platform(minimal_platform(operator=operator), "s.yaml")
    return build_manifests(spec, "s.yaml").operator_values


@pytest.mark.parametrize(
    "operator",
    [
        pytest.param({}, id="defaults"),
        pytest.param({"scale": "large", "watchNamespaces": ["ray"], "replicas": 2}, id="large-multi-tenant"),
        pytest.param(
            {
                "serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "prometheus"}},
                "resources": {"requests": {"cpu": "200m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
                "extraValues": {"logging": {"stdoutEncoder": "console"}, "env": [{"name": "X", "value": "1"}]},
            },
            id="monitoring-and-extras",
        ),
    ],
)
def test_every_value_key_exists_in_the_upstream_values_file(operator: dict) -> None:
    upstream = load_store().chart_values("kuberay-operator")
    assert upstream is not None
    assert unknown_keys(values_for(**operator), upstream) == []


def test_a_key_the_chart_does_not_have_is_reported() -> None:
    upstream = load_store().chart_values("kuberay-operator")
    assert upstream is not None
    values = values_for(extraValues={"rbac": {"scope": "namespace"}, "metrics": {"serviceMonitor": {"port": 1}}})
    assert unknown_keys(values, upstream) == ["metrics.serviceMonitor.port", "rbac"]


def test_pinned_image_and_scale_defaults() -> None:
    values = values_for()
    assert values["image"] == {"repository": "quay.io/kuberay/operator", "tag": "v1.7.0"}
    assert (values["reconcileConcurrency"], values["kubeClient"]) == (1, {"qps": 100.0, "burst": 200})
    assert values["resources"]["limits"]["memory"] == "512Mi"
    assert "singleNamespaceInstall" not in values and "watchNamespace" not in values


def test_large_scale_profile_is_the_seeds_100_cluster_guidance_with_overrides() -> None:
    values = values_for(scale="large")
    assert (values["reconcileConcurrency"], values["kubeClient"]) == (20, {"qps": 100.0, "burst": 200})
    values = values_for(scale="large", reconcileConcurrency=30, kubeClientBurst=400)
    assert (values["reconcileConcurrency"], values["kubeClient"]) == (30, {"qps": 100.0, "burst": 400})


def test_watch_namespaces_switch_the_operator_to_namespaced_rbac() -> None:
    values = values_for(watchNamespaces=["ray", "team-b"])
    assert values["singleNamespaceInstall"] is True
    assert values["crNamespacedRbacEnable"] is True
    assert values["watchNamespace"] == ["ray", "team-b"]


def test_service_monitor_values() -> None:
    values = values_for(serviceMonitor={"enabled": True, "labels": {"release": "prometheus"}})
    assert values["metrics"]["serviceMonitor"] == {
        "enabled": True,
        "interval": "30s",
        "additionalLabels": {"release": "prometheus"},
    }


def test_the_full_feature_gate_list_is_always_sent() -> None:
    gates = values_for()["featureGates"]
    assert [g["name"] for g in gates] == list(FEATURE_GATES)
    assert {g["name"]: g["enabled"] for g in gates} == FEATURE_GATES


def test_extra_values_merge_maps_and_replace_lists() -> None:
    assert deep_merge({"a": {"b": 1, "c": [1]}, "d": 1}, {"a": {"c": [2]}, "e": 2}) == {
        "a": {"b": 1, "c": [2]},
        "d": 1,
        "e": 2,
    }
    spec = OperatorSpec(extra_values={"kubeClient": {"qps": 50.0}})
    values = operator_values(spec, [])
    assert values["kubeClient"] == {"qps": 50.0, "burst": 200}


def test_switching_off_a_gate_a_workload_needs_is_a_config_error() -> None:
    data = minimal_platform(operator={"featureGates": {"RayClusterMTLS": False}}, prerequisites={"certManager": True})
    data["workloads"]["rayClusters"][0]["mtls"] = True
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    assert info.value.lines == [
        "s.yaml: platform.operator.featureGates.RayClusterMTLS: false, but RayCluster/ray/c1 uses "
        "tlsOptions.enabled: true; remove the override or the field"
    ]
