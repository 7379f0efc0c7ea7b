"""What a real cluster needs beyond valid objects: install order, adoption, ownership, replacement."""

from __future__ import annotations

from typing import Any

import pulumi

from components.charts import CRD_TYPE
from components.manifests.lifecycle import AUTOSCALED_REPLICAS, PATCH_FORCE, WAIT_FOR, immutable_paths, lifecycle
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.conftest import REPO, minimal_platform
from tests.test_workloads import job, llm_service
from tools.engine import RecordedResource, run_program

CHART = "kubernetes:helm.sh/v4:Chart"
NAMESPACE = "kubernetes:core/v1:Namespace"


def run(platform: dict[str, Any]) -> list[RecordedResource]:
    return run_program(REPO, "test", {"kuberay-platform:platform": platform})


def one(resources: list[RecordedResource], type_: str) -> RecordedResource:
    (found,) = [r for r in resources if r.type == type_]
    return found


def namespaces(resources: list[RecordedResource]) -> dict[str, RecordedResource]:
    return {r.inputs["metadata"]["name"]: r for r in resources if r.type == NAMESPACE}


def multi_tenant(**extra: Any) -> dict[str, Any]:
    data = minimal_platform(operator={"watchNamespaces": ["ray", "ray-idle"]}, **extra)
    return data


# --- 1. Namespaces exist before the chart renders Roles into them ------------------------------


def test_watched_namespaces_exist_before_the_chart_even_without_workloads() -> None:
    resources = run(multi_tenant())
    found = namespaces(resources)
    assert {"ray", "ray-idle", "kuberay-system"} <= set(found)  # ray-idle has no workload
    chart = one(resources, CHART)
    assert {found["ray"].urn, found["ray-idle"].urn, found["kuberay-system"].urn} <= set(chart.dependencies)


def test_declared_namespaces_exist_before_their_first_workload() -> None:
    found = namespaces(run(minimal_platform(namespaces=["team-a"])))
    assert "team-a" in found


def test_every_ray_object_waits_for_the_operator_and_its_namespace() -> None:
    resources = run(multi_tenant())
    cluster = one(resources, "kubernetes:ray.io/v1:RayCluster")
    assert one(resources, CHART).urn in cluster.dependencies
    assert namespaces(resources)["ray"].urn in cluster.dependencies


# --- 2. Retained CRDs are adopted on the next pulumi up -------------------------------------------


def test_only_the_crds_are_retained_and_force_adopted_by_the_stacks_provider() -> None:
    resources = run(minimal_platform())
    # pulumi-kubernetes 4.25.0 creates with a server-side apply PATCH (an upsert): the stack's own
    # provider adopts retained CRDs, so no second provider is registered.
    assert not [r for r in resources if r.type.startswith("pulumi:providers:")]
    chart = one(resources, CHART)
    (transform,) = chart.transforms
    crd = pulumi.ResourceTransformArgs(
        True, CRD_TYPE, "rayclusters.ray.io", {"metadata": {"name": "rayclusters.ray.io"}}, pulumi.ResourceOptions()
    )
    result = transform(crd)
    assert result is not None and result.opts.retain_on_delete is True
    assert result.props["metadata"]["annotations"] == {"pulumi.com/patchForce": "true"}
    role = pulumi.ResourceTransformArgs(
        True, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "kuberay-operator", {}, pulumi.ResourceOptions()
    )
    assert transform(role) is None


def test_the_pinned_python_sdk_is_the_provider_release_the_toolchain_builds() -> None:
    from importlib.metadata import version

    from tools.toolchain import KUBERNETES

    assert "v" + version("pulumi-kubernetes") == KUBERNETES.version


# --- 7. The Ray autoscaler owns replicas of standalone RayClusters ---------------------------------


def test_an_autoscaled_raycluster_leaves_replicas_to_the_autoscaler() -> None:
    cluster = one(run(minimal_platform()), "kubernetes:ray.io/v1:RayCluster")
    assert cluster.inputs["spec"]["enableInTreeAutoscaling"] is True
    assert cluster.options["ignoreChanges"] == [AUTOSCALED_REPLICAS]
    assert cluster.inputs["metadata"]["annotations"][PATCH_FORCE] == "true"


def test_a_fixed_size_raycluster_and_services_keep_replicas() -> None:
    data = minimal_platform()
    data["workloads"]["rayClusters"][0]["autoscaler"] = {"enabled": False}
    cluster = one(run(data), "kubernetes:ray.io/v1:RayCluster")
    assert "ignoreChanges" not in cluster.options
    assert PATCH_FORCE not in cluster.inputs["metadata"].get("annotations", {})


# --- 8. Namespaces that hold data are protected in prod -----------------------------------------


def test_prod_namespaces_are_protected_and_dev_ones_are_not() -> None:
    prod = namespaces(run(minimal_platform(environment="prod")))
    assert prod["ray"].options.get("protect") is True
    assert "protect" not in prod["kuberay-system"].options  # the operator's holds no user data
    dev = namespaces(run(minimal_platform()))
    assert "protect" not in dev["ray"].options
    opted_out = namespaces(run(minimal_platform(environment="prod", protectNamespaces=False)))
    assert "protect" not in opted_out["ray"].options


# --- 9. Custom-resource lifecycle ------------------------------------------------------------------


def test_a_changed_rayjob_is_replaced_not_updated_in_place() -> None:
    from tests.test_workloads import platform

    resources = run(platform(environment="dev", rayJobs=[job()]))
    ray_job = one(resources, "kubernetes:ray.io/v1:RayJob")
    assert ray_job.options["replaceOnChanges"] == ["spec"]
    assert ray_job.options["deleteBeforeReplace"] is True


def test_immutable_fields_force_replacement() -> None:
    from tests.test_workloads import platform

    spec = parse_platform(platform(environment="prod", rayServices=[llm_service()]), "s.yaml")
    (service,) = build_manifests(spec, "s.yaml").workloads
    assert immutable_paths(service) == [
        "spec.managedBy",
        "spec.rayClusterConfig.gcsFaultToleranceOptions.backend",
        "spec.rayClusterConfig.managedBy",
    ]
    cron = {"apiVersion": "ray.io/v1", "kind": "RayCronJob", "spec": {"jobTemplate": {"rayClusterSpec": {}}}}
    assert immutable_paths(cron) == [
        "spec.jobTemplate.managedBy",
        "spec.jobTemplate.rayClusterSpec.gcsFaultToleranceOptions.backend",
        "spec.jobTemplate.rayClusterSpec.managedBy",
    ]


def test_ray_objects_are_awaited_on_the_state_kuberay_reports() -> None:
    from tests.test_workloads import platform

    spec = parse_platform(platform(environment="prod", rayServices=[llm_service()], rayJobs=[job()]), "s.yaml")
    by_kind = {o["kind"]: o for o in build_manifests(spec, "s.yaml").workloads}
    assert by_kind["RayService"]["metadata"]["annotations"][WAIT_FOR] == "condition=Ready"
    assert by_kind["RayJob"]["metadata"]["annotations"][WAIT_FOR] == "jsonpath={.status.jobDeploymentStatus}"
    assert lifecycle(by_kind["RayService"]).timeout_minutes == 45
    cluster = build_manifests(parse_platform(minimal_platform(), "s.yaml"), "s.yaml").workloads[0]
    assert cluster["metadata"]["annotations"][WAIT_FOR] == "condition=HeadPodReady"


def test_wait_for_ready_off_awaits_nothing_but_keeps_replacement_and_timeouts() -> None:
    from tests.test_workloads import platform

    config = platform(environment="prod", rayServices=[llm_service()], rayJobs=[job()])
    config["workloads"]["waitForReady"] = False
    workloads = build_manifests(parse_platform(config, "s.yaml"), "s.yaml").workloads
    assert workloads and all(WAIT_FOR not in o["metadata"].get("annotations", {}) for o in workloads)
    by_kind = {o["kind"]: o for o in workloads}
    assert lifecycle(by_kind["RayJob"], wait_for_ready=False).replace_on_changes == ["spec"]


def test_a_raycronjob_deletes_its_finished_rayjobs() -> None:
    from tests.test_workloads import platform

    spec = parse_platform(platform(environment="dev", rayJobs=[job(schedule="0 3 * * *")]), "s.yaml")
    (cron,) = build_manifests(spec, "s.yaml").workloads
    rules = cron["spec"]["jobTemplate"]["deletionStrategy"]["deletionRules"]
    self_rules = {
        (r["condition"].get("jobStatus") or r["condition"].get("jobDeploymentStatus")): r["condition"]["ttlSeconds"]
        for r in rules
        if r["policy"] == "DeleteSelf"
    }
    assert self_rules == {"SUCCEEDED": 86400, "FAILED": 604800, "Failed": 604800}
    for rule in rules:  # KubeRay: per condition, Workers <= Cluster <= Self
        key = rule["condition"].get("jobStatus") or rule["condition"].get("jobDeploymentStatus")
        assert rule["condition"]["ttlSeconds"] <= self_rules[key]
    assert WAIT_FOR not in cron["metadata"].get("annotations", {})  # no status before its first run


def test_the_internal_gateway_exists_before_its_rayservice() -> None:
    from tests.test_workloads import platform

    resources = run(platform(environment="prod", rayServices=[llm_service()]))
    gateway = one(resources, "kubernetes:gateway.networking.k8s.io/v1:Gateway")
    service = one(resources, "kubernetes:ray.io/v1:RayService")
    assert gateway.urn in service.dependencies
    assert one(resources, CHART).urn in gateway.dependencies
