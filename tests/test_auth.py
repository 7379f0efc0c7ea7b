"""Ray token auth (``auth``): a token that outlives clusters from a config secret or an existing
Secret, Kubernetes-token auth where KubeRay allows it, and never the value in plain text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from components.stack_config import StackConfigError
from tests.conftest import REPO, minimal_platform
from tools.engine import RecordedResource, run_program

TOKEN = "tok-9e1f27c4"


def with_auth(auth: Any, **extra: Any) -> dict[str, Any]:
    data = minimal_platform(**extra)
    data["workloads"]["rayClusters"][0]["auth"] = auth
    return data


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def auth_options(data: dict[str, Any]) -> dict[str, Any]:
    (cluster,) = build_manifests(parse_platform(data, "s.yaml"), "s.yaml").workloads
    return dict(cluster["spec"]["authOptions"])


def run(data: dict[str, Any], token: str | None = TOKEN) -> list[RecordedResource]:
    config: dict[str, Any] = {"kuberay-platform:platform": data}
    if token is not None:
        config["kuberay-platform:rayToken"] = token
    return run_program(REPO, "test", config, secret_keys=["kuberay-platform:rayToken"])


def test_token_auth_is_on_by_default_and_kuberay_makes_the_token() -> None:
    assert auth_options(minimal_platform()) == {"mode": "token"}
    assert auth_options(with_auth("disabled")) == {"mode": "disabled"}


def test_a_config_secret_token_becomes_the_clusters_secret_before_the_cluster() -> None:
    data = with_auth({"token": {"config": "rayToken"}})
    assert auth_options(data) == {"mode": "token", "secretName": "c1-ray-token"}
    resources = run(data)
    (secret,) = [r for r in resources if r.type == "kubernetes:core/v1:Secret"]
    assert secret.inputs["metadata"]["name"] == "c1-ray-token" and secret.inputs["metadata"]["namespace"] == "ray"
    assert secret.inputs["stringData"] == "[secret]"  # the value is a Pulumi secret
    assert TOKEN not in json.dumps([r.inputs for r in resources])
    (cluster,) = [r for r in resources if r.type == "kubernetes:ray.io/v1:RayCluster"]
    assert secret.urn in cluster.dependencies


def test_a_missing_token_is_one_line_naming_the_command() -> None:
    with pytest.raises(StackConfigError) as info:
        run(with_auth({"token": {"config": "rayToken"}}), token=None)
    assert str(info.value) == (
        "stacks/Pulumi.test.yaml: config.kuberay-platform:rayToken: the Ray auth token is not set; run "
        "`pulumi config set --secret kuberay-platform:rayToken <value>` (it is stored encrypted)"
    )


def test_an_existing_token_secret_is_declared_and_holds_auth_token() -> None:
    data = with_auth({"token": {"secret": {"name": "ops-ray-token", "key": "auth_token"}}})
    lines = errors(data)
    assert any("workloads.rayClusters[0].auth.token.secret" in x and "prerequisites.secrets" in x for x in lines), lines
    data["prerequisites"] = {"secrets": [{"namespace": "ray", "name": "ops-ray-token", "keys": ["auth_token"]}]}
    assert auth_options(data) == {"mode": "token", "secretName": "ops-ray-token"}
    lines = errors(with_auth({"token": {"secret": {"name": "ops-ray-token"}}}))
    assert any("KubeRay reads the token from key auth_token" in x for x in lines), lines


def test_kubernetes_tokens_where_kuberay_supports_them() -> None:
    assert auth_options(with_auth({"kubernetesTokens": True})) == {"mode": "token", "enableK8sTokenAuth": True}
    data = minimal_platform()
    data["workloads"] = {
        "rayJobs": [
            {
                "name": "j",
                "namespace": "ray",
                "entrypoint": "python x.py",
                "auth": {"kubernetesTokens": True},
                "workerGroups": [{"name": "cpu", "maxReplicas": 1}],
            }
        ]
    }
    assert any("Kubernetes-token auth only for RayClusters, not RayJobs" in x for x in errors(data))
    old = with_auth({"kubernetesTokens": True})
    old["workloads"]["rayClusters"][0]["rayVersion"] = "2.54.0"
    assert any("needs Ray 2.55 or later (rayVersion 2.54.0)" in x for x in errors(old))


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        ({"mode": "disabled", "token": {"config": "k"}}, "token and kubernetesTokens need mode: token"),
        ({"token": {"config": "k"}, "kubernetesTokens": True}, "KubeRay refuses it together with a token Secret"),
        ({"token": {}}, "set exactly one of config"),
    ],
)
def test_contradictory_auth_is_a_config_error(auth: dict[str, Any], message: str) -> None:
    lines = errors(with_auth(auth))
    assert any(message in x for x in lines), lines
