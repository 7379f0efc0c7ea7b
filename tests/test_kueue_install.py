"""Kueue installed by the stack (``kueue.install``): chart values, the manager's Configuration, the
checks that tie queued workloads to the installation, and the order of creation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pytest
import yaml

from components.charts import CRD_TYPE
from components.errors import ConfigError
from components.manifests.kueue_install import kueue_configuration, kueue_values
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from components.spec.kueue import KueueInstallSpec
from tests.conftest import REPO, SHARED, needs_shared
from tests.test_kueue import TEAMS, cluster
from tests.test_workloads import POOLS, PREREQUISITES, job
from tools.chart_values import unknown_keys
from tools.engine import RecordedResource, run_program
from tools.preview import check_chart_values
from tools.schema_store import SchemaStore

CHART_VALUES = json.loads((REPO / "schemas" / "charts" / "kueue.json").read_text())["values"]


def platform(install: dict[str, Any] | None = None, **workloads: Any) -> dict[str, Any]:
    kueue = copy.deepcopy(TEAMS)
    kueue["install"] = {} if install is None else install
    return {
        "environment": "prod",
        "prerequisites": PREREQUISITES,
        "kueue": kueue,
        "workloads": {"pools": POOLS, **workloads},
    }


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def test_the_configuration_is_the_charts_default_with_the_ray_integrations() -> None:
    chart_default = yaml.safe_load(CHART_VALUES["managerConfig"]["controllerManagerConfigYaml"])
    ours = kueue_configuration(KueueInstallSpec())
    assert ours["integrations"] == {"frameworks": ["ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"]}
    del chart_default["integrations"], ours["integrations"]
    assert ours == chart_default  # the value replaces the whole file: nothing else may change
    assert kueue_configuration(KueueInstallSpec(manage_jobs_without_queue_name=True))["manageJobsWithoutQueueName"]


def test_every_value_exists_in_the_chart_and_the_image_is_the_release() -> None:
    spec = KueueInstallSpec(replicas=2, feature_gates={"PartialAdmission": True})
    values = kueue_values(spec)
    assert unknown_keys(values, CHART_VALUES) == []
    manager = values["controllerManager"]
    assert manager["manager"]["image"] == {
        "repository": "registry.k8s.io/kueue/kueue",
        "tag": "v0.19.2",
        "pullPolicy": "IfNotPresent",
    }
    assert manager["featureGates"] == [{"name": "PartialAdmission", "enabled": True}]
    assert manager["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config == kueue_configuration(spec)


def test_the_preview_checks_the_kueue_charts_values_whatever_its_source() -> None:
    store = SchemaStore()
    chart = RecordedResource(
        "kubernetes:helm.sh/v4:Chart",
        "kueue",
        "urn",
        None,
        False,
        {
            "name": "kueue",
            "chart": "oci://registry.k8s.io/kueue/charts/kueue",
            "values": {"controllerManager": {"replica": 2}},
        },
    )
    (error,) = check_chart_values(chart, store)
    assert error.path == "values.controllerManager.replica" and "not a value of chart kueue" in error.message


def test_install_and_already_installed_exclude_each_other_and_one_is_needed() -> None:
    data = platform()
    data["prerequisites"] = {**PREREQUISITES, "kueue": True}
    assert any("platform.kueue.install: Kueue is declared installed already" in x for x in errors(data))
    data = platform()
    del data["kueue"]["install"]
    (line,) = errors(data)
    assert "platform.prerequisites.kueue: Kueue queues or queued workloads need Kueue v0.19: set kueue.install" in line


@pytest.mark.parametrize(
    ("install", "workload", "message"),
    [
        (
            {"frameworks": ["ray.io/rayjob"]},
            {"rayClusters": [cluster(queue="default", elastic=True)]},
            "rayClusters[0].queue: Kueue's ray.io/raycluster integration is off; add it to kueue.install.frameworks",
        ),
        (
            {"featureGates": {"ElasticJobsViaWorkloadSlices": False}},
            {"rayClusters": [cluster(queue="default", elastic=True)]},
            "rayClusters[0].elastic: needs Kueue's ElasticJobsViaWorkloadSlices gate",
        ),
        (
            {"namespace": "team-a"},
            {"rayJobs": [job(namespace="team-a", queue="default")]},
            "rayJobs[0].namespace: Kueue's webhooks skip its own namespace team-a",
        ),
    ],
)
def test_queued_workloads_need_what_the_installation_enables(
    install: dict[str, Any], workload: dict[str, Any], message: str
) -> None:
    assert any(message in line for line in errors(platform(install, **workload)))


def test_unknown_gates_and_frameworks_are_refused() -> None:
    lines = errors(platform({"featureGates": {"ElasticJobs": True}}))
    assert any("unknown Kueue v0.19.2 feature gate(s): ElasticJobs" in x for x in lines), lines
    lines = errors(platform({"frameworks": ["ray.io/raycronjob"]}))
    assert any("kueue.install.frameworks[0]" in x for x in lines), lines


def test_a_local_archive_must_be_the_kueue_chart() -> None:
    operator_chart = SHARED / "charts" / "kuberay-operator-1.7.0.tgz"
    needs_shared(operator_chart)
    lines = errors(platform({"chart": {"archive": str(operator_chart)}}))
    assert any("holds chart kuberay-operator 1.7.0, expected kueue 0.19.2" in x for x in lines), lines
    kueue_chart = SHARED / "charts" / "kueue-0.19.2.tgz"
    needs_shared(kueue_chart)
    assert build_manifests(parse_platform(platform({"chart": {"archive": str(kueue_chart)}}), "s.yaml"), "s.yaml")


def test_kueue_comes_before_its_queues_and_every_ray_object() -> None:
    data = platform(rayJobs=[job(namespace="team-a", queue="default")])
    resources = run_program(REPO, "test", {"kuberay-platform:platform": data})
    (chart,) = [r for r in resources if r.type == "kubernetes:helm.sh/v4:Chart" and r.inputs["name"] == "kueue"]
    assert chart.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue" and chart.inputs["version"] == "0.19.2"
    assert chart.inputs["namespace"] == "kueue-system"
    (namespace,) = [
        r for r in resources if r.type == "kubernetes:core/v1:Namespace" and r.name.endswith("kueue-install-namespace")
    ]
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    (cq,) = [r for r in resources if r.type.endswith(":ClusterQueue") and r.name.endswith("team-a")]
    (ray_job,) = [r for r in resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    assert chart.urn in cq.dependencies and chart.urn in ray_job.dependencies
    # Its CRDs outlive the chart (deleting one deletes every ClusterQueue and Workload of the cluster).
    (transform,) = chart.transforms
    crd = pulumi.ResourceTransformArgs(
        custom=True, type_=CRD_TYPE, name="x", props={"metadata": {"name": "x"}}, opts=pulumi.ResourceOptions()
    )
    result = transform(crd)
    assert result is not None and result.opts.retain_on_delete is True
