"""The stack spec: promised defaults, and one clear line per mistake."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.spec import FEATURE_GATES, SCALE_PROFILES, PlatformSpec, parse_platform
from components.spec.platform import models_in
from tests.conftest import minimal_platform

SOURCE = "stacks/Pulumi.test.yaml"


def errors_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_platform(data, SOURCE)
    return info.value.lines


def test_the_promised_defaults_hold() -> None:
    spec = parse_platform(minimal_platform(), SOURCE)
    op = spec.operator
    assert (op.namespace, op.chart_version, op.image.tag, op.scale) == ("kuberay-system", "1.7.0", "v1.7.0", "small")
    assert op.watch_namespaces is None and op.feature_gates == {} and op.service_monitor.enabled is False
    assert spec.kubernetes_version == "1.33"
    rc = spec.workloads.ray_clusters[0]
    assert (rc.ray_version, rc.auth.mode, rc.image.reference(rc.ray_version)) == (
        "2.60.0",
        "token",
        "rayproject/ray:2.60.0-py311",
    )
    assert rc.profile == "training" and rc.autoscaler.version == "v2"
    scaling = rc.autoscaling()
    assert (scaling.min_replicas, scaling.upscaling_mode, scaling.idle_timeout_seconds) == (0, "Conservative", 300)
    assert (rc.head.resources.cpu, rc.head.resources.memory) == ("2", "8Gi")
    group = rc.worker_groups[0]
    assert (group.pool, group.floor(rc.profile), group.initial(rc.profile)) == ("cpu", 0, 0)
    assert (group.resources.cpu, group.resources.memory) == ("4", "16Gi")
    assert list(spec.workloads.pools) == ["cpu"]


def test_scale_profiles_follow_the_chart_and_the_seeds() -> None:
    small, large = SCALE_PROFILES["small"], SCALE_PROFILES["large"]
    assert (small.reconcile_concurrency, small.kube_client_qps, small.kube_client_burst) == (1, 100.0, 200)
    # KubeRay v1.5 scale test: 100 RayClusters / 10,000 pods with 20 / 100 / 200.
    assert (large.reconcile_concurrency, large.kube_client_qps, large.kube_client_burst) == (20, 100.0, 200)


def test_every_kuberay_1_7_feature_gate_is_known_with_its_upstream_default() -> None:
    beta = {g for g, on in FEATURE_GATES.items() if on}
    alpha = {g for g, on in FEATURE_GATES.items() if not on}
    assert beta == {
        "RayClusterStatusConditions",
        "RayJobDeletionPolicy",
        "RayMultiHostIndexing",
        "RayServiceIncrementalUpgrade",
    }
    assert alpha == {
        "RayCronJob",
        "SidecarSubmitterRestart",
        "RayClusterNetworkPolicy",
        "GCSFaultToleranceEmbeddedStorage",
        "RayClusterMTLS",
        "RayClusterHistoryServer",
        "KubernetesWAS",
    }
    assert "GCSFaultToleranceActivePassiveHead" not in FEATURE_GATES


def test_a_misspelled_key_names_file_path_and_suggests_the_right_key() -> None:
    data = minimal_platform(operator={"scal": "large"})
    assert errors_of(data) == [
        f"{SOURCE}: platform.operator.scal: unknown key; did you mean 'scale'? (expected one of: batchScheduler, "
        "chart, chartVersion, extraValues, featureGates, image, kubeClientBurst, kubeClientQps, namespace, "
        "reconcileConcurrency, replicas, resources, scale, serviceMonitor, watchNamespaces)"
    ]


def test_an_unknown_key_inside_a_list_item_is_located_by_index() -> None:
    data = minimal_platform()
    data["workloads"]["rayClusters"][0]["workerGroups"][0]["maxReplica"] = 3
    (line,) = errors_of(data)
    assert line.startswith(f"{SOURCE}: platform.workloads.rayClusters[0].workerGroups[0].maxReplica: unknown key")
    assert "did you mean 'maxReplicas'?" in line


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param(
            {"operator": {"replicas": "two"}},
            "platform.operator.replicas: Input should be a valid integer, unable to parse string as an integer "
            "(got 'two')",
            id="wrong-type",
        ),
        pytest.param(
            {"operator": {"scale": "huge"}},
            "platform.operator.scale: Input should be 'small' or 'large' (got 'huge')",
            id="invalid-enum",
        ),
        pytest.param(
            {"kubernetesVersion": 1.33},
            'platform.kubernetesVersion: expected text, got the number 1.33; quote it in YAML (e.g. "1.30")',
            id="unquoted-version",
        ),
        pytest.param(
            {"kubernetesVersion": "v1.33"},
            "platform.kubernetesVersion: expected a Kubernetes minor version such as \"1.33\" (quoted) (got 'v1.33')",
            id="pattern",
        ),
        pytest.param(
            {"environment": "qa"},
            "platform.environment: Input should be 'dev', 'staging' or 'prod' (got 'qa')",
            id="invalid-environment",
        ),
        pytest.param(
            {"operator": {"featureGates": {"RayClusterMtls": True}}},
            "platform.operator.featureGates.RayClusterMtls: unknown key; expected 'RayClusterStatusConditions', ",
            id="unknown-feature-gate",
        ),
    ],
)
def test_wrong_values_name_the_key_and_what_is_expected(patch: dict, expected: str) -> None:
    lines = errors_of(minimal_platform(**patch))
    assert len(lines) == 1
    assert lines[0].startswith(f"{SOURCE}: {expected}")


def test_worker_group_bounds_name_the_offending_key() -> None:
    data = minimal_platform()
    data["workloads"]["rayClusters"][0]["workerGroups"] = [{"name": "cpu", "minReplicas": 2, "maxReplicas": 1}]
    assert errors_of(data) == [
        f"{SOURCE}: platform.workloads.rayClusters[0].workerGroups[0].maxReplicas: must be >= minReplicas (got 1 < 2)"
    ]


def test_several_mistakes_give_one_line_each() -> None:
    data = minimal_platform(operator={"scale": "huge", "namespaces": ["a"]}, kubernetesVersion="v1.33")
    lines = errors_of(data)
    assert len(lines) == 3
    assert all(line.startswith(f"{SOURCE}: platform.") for line in lines)


def test_a_workload_outside_the_watched_namespaces_is_rejected() -> None:
    data = minimal_platform(operator={"watchNamespaces": ["team-a"]})
    assert errors_of(data) == [
        f"{SOURCE}: platform.workloads.rayClusters[0].namespace: 'ray' is not watched by the operator; "
        "add it to operator.watchNamespaces (now ['team-a'])"
    ]


def test_the_spec_is_not_a_mapping() -> None:
    assert errors_of(["not", "a", "map"]) == [f"{SOURCE}: platform: expected a mapping, got list"]  # type: ignore[arg-type]


def test_models_reject_unknown_keys_everywhere() -> None:
    """Every model in the spec forbids extra keys (a typo never passes silently)."""
    seen = set()

    def walk(model: type) -> None:
        if model in seen:
            return
        seen.add(model)
        assert model.model_config.get("extra") == "forbid", model.__name__
        for field in model.model_fields.values():
            for inner in models_in(field.annotation):
                walk(inner)

    walk(PlatformSpec)
    assert len(seen) > 5


def test_a_value_under_a_secret_named_key_is_never_echoed() -> None:
    data = minimal_platform()
    data["gcsStorage"] = {
        "managed": {"type": "external", "address": "redis.example.com:6379", "passwordSecret": "hunter2"}
    }
    (line,) = errors_of(data)
    assert line.startswith(f"{SOURCE}: platform.gcsStorage.managed.passwordSecret:")
    assert "hunter2" not in line and "hidden" in line


def test_numbers_are_accepted_as_quantities() -> None:
    data = minimal_platform()
    data["workloads"]["rayClusters"][0]["workerGroups"][0]["resources"] = {"cpu": 24, "memory": "96Gi"}
    assert parse_platform(data, SOURCE).workloads.ray_clusters[0].worker_groups[0].resources.cpu == "24"


def test_workload_names_must_be_dns_1035_labels() -> None:
    data = minimal_platform()
    data["workloads"]["rayClusters"][0]["name"] = "1cluster"
    (line,) = errors_of(data)
    assert line.startswith(f"{SOURCE}: platform.workloads.rayClusters[0].name: expected a DNS-1035 label")


def test_an_unknown_application_type_says_which_types_exist() -> None:
    data = minimal_platform()
    data["workloads"]["rayServices"] = [
        {
            "name": "s",
            "namespace": "ray",
            "workerGroups": [{"name": "cpu", "maxReplicas": 2}],
            "applications": [{"type": "lml", "name": "a", "models": [{"modelId": "m"}]}],
        }
    ]
    assert errors_of(data) == [
        f"{SOURCE}: platform.workloads.rayServices[0].applications[0].type: "
        "unknown type 'lml' (expected one of: 'serve', 'llm')"
    ]
