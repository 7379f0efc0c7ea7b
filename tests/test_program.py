"""The real program under Pulumi's mock engine: components, tokens, CRD protection."""

from __future__ import annotations

import pulumi
import pytest

from components.charts import CRD_TYPE, crd_transform
from components.stack_config import StackConfigError
from tests.conftest import REPO, minimal_platform
from tools.engine import RecordedResource, normalize, run_program


def run(platform: dict | None = None, stack: str = "test") -> list[RecordedResource]:
    return run_program(REPO, stack, {"kuberay-platform:platform": platform or minimal_platform()})


def by_type(resources: list[RecordedResource], type_: str) -> list[RecordedResource]:
    return [r for r in resources if r.type == type_]


def test_components_nest_under_the_platform_with_their_tokens() -> None:
    resources = run()
    (platform,) = by_type(resources, "kuberay-platform:index:KubeRayPlatform")
    (operator,) = by_type(resources, "kuberay-platform:index:KubeRayOperator")
    assert resources[0] is platform  # components come before their children
    assert platform.parent is None and operator.parent == platform.urn
    (chart,) = by_type(resources, "kubernetes:helm.sh/v4:Chart")
    assert chart.parent == operator.urn
    (workloads,) = by_type(resources, "kuberay-platform:index:RayWorkloads")
    (cluster,) = by_type(resources, "kubernetes:ray.io/v1:RayCluster")
    assert cluster.parent == workloads.urn


def test_the_chart_is_the_pinned_kuberay_operator_from_the_official_repo() -> None:
    (chart,) = by_type(run(), "kubernetes:helm.sh/v4:Chart")
    assert chart.inputs["chart"] == "kuberay-operator"
    assert chart.inputs["version"] == "1.7.0"
    assert chart.inputs["repositoryOpts"] == {"repo": "https://ray-project.github.io/kuberay-helm/"}
    assert chart.inputs["namespace"] == "kuberay-system"
    assert chart.inputs["name"] == "kuberay-operator"
    assert chart.inputs["values"]["image"]["tag"] == "v1.7.0"


def test_crds_of_the_chart_survive_pulumi_destroy() -> None:
    """Deleting a CRD deletes every RayCluster: the chart's CRDs are retained on delete."""
    (chart,) = by_type(run(), "kubernetes:helm.sh/v4:Chart")
    assert len(chart.transforms) == 1
    crd = pulumi.ResourceTransformArgs(
        custom=True,
        type_=CRD_TYPE,
        name="rayclusters.ray.io",
        props={"metadata": {"name": "rayclusters.ray.io"}},
        opts=pulumi.ResourceOptions(),
    )
    results = [t(crd) for t in chart.transforms]
    assert any(r is not None and r.opts.retain_on_delete is True for r in results)
    # ...and only the CRDs: the operator Deployment is deleted with the chart.
    deployment = pulumi.ResourceTransformArgs(
        custom=True,
        type_="kubernetes:apps/v1:Deployment",
        name="kuberay-operator",
        props={},
        opts=pulumi.ResourceOptions(),
    )
    assert all(t(deployment) is None for t in chart.transforms)


def test_the_crd_transform_keeps_the_other_options() -> None:
    opts = pulumi.ResourceOptions(protect=True, ignore_changes=["spec"])
    result = crd_transform()(pulumi.ResourceTransformArgs(True, CRD_TYPE, "x", {"a": 1}, opts))
    assert result is not None
    assert (result.opts.retain_on_delete, result.opts.protect, result.opts.ignore_changes) == (True, True, ["spec"])
    assert result.props == {"a": 1}


def test_namespaces_carry_pod_security_admission_labels() -> None:
    namespaces = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]
        for r in by_type(run(), "kubernetes:core/v1:Namespace")
    }
    assert namespaces["kuberay-system"]["pod-security.kubernetes.io/enforce"] == "restricted"
    # Every pod the platform writes is hardened: workload namespaces enforce restricted too.
    assert namespaces["ray"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert namespaces["ray"]["pod-security.kubernetes.io/warn"] == "restricted"
    assert namespaces["ray"]["pod-security.kubernetes.io/enforce-version"] == "v1.33"


def test_the_first_raycluster_follows_the_practices() -> None:
    (cluster,) = by_type(run(), "kubernetes:ray.io/v1:RayCluster")
    spec = cluster.inputs["spec"]
    assert spec["rayVersion"] == "2.60.0"
    assert spec["enableInTreeAutoscaling"] is True and spec["autoscalerOptions"]["version"] == "v2"
    assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    (group,) = spec["workerGroupSpecs"]
    assert (group["minReplicas"], group["maxReplicas"], group["replicas"]) == (0, 2, 0)
    for pod in (spec["headGroupSpec"]["template"], group["template"]):
        (container,) = pod["spec"]["containers"]
        assert container["image"] == "rayproject/ray:2.60.0-py311"
        assert container["resources"]["requests"] == container["resources"]["limits"]


def test_a_config_mistake_is_a_clean_run_error_under_pulumi() -> None:
    with pytest.raises(StackConfigError) as info:
        run(minimal_platform(operator={"scal": "large"}), stack="dev")
    assert isinstance(info.value, pulumi.RunError)  # Pulumi prints it without a traceback
    assert str(info.value).startswith("stacks/Pulumi.dev.yaml: platform.operator.scal: unknown key")


def test_a_missing_platform_key_is_a_clean_error() -> None:
    with pytest.raises(StackConfigError, match=r"config.kuberay-platform:platform: required key is missing"):
        run_program(REPO, "dev", {})


def test_normalize_undoes_the_mock_wire_format() -> None:
    wrapped = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"}
    assert normalize({"replicas": 2.0, "qps": 100.5, "password": wrapped, "list": [1.0, wrapped]}) == {
        "replicas": 2,
        "qps": 100.5,
        "password": "[secret]",
        "list": [1, "[secret]"],
    }
