"""The policy pack: every rule with violating and passing fixtures, wrappers and levels."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from policies.pack import CONFIG_DIR, build_policies, policy_config
from policies.rules import RESOURCE_RULES, STACK_RULES, head_runs_tasks
from policies.rules.base import ENVIRONMENTS, RuleContext, resource_type
from policies.rules.engine import evaluate
from tests.conftest import REPO, all_samples
from tests.policy_fixtures import ALSO, CASES, GOLDEN, container, golden, head, worker

ALL_RULES = [r.name for r in RESOURCE_RULES] + [r.name for r in STACK_RULES]
GPU = {"nvidia.com/gpu": "1"}


OPT_IN = {r.name: {"enforcementLevel": "mandatory"} for r in RESOURCE_RULES if r.level("prod") == "disabled"}
"""Rules off by default (opt-in through policy config), switched on so their fixtures are judged."""


def fired(objects: list[dict[str, Any]], env: str = "prod") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in evaluate(objects, RuleContext(env), OPT_IN):
        out.setdefault(v.policy, []).append(v.message)
    return out


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_each_golden_object_passes_every_rule_in_every_environment(name: str) -> None:
    for env in ENVIRONMENTS:
        assert fired([golden(name)], env) == {}, (name, env)


def test_every_rule_has_violating_fixtures() -> None:
    # Stack rules that need other objects, and RayCronJob rules (no golden RayCronJob: its alpha gate
    # is unknown alone), are proven by their own tests below.
    tested_apart = {
        "shared-redis-storage-namespace",
        "missing-local-queue",
        "feature-gate-off",
        "cron-job-history",
        "namespace-default-deny",  # tests/test_network_policies.py
        "stateful-resources-kept",  # tests/test_stateful_changes.py (needs a baseline)
    }
    assert sorted(CASES) == sorted(set(ALL_RULES) - tested_apart)


CASE_PARAMS = [
    pytest.param(rule, base, change, fragment, id=f"{rule}-{i}")
    for rule, cases in CASES.items()
    for i, (base, change, fragment) in enumerate(cases)
]


@pytest.mark.parametrize(("rule", "base", "change", "fragment"), CASE_PARAMS)
def test_the_anti_pattern_is_flagged_and_its_fixed_twin_is_not(
    rule: str, base: str, change: Callable[[dict[str, Any]], None], fragment: str
) -> None:
    twin = golden(base)
    change(twin)
    found = fired([twin])
    assert rule in found, found
    assert any(fragment in m for m in found[rule]), found[rule]
    assert set(found) <= {rule} | ALSO.get(rule, set()), found
    assert rule not in fired([golden(base)])


# --- head-runs-tasks reads every kind the same way ---------------------------------------------

KINDS = ["RayCluster", "RayService", "RayJob", "RayCronJob"]


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


def cluster_of_golden() -> dict[str, Any]:
    return copy.deepcopy(GOLDEN["raycluster"]["spec"])


@pytest.mark.parametrize("kind", KINDS)
def test_head_rule_passes_the_golden_cluster_in_every_kind(kind: str) -> None:
    assert head_messages(wrap(kind, cluster_of_golden())) == []


PREFIX = {
    "RayCluster": "spec.",
    "RayService": "spec.rayClusterConfig.",
    "RayJob": "spec.rayClusterSpec.",
    "RayCronJob": "spec.jobTemplate.rayClusterSpec.",
}
HEAD_VIOLATIONS = [
    pytest.param(
        lambda s: s["headGroupSpec"]["rayStartParams"].pop("num-cpus"),
        'headGroupSpec.rayStartParams: set num-cpus: "0" so tasks and actors are never scheduled on the head',
        id="num-cpus-missing",
    ),
    pytest.param(
        lambda s: s["headGroupSpec"]["rayStartParams"].update({"num-cpus": "4"}),
        "headGroupSpec.rayStartParams.num-cpus is '4': set it to \"0\" so the head runs no tasks",
        id="num-cpus-nonzero",
    ),
    pytest.param(
        lambda s: s["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]["limits"].update(GPU),
        'headGroupSpec.rayStartParams: the cluster has GPUs; set num-gpus: "0" so GPU work never lands on the head',
        id="gpu-cluster-without-num-gpus-zero",
    ),
    pytest.param(
        lambda s: s["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["limits"].update(GPU),
        "headGroupSpec.template.spec.containers[0].resources requests nvidia.com/gpu: 1: the head needs no "
        "accelerators; move them to a worker group",
        id="gpus-on-the-head",
    ),
]


@pytest.mark.parametrize(("change", "message"), HEAD_VIOLATIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_head_rule_violations_in_every_kind(kind: str, change: Callable[[dict[str, Any]], None], message: str) -> None:
    spec = cluster_of_golden()
    change(spec)
    assert PREFIX[kind] + message in head_messages(wrap(kind, spec))


def test_a_tpu_cluster_needs_no_num_gpus_on_the_head() -> None:
    assert head_messages(golden("rayjob")) == []


# --- rules cope with odd input -------------------------------------------------------------------

ODD = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
    {"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": "oops"},
    {"apiVersion": "ray.io/v1", "kind": "RayCluster", "spec": {"headGroupSpec": [], "workerGroupSpecs": {"a": 1}}},
    {"apiVersion": "ray.io/v1", "kind": "RayJob", "spec": {"clusterSelector": {"ray.io/cluster": "x"}}},
    {"apiVersion": "ray.io/v1", "kind": "RayService", "spec": {"serveConfigV2": 42, "rayClusterConfig": None}},
    {"apiVersion": 7, "kind": None, "metadata": [], "spec": {"workerGroupSpecs": [None, 3, {"template": "x"}]}},
    {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": 3, "labels": "x"},
        "spec": {
            "headGroupSpec": {"rayStartParams": None, "template": {"spec": {"containers": [None, {"resources": 5}]}}},
            "workerGroupSpecs": [
                {"minReplicas": "many", "numOfHosts": None, "template": {"spec": {"containers": "x"}}}
            ],
        },
    },
]


@pytest.mark.parametrize("obj", ODD, ids=[f"odd-{i}" for i in range(len(ODD))])
def test_rules_cope_with_odd_input(obj: dict[str, Any]) -> None:
    evaluate([obj], RuleContext())  # no exception: findings, if any, are the rules' business


def test_every_upstream_sample_runs_through_every_rule_with_the_expected_findings() -> None:
    found = {(path, v.policy) for path, obj in all_samples() for v in evaluate([obj], RuleContext("prod"))}
    expected = {
        ("kuberay/ray-job.resources.yaml", "accelerator-params"),  # num-gpus "2" on a head without GPUs
        ("kuberay/ray-cluster.embedded-gcs-ft.yaml", "feature-gates-unknown"),  # rocksdb; gate unknown alone
        ("kuberay/ray-cluster-label-selector.yaml", "image-tag"),  # rayproject/ray:nightly
        ("kuberay/ray-cluster.separate-ingress.yaml", "head-exposed-without-auth"),  # NodePort head, no auth
        ("kuberay/ray-service.deepseek.yaml", "llm-serving-grace-period"),  # default 30 s drain
        ("kuberay/ray-cluster.persistent-redis-sidecar.yaml", "redis-password-missing"),
    }
    assert expected <= found
    # ...and none of what the operator would reject, in samples that upstream runs in its e2e tests.
    assert not {(p, r) for p, r in found if r in ("serve-config-schema", "unknown-enum-values", "managed-by")}


# --- stack rules -------------------------------------------------------------------------------


def _redis_cluster(name: str, namespace: str = "shared") -> dict[str, Any]:
    obj = golden("raycluster")
    obj["metadata"]["name"] = name
    obj["spec"]["gcsFaultToleranceOptions"] = {
        "redisAddress": "redis:6379",
        "externalStorageNamespace": namespace,
        "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis", "key": "password"}}},
    }
    return obj


def test_two_clusters_sharing_a_redis_namespace_are_flagged_and_separate_ones_are_not() -> None:
    found = fired([_redis_cluster("a"), _redis_cluster("b")])
    assert list(found) == ["shared-redis-storage-namespace"]
    assert (
        "'shared' on Redis redis:6379 is already used by RayCluster/ray/a" in found["shared-redis-storage-namespace"][0]
    )
    assert fired([_redis_cluster("a", "a"), _redis_cluster("b", "b")]) == {}


def _rocksdb_cluster() -> dict[str, Any]:
    obj = golden("raycluster")
    obj["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb"}
    return obj


def test_feature_gates_are_read_from_the_operator_deployment() -> None:
    def deployment(gates: str) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "kuberay-operator", "namespace": "kuberay-system"},
            "spec": {"template": {"spec": {"containers": [{"name": "op", "args": [f"--feature-gates={gates}"]}]}}},
        }

    assert "feature-gate-off" in fired([_rocksdb_cluster(), deployment("RayClusterMTLS=true")])
    assert "feature-gate-off" not in fired([_rocksdb_cluster(), deployment("GCSFaultToleranceEmbeddedStorage=true")])


def test_feature_gates_are_read_from_the_chart_values() -> None:
    from policies.rules.engine import evaluate_resources

    def chart(enabled: bool) -> tuple[str, dict[str, Any]]:
        values = {"featureGates": [{"name": "GCSFaultToleranceEmbeddedStorage", "enabled": enabled}]}
        return "kubernetes:helm.sh/v4:Chart", {"chart": "kuberay-operator", "values": values}

    rocksdb = (resource_type(_rocksdb_cluster()), _rocksdb_cluster())
    on = evaluate_resources([chart(True), rocksdb], RuleContext("prod"))
    off = evaluate_resources([chart(False), rocksdb], RuleContext("prod"))
    assert [v.policy for _, v in on] == []
    assert [(i, v.policy) for i, v in off] == [(1, "feature-gate-off")]
    assert "off in the kuberay-operator chart values" in off[0][1].message


def _local_queue(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": "cq"},
    }


def test_a_queue_label_must_name_an_existing_local_queue() -> None:
    job = golden("rayjob")  # labelled research/research
    found = fired([job, _local_queue("other", "research"), _local_queue("research", "elsewhere")])
    assert list(found) == ["missing-local-queue"]
    assert "no LocalQueue 'research' in namespace research (there: other)" in found["missing-local-queue"][0]
    assert fired([job, _local_queue("research", "research")]) == {}
    assert fired([job]) == {}  # no queues among the resources: managed elsewhere, not checked


# --- levels, the pack and its config ------------------------------------------------------------


def test_opt_in_rules_are_off_unless_the_policy_config_enables_them() -> None:
    assert "image-digest" in OPT_IN
    undigested = golden("raycluster")
    container(worker(undigested))["image"] = "rayproject/ray:2.60.0-py311"
    assert evaluate([undigested], RuleContext("prod")) == []
    (violation,) = evaluate([undigested], RuleContext("prod"), {"image-digest": {"enforcementLevel": "advisory"}})
    assert (violation.policy, violation.enforcement) == ("image-digest", "advisory")


def test_policy_config_overrides_levels_and_tunables() -> None:
    service = golden("rayservice")
    config = {"serving-min-replicas": {"enforcementLevel": "advisory", "servingMinReplicas": 3}}
    (violation,) = evaluate([service], RuleContext("prod"), config)
    assert violation.enforcement == "advisory" and "to 3 or more" in violation.message


def test_levels_differ_by_environment() -> None:
    violating = golden("raycluster")
    head(violating)["rayStartParams"].pop("num-cpus")
    assert [v.enforcement for v in evaluate([violating], RuleContext("dev"))] == ["advisory"]
    assert [v.enforcement for v in evaluate([violating], RuleContext("prod"))] == ["mandatory"]


def test_rule_names_are_unique_and_stable() -> None:
    assert len(ALL_RULES) == len(set(ALL_RULES))
    assert all(name == name.lower() and " " not in name for name in ALL_RULES)


def test_the_pack_builds_with_pulumi_policy_types_without_a_server() -> None:
    policies = build_policies()
    assert [p.name for p in policies] == ["schema", *ALL_RULES]
    assert all(isinstance(p, ResourceValidationPolicy) for p in policies[: len(RESOURCE_RULES) + 1])
    assert all(isinstance(p, StackValidationPolicy) for p in policies[len(RESOURCE_RULES) + 1 :])
    by_name = {p.name: p for p in policies}
    assert by_name["head-runs-tasks"].enforcement_level == EnforcementLevel.MANDATORY  # prod unless configured
    assert by_name["image-digest"].enforcement_level == EnforcementLevel.DISABLED  # opt-in
    for p in policies:
        assert p.config_schema is not None and p.config_schema.properties["environment"]["enum"] == list(ENVIRONMENTS)
    assert by_name["serving-min-replicas"].config_schema.properties["servingMinReplicas"]["default"] == 2


def _opts() -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def _args(obj: Any, config: dict[str, Any]) -> ResourceValidationArgs:
    return ResourceValidationArgs(
        "kubernetes:ray.io/v1:RayCluster",
        obj,
        "urn:pulumi:dev::p::kubernetes:ray.io/v1:RayCluster::x",
        "x",
        _opts(),
        None,
        config,
    )


def _policy(name: str) -> Any:
    return next(p for p in build_policies() if p.name == name)


def test_the_resource_policy_reports_what_the_rule_finds() -> None:
    violating = golden("raycluster")
    head(violating)["rayStartParams"].pop("num-cpus")
    reported: list[str] = []
    _policy("head-runs-tasks").validate(
        _args(unknown_checking_proxy(violating), {"environment": "prod"}), lambda m, u=None: reported.append(m)
    )
    assert reported == [head_messages(violating)[0]]
    reported.clear()
    _policy("head-runs-tasks").validate(
        _args(unknown_checking_proxy(golden("raycluster")), {}), lambda m, u=None: reported.append(m)
    )
    assert reported == []


def test_rule_options_reach_the_rule_through_policy_config() -> None:
    service = golden("rayservice")  # minReplicas 2
    reported: list[str] = []
    args = ResourceValidationArgs(
        "kubernetes:ray.io/v1:RayService",
        unknown_checking_proxy(service),
        "urn",
        "x",
        _opts(),
        None,
        {"environment": "prod", "servingMinReplicas": 3},
    )
    _policy("serving-min-replicas").validate(args, lambda m, u=None: reported.append(m))
    assert reported and "set min_replicas (or num_replicas) to 3 or more" in reported[0]


def test_the_stack_policy_reports_on_the_offending_resource() -> None:
    resources = [
        PolicyResource(
            "kubernetes:ray.io/v1:RayCluster",
            unknown_checking_proxy(_redis_cluster(n)),
            f"urn:{n}",
            n,
            _opts(),
            None,
            None,
            [],
            {},
        )
        for n in ("a", "b")
    ]
    reported: list[tuple[str, Any]] = []
    _policy("shared-redis-storage-namespace").validate(
        StackValidationArgs(resources, {"environment": "prod"}), lambda m, u=None: reported.append((m, u))
    )
    assert [u for _, u in reported] == ["urn:b"]


def test_an_unknown_value_during_preview_is_left_to_the_analyzer() -> None:
    """pulumi_policy turns UnknownValueError into a 'cannot run during preview' note."""
    obj = golden("raycluster")
    head(obj)["rayStartParams"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # Pulumi's unknown sentinel
    with pytest.raises(UnknownValueError):
        _policy("head-runs-tasks").validate(_args(unknown_checking_proxy(obj), {}), lambda m, u=None: None)


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_the_checked_in_policy_configs_match_the_level_table(env: str) -> None:
    """Regenerate with `make policy-config` after changing a rule's levels."""
    assert json.loads((CONFIG_DIR / f"{env}.json").read_text()) == policy_config(env)


def test_policies_md_lists_every_rule_with_its_levels() -> None:
    text = (REPO / "POLICIES.md").read_text()
    for rule in [*RESOURCE_RULES, *STACK_RULES]:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{rule.name}` |")), None)
        assert row is not None, rule.name
        cells = [c.strip() for c in row.split("|")[2:5]]
        assert cells == [rule.level(env) for env in ENVIRONMENTS], rule.name


def test_container_helper_used_by_fixtures() -> None:
    assert container(worker(golden("raycluster")))["name"] == "ray-worker"


def test_kueue_rules_read_a_raycronjob_template_label() -> None:
    job = golden("rayjob")
    cron = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCronJob",
        "metadata": {"name": "nightly", "namespace": "research"},
        "spec": {
            "schedule": "@daily",
            "jobTemplate": {**copy.deepcopy(job["spec"]), "metadata": {"labels": job["metadata"]["labels"]}},
        },
    }
    cron["spec"]["jobTemplate"]["clusterSelector"] = {"ray.io/cluster": "shared"}
    found = evaluate([cron, _local_queue("other", "research")], RuleContext("prod"), OPT_IN)
    assert {v.policy for v in found} >= {"kueue-rayjob", "missing-local-queue"}


def test_non_finite_numbers_do_not_crash_the_rules() -> None:
    obj = golden("rayjob")
    worker(obj).update(minReplicas=float("inf"), numOfHosts=float("nan"))
    container(worker(obj))["resources"]["limits"]["google.com/tpu"] = float("inf")
    evaluate([obj], RuleContext("prod"), OPT_IN)


@pytest.mark.parametrize("tag", ["latest-gpu", "nightly-py311"])
def test_moving_tag_variants_are_flagged(tag: str) -> None:
    obj = golden("raycluster")
    container(worker(obj))["image"] = f"rayproject/ray:{tag}"
    assert "image-tag" in fired([obj])


def test_installs_inside_llm_configs_are_flagged() -> None:
    import yaml

    service = golden("rayservice")
    config = yaml.safe_load(service["spec"]["serveConfigV2"])
    config["applications"][0]["args"]["llm_configs"][0]["runtime_env"] = {"pip": ["vllm"]}
    service["spec"]["serveConfigV2"] = yaml.safe_dump(config)
    assert any("llm_configs[0].runtime_env.pip" in m for m in fired([service]).get("runtime-env-installs", []))


# --- The pack's schema policy (custom resources against the project's schemas) -----------------


def _validate_schema(rtype: str, props: Any) -> list[str]:
    reported: list[str] = []
    args = ResourceValidationArgs(rtype, props, f"urn:pulumi:dev::p::{rtype}::x", "x", _opts(), None, {})
    _policy("schema").validate(args, lambda m, u=None: reported.append(m))
    return reported


def _as_engine_sends(value: Any) -> Any:
    """Numbers reach the pack as protobuf floats."""
    if isinstance(value, dict):
        return {k: _as_engine_sends(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_engine_sends(v) for v in value]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def test_the_pack_validates_custom_resources_against_the_project_schemas() -> None:
    rtype = "kubernetes:ray.io/v1:RayCluster"
    good = golden("raycluster")
    props = {k: v for k, v in good.items() if k not in ("apiVersion", "kind")}  # as the provider sends them
    assert _validate_schema(rtype, unknown_checking_proxy(_as_engine_sends(props))) == []
    bad = copy.deepcopy(props)
    bad["spec"]["headGroupSpec"]["rayStartParam"] = bad["spec"]["headGroupSpec"].pop("rayStartParams")
    bad["spec"]["workerGroupSpecs"][0]["maxReplicas"] = "ten"
    assert _validate_schema(rtype, unknown_checking_proxy(_as_engine_sends(bad))) == [
        "spec.headGroupSpec: Additional properties are not allowed ('rayStartParam' was unexpected)",
        "spec.workerGroupSpecs[0].maxReplicas: 'ten' is not of type 'integer'",
    ]


def test_the_pack_schema_policy_leaves_unknowns_and_core_kinds_alone() -> None:
    obj = golden("raycluster")
    obj["spec"]["rayVersion"] = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # Pulumi's unknown sentinel
    with pytest.raises(UnknownValueError):
        _validate_schema("kubernetes:ray.io/v1:RayCluster", unknown_checking_proxy(obj))
    ns = {"metadata": {"name": "x"}, "spec": {"finalizer": []}}  # core kinds: the provider's and the server's
    assert _validate_schema("kubernetes:core/v1:Namespace", unknown_checking_proxy(ns)) == []


def test_the_pack_needs_neither_kubernetes_validate_nor_ray() -> None:
    """Its own virtualenv (policies/requirements.txt) has neither: the schema policy and the serve
    config check read only the project's schemas."""
    code = (
        "import sys, yaml; from policies.pack import build_policies; "
        "from tests.test_policies import _validate_schema, golden; "
        "svc = golden('rayservice'); "
        "assert _validate_schema('kubernetes:ray.io/v1:RayService', svc) == []; "
        "from policies.rules.serve_config_schema import check; "
        "from policies.rules.base import RuleContext; assert list(check('', svc, RuleContext())) == []; "
        "bad = [m for m in ('kubernetes_validate', 'ray') if m in sys.modules]; assert not bad, bad"
    )
    env = {**os.environ, "KUBERAY_PLATFORM_SERVE_VALIDATION": "schema"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def test_an_advertised_accelerator_type_satisfies_the_llm_model() -> None:
    service = golden("rayservice")
    config = yaml.safe_load(service["spec"]["serveConfigV2"])
    config["applications"][0]["args"]["llm_configs"][0]["accelerator_type"] = "A100"
    service["spec"]["serveConfigV2"] = yaml.safe_dump(config)
    group = service["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]
    group["rayStartParams"] = {"resources": "'{\"accelerator_type:A100\": 1}'"}
    assert "llm-accelerator-advertised" not in fired([service])
    group["rayStartParams"] = {}
    group["resources"] = {"accelerator_type:A100": "1"}  # the group's resources map counts too
    assert "llm-accelerator-advertised" not in fired([service])


def test_a_readiness_probe_that_includes_the_serve_check_is_fine() -> None:
    service = golden("rayservice")
    probe = {"exec": {"command": ["bash", "-c", "wget -q -O- http://localhost:8000/-/healthz | grep success"]}}
    service["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0][
        "readinessProbe"
    ] = probe
    assert "serve-worker-readiness" not in fired([service])


def _mig_cluster() -> dict[str, Any]:
    obj = golden("raycluster")
    group = obj["spec"]["workerGroupSpecs"][0]
    pod = group["template"]["spec"]
    pod["containers"][0]["resources"]["limits"]["nvidia.com/mig-3g.40gb"] = "1"
    pod["containers"][0]["resources"]["requests"]["nvidia.com/mig-3g.40gb"] = "1"
    pod["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    pod["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    group["rayStartParams"] = {"num-gpus": "1"}
    obj["spec"]["headGroupSpec"]["rayStartParams"]["num-gpus"] = "0"
    return obj


def test_mig_profiles_count_as_gpus_as_kuberay_counts_them() -> None:
    """KubeRay's IsGPUResourceKey: nvidia.com/mig-<n>g.<m>gb is a GPU (one slice = one Ray GPU)."""
    found = fired([_mig_cluster()])
    assert not {"accelerator-params", "worker-groups-by-hardware", "head-runs-tasks"} & set(found), found
    obj = _mig_cluster()
    obj["spec"]["workerGroupSpecs"][0]["rayStartParams"] = {"num-gpus": "2"}
    assert any("has 1 GPU(s)" in m for m in fired([obj])["accelerator-params"])


def test_a_head_kept_free_by_its_resources_map_passes_and_advice_never_asks_for_both() -> None:
    obj = golden("raycluster")
    obj["spec"]["headGroupSpec"]["rayStartParams"] = {}
    obj["spec"]["headGroupSpec"]["resources"] = {"CPU": "0"}
    found = fired([obj])
    assert "head-runs-tasks" not in found and "group-resources-conflict" not in found
    obj["spec"]["headGroupSpec"]["resources"] = {"CPU": "2"}
    (message,) = fired([obj])["head-runs-tasks"]
    assert message == "spec.headGroupSpec.resources.CPU is '2': set it to \"0\" so the head runs no tasks"


def test_gates_from_the_policy_config_judge_manifests_linted_without_their_operator() -> None:
    from policies.rules.feature_gate_off import RULE, UNKNOWN_RULE

    obj = golden("raycluster")
    obj["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb"}
    resources = [("kubernetes:ray.io/v1:RayCluster", obj)]
    assert list(RULE.check(resources, RuleContext("prod"))) == []  # unknown: not a mandatory finding
    ((_, unknown),) = list(UNKNOWN_RULE.check(resources, RuleContext("prod")))
    assert "no kuberay-operator is among the inputs" in unknown
    off = RuleContext("prod", {"operatorFeatureGates": {"GCSFaultToleranceEmbeddedStorage": False}})
    ((_, message),) = list(RULE.check(resources, off))
    assert "off in the policy config" in message
    assert list(UNKNOWN_RULE.check(resources, off)) == []
    on = RuleContext("prod", {"operatorFeatureGates": {"GCSFaultToleranceEmbeddedStorage": True}})
    assert list(RULE.check(resources, on)) == []


def test_an_internal_gateway_created_first_satisfies_the_exposure_rule() -> None:
    service = golden("rayservice")
    service["metadata"].pop("annotations")
    gateway = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {
            "name": "llm-gateway",
            "namespace": "serving",
            "labels": {"kuberay-platform.io/exposure": "internal"},
        },
        "spec": {"gatewayClassName": "istio", "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]},
    }
    assert "serving-exposed-without-auth" in fired([service])
    assert "serving-exposed-without-auth" not in fired([service, gateway])
    gateway["metadata"]["namespace"] = "other"
    assert "serving-exposed-without-auth" in fired([service, gateway])


def _cron(rules: list[dict[str, Any]]) -> dict[str, Any]:
    job = golden("rayjob")
    job["spec"]["deletionStrategy"] = {"deletionRules": rules}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCronJob",
        "metadata": {"name": "nightly", "namespace": "ray"},
        "spec": {"schedule": "@daily", "jobTemplate": job["spec"]},
    }


def test_a_raycronjob_without_delete_self_piles_up_rayjobs() -> None:
    cluster_only = [{"policy": "DeleteCluster", "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 60}}]
    (message,) = fired([_cron(cluster_only)])["cron-job-history"]
    assert "no DeleteSelf rule" in message
    with_self = [*cluster_only, {"policy": "DeleteSelf", "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 86400}}]
    assert "cron-job-history" not in fired([_cron(with_self)])
    assert "cron-job-history" not in fired([golden("rayjob")])  # a plain RayJob is not a schedule


def test_dns_egress_is_judged_as_kuberay_applies_the_rules() -> None:
    from policies.rules.network_policy_incomplete import check

    def cluster_with(policy: dict[str, Any]) -> dict[str, Any]:
        obj = golden("raycluster")
        obj["spec"]["networkPolicy"] = policy
        return obj

    dns = {"ports": [{"protocol": "UDP", "port": 53}], "to": [{"namespaceSelector": {}}]}
    cidr_only = {"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}  # no ports, but cannot reach kube-dns
    group = obj_group = golden("raycluster")["spec"]["workerGroupSpecs"][0]["groupName"]
    assert obj_group
    flagged = cluster_with({"mode": "DenyAll", "head": {"egressRules": [cidr_only]}, "worker": {"egressRules": [dns]}})
    assert any("no DNS egress" in m for m in check("", flagged, RuleContext()))
    # a workerGroups entry replaces worker for that group
    replaced = cluster_with(
        {
            "mode": "DenyAllEgress",
            "head": {"egressRules": [dns]},
            "workerGroups": [{"groupName": group, "egressRules": [dns]}],
        }
    )
    assert list(check("", replaced, RuleContext())) == []
    replaced["spec"]["networkPolicy"]["workerGroups"][0]["egressRules"] = [cidr_only]
    replaced["spec"]["networkPolicy"]["worker"] = {"egressRules": [dns]}
    assert any("no DNS egress" in m for m in check("", replaced, RuleContext()))


def test_an_empty_operator_feature_gates_option_means_upstream_defaults() -> None:
    from policies.rules.feature_gate_off import RULE, UNKNOWN_RULE

    obj = golden("raycluster")
    obj["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb"}
    resources = [("kubernetes:ray.io/v1:RayCluster", obj)]
    defaults = RuleContext("prod", {"operatorFeatureGates": {}})
    ((_, message),) = list(RULE.check(resources, defaults))
    assert "GCSFaultToleranceEmbeddedStorage, off in the policy config" in message
    assert list(UNKNOWN_RULE.check(resources, defaults)) == []
