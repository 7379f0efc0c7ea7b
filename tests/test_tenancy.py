"""Teams: namespace quota, LimitRange defaults, a Role for the team's people, and the check that the
team's workloads fit its quota at their largest."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.conftest import REPO
from tests.test_workloads import POOLS, PREREQUISITES, job
from tools.engine import run_program
from tools.preview import run_preview
from tools.schema import Validator

TEAM = {
    "namespace": "team-a",
    "quota": {"cpu": "40", "memory": "160Gi", "gpu": 8, "pods": 10, "rayClusters": 2},
    "members": {"groups": ["team-a-admins"], "users": ["alice@example.com"], "serviceAccounts": ["ci:deployer"]},
}


def a100_job(replicas: int) -> dict[str, Any]:
    group = {"name": "gpu", "pool": "a100", "maxReplicas": replicas, "resources": {"cpu": "8", "memory": "32Gi"}}
    return job(namespace="team-a", workerGroups=[group])


def platform(teams: dict[str, Any] | None = None, **workloads: Any) -> dict[str, Any]:
    return {
        "environment": "prod",
        "prerequisites": PREREQUISITES,
        "teams": {"team-a": TEAM} if teams is None else teams,
        "workloads": {"pools": POOLS, **workloads},
    }


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def test_a_team_gets_its_quota_defaults_and_role() -> None:
    built = build_manifests(parse_platform(platform(rayJobs=[a100_job(2)]), "s.yaml"), "s.yaml")
    objs = {o["kind"]: o for o in built.teams}
    assert set(objs) == {"LimitRange", "ResourceQuota", "Role", "RoleBinding"}
    assert all(o["metadata"]["namespace"] == "team-a" for o in built.teams)
    assert objs["ResourceQuota"]["spec"]["hard"] == {
        "requests.cpu": "40",
        "limits.cpu": "40",
        "requests.memory": "160Gi",
        "limits.memory": "160Gi",
        "requests.nvidia.com/gpu": "8",
        "pods": "10",
        "count/rayclusters.ray.io": "2",
    }
    # Pulumi waits until the quota controller has computed it: before that, the API server refuses
    # every object the quota counts (found on the local control plane, make e2e).
    waits = json.loads(objs["ResourceQuota"]["metadata"]["annotations"]["pulumi.com/waitFor"])
    assert len(waits) == len(objs["ResourceQuota"]["spec"]["hard"])
    assert "jsonpath={.status.used['count/rayclusters.ray.io']}" in waits
    (limits,) = objs["LimitRange"]["spec"]["limits"]
    assert limits["default"] == limits["defaultRequest"] == {"cpu": "500m", "memory": "512Mi"}
    rules = objs["Role"]["rules"]
    assert rules[0] == {
        "apiGroups": ["ray.io"],
        "resources": ["rayclusters", "rayjobs", "raycronjobs", "rayservices"],
        "verbs": ["*"],
    }
    assert not any("secrets" in r["resources"] for r in rules)  # a team reads no Secrets through this role
    assert [s["kind"] for s in objs["RoleBinding"]["subjects"]] == ["Group", "User", "ServiceAccount"]
    assert objs["RoleBinding"]["subjects"][2] == {"kind": "ServiceAccount", "namespace": "ci", "name": "deployer"}
    assert "team-a" in {n["metadata"]["name"] for n in built.workload_namespaces}
    validator = Validator("1.33")
    assert [e for o in built.teams for e in validator.validate(o)] == []


def test_workloads_must_fit_the_team_quota_at_their_largest() -> None:
    # 2 pods x 4 GPUs = 8: fits. 3 pods: 12 GPUs, 24+2+1 CPU, 96+8+1 Gi, 5 pods.
    assert build_manifests(parse_platform(platform(rayJobs=[a100_job(2)]), "s.yaml"), "s.yaml")
    lines = errors(platform(rayJobs=[a100_job(3)]))
    assert lines == [
        "s.yaml: platform.teams.team-a.quota.gpu: the team's workloads need 12 at their largest (every group at "
        "maxReplicas, services through an upgrade) but the quota allows 8; raise it or lower maxReplicas"
    ]
    tight = {**TEAM, "quota": {"cpu": "26", "pods": 4, "rayClusters": 1}}
    lines = errors(platform({"team-a": tight}, rayJobs=[a100_job(3), a100_job(1) | {"name": "other"}]))
    # CPU: (2 head + 24 + 1 submitter) + (2 + 8 + 1) = 38 > 26; pods: 5 + 3 = 8 > 4; clusters 2 > 1.
    assert any("quota.cpu: the team's workloads need 38 at their largest" in x for x in lines), lines
    assert any("quota.pods: the team's workloads need 8" in x for x in lines), lines
    assert any("quota.rayClusters: the team's workloads run 2 RayClusters at once" in x for x in lines), lines


def test_two_teams_cannot_share_a_namespace() -> None:
    lines = errors(platform({"team-a": TEAM, "team-b": {"namespace": "team-a"}}))
    assert any("teams.team-b.namespace: namespace team-a already belongs to team team-a" in x for x in lines)


def test_team_objects_exist_before_the_workloads() -> None:
    resources = run_program(REPO, "test", {"kuberay-platform:platform": platform(rayJobs=[a100_job(2)])})
    (limit_range,) = [r for r in resources if r.type == "kubernetes:core/v1:LimitRange"]
    (ray_job,) = [r for r in resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    assert limit_range.urn in ray_job.dependencies


def test_the_prod_stack_gives_its_teams_quotas_that_hold_their_workloads() -> None:
    result = run_preview("prod")
    assert result.exit_code == 0
    quotas = {o["metadata"]["namespace"] for o in result.manifests if o["kind"] == "ResourceQuota"}
    assert quotas == {"ray-training", "ray-research"}


# --- A team's own operator ----------------------------------------------------------------------

PROD_SPEC = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["kuberay-platform:platform"]


def test_a_team_runs_its_own_single_namespace_operator_after_the_platforms() -> None:
    config = {"kuberay-platform:platform": PROD_SPEC, "kuberay-platform:redisGcsPassword": "x"}
    config["kubernetes:enableSecretMutable"] = "true"
    config["kuberay-platform:qwenChatRayToken"] = "t"
    resources = run_program(REPO, "test", config)
    charts = {r.inputs["namespace"]: r for r in resources if r.type == "kubernetes:helm.sh/v4:Chart"}
    platform_chart, team_chart = charts["kuberay-system"], charts["ray-training"]
    assert team_chart.inputs["skipCrds"] is True and team_chart.inputs["version"] == platform_chart.inputs["version"]
    values = team_chart.inputs["values"]
    assert values["singleNamespaceInstall"] is True and "watchNamespace" not in values
    assert values["featureGates"] == platform_chart.inputs["values"]["featureGates"]
    assert values["metrics"]["serviceMonitor"]["enabled"] is False
    assert platform_chart.urn in team_chart.dependencies
    assert "ray-training" not in platform_chart.inputs["values"]["watchNamespace"]
    (job,) = [
        r
        for r in resources
        if r.type == "kubernetes:ray.io/v1:RayJob" and r.inputs["metadata"]["namespace"] == "ray-training"
    ]
    assert team_chart.urn in job.dependencies


def test_two_operators_never_watch_one_namespace() -> None:
    data = json.loads(json.dumps(PROD_SPEC))
    data["operator"]["watchNamespaces"].append("ray-training")
    assert any(
        "platform.teams.training.ownOperator: two operators would reconcile ray-training" in x for x in errors(data)
    )
    del data["operator"]["watchNamespaces"]
    assert any(
        "platform.teams.training.ownOperator: two operators would reconcile ray-training" in x for x in errors(data)
    )


def test_the_teams_operator_counts_against_its_quota() -> None:
    data = json.loads(json.dumps(PROD_SPEC))
    build_manifests(parse_platform(data, "s.yaml"), "s.yaml")  # fits as shipped
    pods = data["teams"]["training"]["quota"]["pods"]
    data["teams"]["training"]["ownOperator"] = False
    data["operator"]["watchNamespaces"].append("ray-training")
    data["teams"]["training"]["quota"]["pods"] = 6  # the TPU job's 4 hosts, its head and submitter
    build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    data["teams"]["training"]["ownOperator"] = True
    data["operator"]["watchNamespaces"].remove("ray-training")
    lines = errors(data)
    # Plus the operator's two pods (the platform operator's replicas, with leader election).
    assert any("teams.training.quota.pods: the team's workloads need 8" in x for x in lines), (lines, pods)
