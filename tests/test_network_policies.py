"""The platform's NetworkPolicies (``platform.networkPolicies``): default deny in every Ray namespace,
the allowances a working platform needs, and the connectivity table a real analyzer
(network-config-analyzer) computes from them for the prod stack."""

from __future__ import annotations

import copy
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.manifests.cluster import WORKLOAD_LABEL
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from policies.rules.base import RuleContext
from policies.rules.namespace_default_deny import RULE as DEFAULT_DENY
from tests.conftest import REPO
from tools import connectivity as connectivity_module
from tools.connectivity import Connectivity, analyze, nca_command, parse_connection, report
from tools.engine import run_program
from tools.preview import run_preview

PROD = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["kuberay-platform:platform"]


def prod(**edits: Any) -> dict[str, Any]:
    data = copy.deepcopy(PROD)
    data.update(edits)
    return data


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def policies(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    manifests = build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in manifests.network_policies}


def needs_nca() -> str:
    nca = nca_command()
    if nca is None:
        if os.environ.get("CI") == "true":
            pytest.fail("network-config-analyzer is not installed (make test installs it into .venv-nca)")
        pytest.skip("needs network-config-analyzer (make nca-venv)")
    return nca


# --- What is emitted ----------------------------------------------------------------------------


def test_every_ray_namespace_denies_by_default_and_allows_dns() -> None:
    found = policies(PROD)
    for ns in ("ray-prod", "ray-research", "ray-serving", "ray-training"):
        deny = found[(ns, "ray-default-deny")]["spec"]
        assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
        (dns,) = found[(ns, "ray-allow-dns")]["spec"]["egress"]
        assert {"protocol": "UDP", "port": 53} in dns["ports"]
    assert {ns for ns, _ in found} == {"ray-prod", "ray-research", "ray-serving", "ray-training"}


def test_a_workloads_pods_and_its_submitter_share_the_label_the_policies_select() -> None:
    manifests = build_manifests(parse_platform(PROD, "s.yaml"), "s.yaml")
    (job,) = [w for w in manifests.workloads if w["metadata"]["name"] == "pretrain-v6e"]
    submitter = job["spec"]["submitterPodTemplate"]
    assert submitter["metadata"]["labels"] == {WORKLOAD_LABEL: "pretrain-v6e"}
    (container,) = submitter["spec"]["containers"]
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    # KubeRay's own default, but labelled and hardened: the head's image, 500m/200Mi, 1 CPU/1Gi.
    assert container["name"] == "ray-job-submitter" and container["image"] == head["image"]
    assert container["resources"] == {
        "requests": {"cpu": "500m", "memory": "200Mi"},
        "limits": {"cpu": "1", "memory": "1Gi"},
    }
    assert submitter["spec"]["restartPolicy"] == "Never"
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert submitter["spec"]["securityContext"]["runAsNonRoot"] is True
    policy = policies(PROD)[("ray-training", "ray-workload-pretrain-v6e")]["spec"]
    assert policy["podSelector"] == {"matchLabels": {WORKLOAD_LABEL: "pretrain-v6e"}}


def test_policies_come_before_every_workload() -> None:
    resources = run_program(
        REPO,
        "test",
        {
            "kuberay-platform:platform": PROD,
            "kubernetes:enableSecretMutable": True,
            "kuberay-platform:redisGcsPassword": "x",
            "kuberay-platform:qwenChatRayToken": "t",
        },
    )
    # The Redis NetworkPolicy belongs to GcsStorage; the platform's come first for every Ray object.
    platform = [
        r
        for r in resources
        if r.type == "kubernetes:networking.k8s.io/v1:NetworkPolicy" and "NamespacePolicies" in r.urn
    ]
    ray = [r for r in resources if r.type.startswith("kubernetes:ray.io/v1:")]
    assert ray and platform
    for obj in ray:
        namespace, name = obj.inputs["metadata"]["namespace"], obj.inputs["metadata"]["name"]
        theirs = {
            p.urn
            for p in platform
            if p.inputs["metadata"]["namespace"] == namespace
            and p.inputs["spec"]["podSelector"].get("matchLabels", {}).get(WORKLOAD_LABEL, name) == name
        }
        assert any("default-deny" in u for u in theirs), obj.urn
        # Its namespace's and its own, not another workload's or namespace's: dependencies that grow
        # with the fleet's square otherwise (issue 17).
        assert theirs == {p.urn for p in platform} & set(obj.dependencies), obj.urn


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["networkPolicies"].pop("apiServerCidrs"),
            "platform.networkPolicies.apiServerCidrs: workloads.rayClusters[0] autoscales",
        ),
        (
            lambda d: d["networkPolicies"].pop("serveFrom"),
            "platform.networkPolicies.serveFrom: workloads.rayServices[0] serves, but no namespace may reach it",
        ),
        (
            lambda d: d["networkPolicies"]["namespaces"].update({"ray-nowhere": {"clientsFrom": ["x"]}}),
            "platform.networkPolicies.namespaces.ray-nowhere: no workload runs there; drop it",
        ),
        (
            lambda d: d["workloads"]["rayClusters"][0].update(name="eval-sweep", namespace="ray-research"),
            "platform.workloads.rayJobs[1].name: eval-sweep is already a workload in namespace ray-research",
        ),
        (
            lambda d: d["networkPolicies"].update(egress=[{"cidr": "0.0.0.0/0"}]),
            "platform.networkPolicies.egress[0].purpose",
        ),
    ],
)
def test_what_a_default_deny_namespace_needs_is_a_config_error(edit: Any, message: str) -> None:
    data = prod()
    edit(data)
    lines = errors(data)
    assert any(message in line for line in lines), lines


def test_namespace_allowances_add_to_the_platform_wide_ones() -> None:
    data = prod()
    data["networkPolicies"]["clientsFrom"] = ["platform-tools"]
    found = policies(data)
    (rule,) = found[("ray-research", "ray-clients-to-heads")]["spec"]["ingress"]
    names = rule["from"][0]["namespaceSelector"]["matchExpressions"][0]["values"]
    assert names == ["platform-tools", "research-notebooks"]
    assert ("ray-training", "ray-egress") in found and ("ray-prod", "ray-egress") not in found


# --- The policy rule ----------------------------------------------------------------------------


def _resources(manifests: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for m in manifests:
        api = m["apiVersion"] if "/" in m["apiVersion"] else f"core/{m['apiVersion']}"
        out.append((f"kubernetes:{api}:{m['kind']}", m))
    return out


def test_the_default_deny_rule_flags_an_open_namespace_and_passes_the_platforms() -> None:
    manifests = build_manifests(parse_platform(PROD, "s.yaml"), "s.yaml")
    objects = [*manifests.workload_namespaces, *manifests.workloads, *manifests.network_policies]
    ctx = RuleContext("prod")
    assert list(DEFAULT_DENY.check(_resources(objects), ctx)) == []
    # Without the training namespace's policies: flagged once, naming what is missing.
    opened = [o for o in objects if not (o["kind"] == "NetworkPolicy" and o["metadata"]["namespace"] == "ray-training")]
    (finding,) = DEFAULT_DENY.check(_resources(opened), ctx)
    assert "namespace ray-training runs Ray without a default-deny policy and a DNS allowance" in finding[1]
    # A deny that still allows something is not a default deny.
    leaky = copy.deepcopy(objects)
    for o in leaky:
        if o["kind"] == "NetworkPolicy" and o["metadata"]["name"] == "ray-default-deny":
            o["spec"]["ingress"] = [{}]
    assert len(list(DEFAULT_DENY.check(_resources(leaky), ctx))) == 4
    assert DEFAULT_DENY.level("prod") == "mandatory" and DEFAULT_DENY.level("dev") == "disabled"
    # A workload file linted alone (no Namespace among the inputs) is not judged.
    assert list(DEFAULT_DENY.check(_resources(manifests.workloads), ctx)) == []


# --- Who may talk to whom (network-config-analyzer) ----------------------------------------------


@pytest.fixture(scope="module")
def connectivity() -> Connectivity:
    nca = needs_nca()
    manifests = build_manifests(parse_platform(PROD, "s.yaml"), "s.yaml")
    redis = [o for r in manifests.redis for o in r.objects]
    return analyze([*manifests.workloads, *manifests.network_policies, *redis], nca)


def test_a_worker_reaches_its_own_head_and_no_other_teams(connectivity: Connectivity) -> None:
    c = connectivity
    assert c.allows("ray-prod/prod-cpu-cpu-worker", "ray-prod/prod-cpu-head", 6379)  # GCS
    assert c.allows("ray-training/pretrain-v6e-tpu-worker", "ray-training/pretrain-v6e-head", 8265)
    assert c.allows("ray-training/pretrain-v6e-submitter", "ray-training/pretrain-v6e-head", 8265)
    assert not c.allows("ray-research/eval-sweep-gpu-worker", "ray-training/pretrain-v6e-head", 6379)
    assert not c.allows("ray-research/eval-sweep-head", "ray-prod/prod-cpu-head", 8265)
    assert not c.allows("outsider/peer", "ray-prod/prod-cpu-head", 6379)
    assert not c.allows("ray-prod/stray", "ray-prod/prod-cpu-head", 6379)  # a non-Ray pod beside it


def test_only_heads_reach_redis(connectivity: Connectivity) -> None:
    c = connectivity
    assert c.allows("ray-serving/qwen-chat-head", "ray-serving/redis-gcs-0", 6379)
    for src in ("ray-serving/qwen-chat-gpu-worker", "ray-serving/stray", "ray-prod/prod-cpu-head", "outsider/peer"):
        assert not c.allows(src, "ray-serving/redis-gcs-0", 6379), src


def test_serve_traffic_arrives_only_from_the_gateway_namespace(connectivity: Connectivity) -> None:
    c = connectivity
    assert c.allows("istio-system/peer", "ray-serving/qwen-chat-gpu-worker", 8000)
    assert c.allows("istio-system/peer", "ray-serving/qwen-chat-gateway-proxy", 80)
    assert c.allows("ray-serving/qwen-chat-gateway-proxy", "ray-serving/qwen-chat-gpu-worker", 8000)
    assert c.allows("ray-serving/qwen-chat-gateway-proxy", "istio-system/peer", 15012)
    for src in ("outsider/peer", "ray-research/eval-sweep-head", "monitoring/peer"):
        assert not c.allows(src, "ray-serving/qwen-chat-gpu-worker", 8000), src


def test_the_operator_prometheus_and_clients_reach_only_their_ports(connectivity: Connectivity) -> None:
    c = connectivity
    assert c.allows("kuberay-system/peer", "ray-serving/qwen-chat-head", 8265)
    assert c.allows("kuberay-system/peer", "ray-serving/qwen-chat-head", 8000)
    assert not c.allows("kuberay-system/peer", "ray-serving/qwen-chat-head", 6379)
    # Training runs its own operator: it, not the platform's, drives training's heads.
    assert c.allows("ray-training/kuberay-operator", "ray-training/pretrain-v6e-head", 8265)
    assert c.reaches_address("ray-training/kuberay-operator", "172.16.0.2", 443)  # the API server
    assert not c.allows("kuberay-system/peer", "ray-training/pretrain-v6e-head", 8265)
    assert not c.allows("ray-training/stray", "ray-training/pretrain-v6e-head", 8265)
    for pod in ("ray-prod/prod-cpu-head", "ray-training/pretrain-v6e-tpu-worker"):
        assert c.allows("monitoring/peer", pod, 8080)
        assert not c.allows("monitoring/peer", pod, 6379)
    assert c.allows("monitoring/peer", "ray-prod/prod-cpu-head", 44217)
    assert c.allows("ingress-nginx/peer", "ray-prod/prod-cpu-head", 8265)  # its dashboard ingress
    assert not c.allows("ingress-nginx/peer", "ray-prod/prod-cpu-head", 10001)
    assert not c.allows("ingress-nginx/peer", "ray-research/eval-sweep-head", 8265)  # not exposed
    assert c.allows("research-notebooks/peer", "ray-research/eval-sweep-head", 10001)
    assert not c.allows("research-notebooks/peer", "ray-research/eval-sweep-gpu-worker", 10001)
    assert not c.allows("research-notebooks/peer", "ray-prod/prod-cpu-head", 10001)


def test_egress_leaves_the_cluster_only_where_the_stack_allows(connectivity: Connectivity) -> None:
    c = connectivity
    for pod in ("ray-training/pretrain-v6e-head", "ray-serving/qwen-chat-gpu-worker", "ray-prod/prod-cpu-head"):
        assert c.allows(pod, "kube-system/kube-dns", 53, "UDP")
    assert c.reaches_address("ray-training/pretrain-v6e-tpu-worker", "52.216.8.10", 443)  # S3
    assert not c.reaches_address("ray-training/pretrain-v6e-tpu-worker", "52.216.8.10", 80)
    assert not c.reaches_address("ray-training/pretrain-v6e-tpu-worker", "10.1.2.3", 443)  # in-cluster
    assert not c.reaches_address("ray-prod/prod-cpu-head", "52.216.8.10", 443)
    assert not c.reaches_address("ray-serving/redis-gcs-0", "52.216.8.10", 443)
    # Only autoscaling heads reach the API server.
    assert c.reaches_address("ray-prod/prod-cpu-head", "172.16.0.2", 443)
    assert not c.reaches_address("ray-prod/prod-cpu-cpu-worker", "172.16.0.2", 443)
    assert not c.reaches_address("ray-training/pretrain-v6e-head", "172.16.0.2", 443)


def test_the_preview_writes_the_table_and_summary_shows_it() -> None:
    needs_nca()
    result = run_preview("prod")
    assert result.connectivity is not None and len(result.connectivity) > 20
    assert "ray-serving/qwen-chat-head => ray-serving/redis-gcs-0 : {protocols:TCP,dst_ports:6379}" in (
        result.connectivity
    )
    assert run_preview("dev").connectivity is None


def test_the_analyzers_connections_are_parsed_exactly() -> None:
    allowed = parse_connection("{protocols:TCP, UDP,dst_ports:53},{protocols:TCP,dst_ports:8000-8002,8265}")
    assert allowed.permits(53, "UDP") and allowed.permits(53) and allowed.permits(8001)
    assert allowed.permits(8265) and not allowed.permits(8003) and not allowed.permits(8001, "UDP")
    assert parse_connection("All connections").permits(1, "SCTP")
    with pytest.raises(ValueError, match="unexpected connection"):
        parse_connection("{something new}")
    c = Connectivity()
    assert report(c, {"x"}) == []


def test_the_analyzer_runs_while_the_preview_checks_and_stops_when_they_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The connectivity analyzer is a child process started before validation and the rules, so its
    time overlaps theirs; if the checks raise, it is killed and its files removed."""
    needs_nca()
    import tools.preview as preview

    started: list[connectivity_module.Analysis] = []
    real_analysis = connectivity_module.Analysis

    def recording(manifests: list[dict[str, Any]], nca: str) -> connectivity_module.Analysis:
        started.append(real_analysis(manifests, nca))
        return started[-1]

    seen: list[bool] = []
    real_judge = preview._judge

    def judge(*args: Any) -> None:
        seen.append(bool(started) and started[0]._proc.poll() is None)  # the analyzer is running meanwhile
        real_judge(*args)

    monkeypatch.setattr(preview, "Analysis", recording)
    monkeypatch.setattr(preview, "_judge", judge)
    assert run_preview("prod").connectivity and seen == [True]

    def failing(*args: Any) -> None:
        raise RuntimeError("a check failed")

    started.clear()
    monkeypatch.setattr(preview, "_judge", failing)
    with pytest.raises(RuntimeError, match="a check failed"):
        run_preview("prod")
    (analysis,) = started
    assert analysis._proc.returncode == -signal.SIGKILL and not Path(analysis._tmp.name).exists()
