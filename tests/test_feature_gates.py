"""Alpha gates switch on exactly when an object uses the field that needs them."""

from __future__ import annotations

import pytest

from components.manifests.feature_gates import gates_used_by, required_gates, resolve_gates
from components.manifests.platform import build_manifests
from components.spec import FEATURE_GATES, parse_platform
from tests.conftest import minimal_platform, sample


@pytest.mark.parametrize(
    ("sample_file", "gates"),
    [
        ("kuberay/ray-cluster.embedded-gcs-ft.yaml", {"GCSFaultToleranceEmbeddedStorage"}),
        ("kuberay/ray-cluster.network-policy-deny-all.yaml", {"RayClusterNetworkPolicy"}),
        ("kuberay/ray-cluster.mtls.yaml", {"RayClusterMTLS"}),
        ("kuberay/ray-cluster.historyserver.yaml", {"RayClusterHistoryServer"}),
        ("kuberay/ray-cronjob.sample.yaml", {"RayCronJob"}),
        ("kuberay/ray-cluster.external-redis.yaml", set()),
        ("kuberay/ray-service.sample.yaml", set()),
        ("kuberay/ray-job.sample.yaml", set()),
    ],
)
def test_upstream_samples_need_the_gates_their_fields_need(sample_file: str, gates: set[str]) -> None:
    used = set().union(*(gates_used_by(obj) for obj in sample(sample_file)))
    assert used == gates


def test_fields_are_found_inside_rayservice_rayjob_and_raycronjob() -> None:
    cluster = {"networkPolicy": {"mode": "DenyAll"}}
    for kind, spec in [
        ("RayService", {"rayClusterConfig": cluster}),
        ("RayJob", {"rayClusterSpec": cluster}),
        ("RayCronJob", {"jobTemplate": {"rayClusterSpec": cluster}}),
    ]:
        obj = {"apiVersion": "ray.io/v1", "kind": kind, "metadata": {"name": "x"}, "spec": spec}
        assert "RayClusterNetworkPolicy" in gates_used_by(obj), kind


def test_objects_of_other_kinds_need_no_gates() -> None:
    assert gates_used_by({"apiVersion": "v1", "kind": "ConfigMap", "spec": {"networkPolicy": {}}}) == set()


def test_a_stack_that_uses_nothing_alpha_keeps_upstream_defaults() -> None:
    spec = parse_platform(minimal_platform(), "s.yaml")
    gates = {g["name"]: g["enabled"] for g in build_manifests(spec, "s.yaml").operator_values["featureGates"]}
    assert gates == FEATURE_GATES


def test_a_stack_using_rocksdb_network_policy_and_mtls_gets_exactly_those_gates() -> None:
    data = minimal_platform(prerequisites={"certManager": True})  # mTLS issues through cert-manager
    data["workloads"]["rayClusters"][0].update(
        gcsFaultTolerance={"backend": "rocksdb"}, networkPolicy="DenyAllIngress", mtls=True
    )
    manifests = build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    gates = {g["name"]: g["enabled"] for g in manifests.operator_values["featureGates"]}
    switched_on = {g for g, on in gates.items() if on and not FEATURE_GATES[g]}
    assert switched_on == {"GCSFaultToleranceEmbeddedStorage", "RayClusterNetworkPolicy", "RayClusterMTLS"}
    assert manifests.gates_needed["RayClusterMTLS"] == ["RayCluster/ray/c1"]


def test_explicit_overrides_win() -> None:
    needed = required_gates(sample("kuberay/ray-cluster.mtls.yaml"))
    gates = {
        g["name"]: g["enabled"] for g in resolve_gates({"RayCronJob": True, "RayJobDeletionPolicy": False}, needed, "s")
    }
    assert gates["RayCronJob"] is True and gates["RayJobDeletionPolicy"] is False and gates["RayClusterMTLS"] is True
