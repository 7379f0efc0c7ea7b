"""The policy pack: pure rules, their pulumi_policy wrappers and per-environment levels."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from policies.pack import CONFIG_DIR, build_policies, policy_config
from policies.rules import RESOURCE_RULES, head_runs_tasks
from policies.rules.base import ENVIRONMENTS, RuleContext, resource_type
from policies.rules.engine import evaluate
from tests.conftest import REPO

GOLDEN = yaml.safe_load((REPO / "tests/data/policies/golden-raycluster.yaml").read_text())
GPU = {"nvidia.com/gpu": "1"}


def wrap(kind: str, cluster_spec: dict[str, Any]) -> dict[str, Any]:
    """The same cluster as a RayCluster, a RayService, a RayJob or a RayCronJob."""
    spec: dict[str, Any] = {
        "RayCluster": cluster_spec,
        "RayService": {"rayClusterConfig": cluster_spec},
        "RayJob": {"entrypoint": "python x.py", "rayClusterSpec": cluster_spec},
        "RayCronJob": {"schedule": "* * * * *", "jobTemplate": {"entrypoint": "x", "rayClusterSpec": cluster_spec}},
    }[kind]
    return {"apiVersion": "ray.io/v1", "kind": kind, "metadata": {"name": "golden", "namespace": "ray"}, "spec": spec}


def head_messages(obj: dict[str, Any]) -> list[str]:
    return list(head_runs_tasks.check(resource_type(obj), obj, RuleContext("prod")))


def mutated(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    spec = copy.deepcopy(GOLDEN["spec"])
    change(spec)
    return spec


def _head(spec: dict[str, Any]) -> dict[str, Any]:
    return spec["headGroupSpec"]


def _worker_container(spec: dict[str, Any]) -> dict[str, Any]:
    return spec["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]


KINDS = ["RayCluster", "RayService", "RayJob", "RayCronJob"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_golden_cluster_passes_in_every_kind(kind: str) -> None:
    assert head_messages(wrap(kind, copy.deepcopy(GOLDEN["spec"]))) == []


def _gpu_workers_with_head_gpus_zero(spec: dict[str, Any]) -> None:
    _worker_container(spec)["resources"]["limits"].update(GPU)
    _head(spec)["rayStartParams"]["num-gpus"] = "0"


@pytest.mark.parametrize("kind", KINDS)
def test_gpu_workers_with_num_gpus_zero_on_the_head_pass(kind: str) -> None:
    assert head_messages(wrap(kind, mutated(_gpu_workers_with_head_gpus_zero))) == []


VIOLATIONS = [
    pytest.param(
        lambda s: _head(s)["rayStartParams"].pop("num-cpus"),
        'spec.headGroupSpec.rayStartParams: set num-cpus: "0" so tasks and actors are never scheduled on the head',
        id="num-cpus-missing",
    ),
    pytest.param(
        lambda s: _head(s)["rayStartParams"].update({"num-cpus": "4"}),
        "spec.headGroupSpec.rayStartParams.num-cpus is '4': set it to \"0\" so the head runs no tasks",
        id="num-cpus-nonzero",
    ),
    pytest.param(
        lambda s: _worker_container(s)["resources"]["limits"].update(GPU),
        "spec.headGroupSpec.rayStartParams: the cluster has GPUs; "
        'set num-gpus: "0" so GPU work never lands on the head',
        id="gpu-cluster-without-num-gpus-zero",
    ),
    pytest.param(
        lambda s: s["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["limits"].update(GPU),
        "spec.headGroupSpec.template.spec.containers[0].resources requests nvidia.com/gpu: 1: the head needs no "
        "accelerators; move them to a worker group",
        id="gpus-on-the-head",
    ),
]


@pytest.mark.parametrize(("change", "message"), VIOLATIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_head_runs_tasks_violations_in_every_kind(
    kind: str, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    found = head_messages(wrap(kind, mutated(change)))
    prefix = {
        "RayCluster": "spec.",
        "RayService": "spec.rayClusterConfig.",
        "RayJob": "spec.rayClusterSpec.",
        "RayCronJob": "spec.jobTemplate.rayClusterSpec.",
    }[kind]
    assert prefix + message.removeprefix("spec.") in found


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, id="not-ray"),
        pytest.param({"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": "oops"}, id="spec-not-a-map"),
        pytest.param(
            {"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": {"headGroupSpec": []}}, id="head-not-a-map"
        ),
        pytest.param(
            {"apiVersion": "ray.io/v1", "kind": "RayJob", "spec": {"clusterSelector": {"ray.io/cluster": "x"}}},
            id="job-on-existing-cluster",
        ),
    ],
)
def test_rules_cope_with_odd_input(obj: dict[str, Any]) -> None:
    for rule in RESOURCE_RULES:
        assert list(rule.check(resource_type(obj), obj, RuleContext())) == []


def test_levels_differ_by_environment() -> None:
    violating = wrap("RayCluster", mutated(lambda s: _head(s)["rayStartParams"].pop("num-cpus")))
    assert [v.enforcement for v in evaluate([violating], RuleContext("dev"))] == ["advisory"]
    assert [v.enforcement for v in evaluate([violating], RuleContext("prod"))] == ["mandatory"]


def test_the_pack_builds_with_pulumi_policy_types_without_a_server() -> None:
    policies = build_policies()
    assert [p.name for p in policies] == [r.name for r in RESOURCE_RULES]
    assert all(isinstance(p, ResourceValidationPolicy) for p in policies)
    assert all(p.enforcement_level == EnforcementLevel.MANDATORY for p in policies)  # prod unless configured
    assert policies[0].config_schema is not None
    assert policies[0].config_schema.properties["environment"]["enum"] == list(ENVIRONMENTS)


def _args(obj: Any, environment: str) -> ResourceValidationArgs:
    opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
    return ResourceValidationArgs(
        resource_type(GOLDEN),
        obj,
        "urn:pulumi:dev::p::kubernetes:ray.io/v1:RayCluster::x",
        "x",
        opts,
        None,
        {"environment": environment},
    )


def test_the_pulumi_policy_reports_what_the_rule_finds() -> None:
    policy = build_policies()[0]
    violating = wrap("RayCluster", mutated(lambda s: _head(s)["rayStartParams"].pop("num-cpus")))
    reported: list[str] = []
    policy.validate(_args(unknown_checking_proxy(violating), "prod"), lambda msg, urn=None: reported.append(msg))  # type: ignore[misc]
    assert reported == [head_messages(violating)[0]]
    reported.clear()
    policy.validate(
        _args(unknown_checking_proxy(copy.deepcopy(GOLDEN)), "prod"), lambda msg, urn=None: reported.append(msg)
    )  # type: ignore[misc]
    assert reported == []


def test_an_unknown_value_during_preview_is_left_to_the_analyzer() -> None:
    """pulumi_policy turns UnknownValueError into a 'cannot run during preview' note."""
    obj = copy.deepcopy(GOLDEN)
    obj["spec"]["headGroupSpec"]["rayStartParams"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # Pulumi's unknown sentinel
    with pytest.raises(UnknownValueError):
        build_policies()[0].validate(_args(unknown_checking_proxy(obj), "prod"), lambda msg, urn=None: None)  # type: ignore[misc]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_checked_in_policy_configs_match_the_level_table(env: str) -> None:
    """Regenerate with `make policy-config` after changing a rule's levels."""
    assert json.loads((CONFIG_DIR / f"{env}.json").read_text()) == policy_config(env)


def test_policies_md_lists_every_rule_with_its_levels() -> None:
    text = (REPO / "POLICIES.md").read_text()
    for rule in RESOURCE_RULES:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{rule.name}` |")), None)
        assert row is not None, rule.name
        cells = [c.strip() for c in row.split("|")[2:5]]
        assert cells == [rule.level(env) for env in ENVIRONMENTS], rule.name
