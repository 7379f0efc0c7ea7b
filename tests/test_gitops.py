"""GitOps pull mode (``platform.gitops``): the Pulumi Kubernetes Operator and one Stack per environment."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.conftest import REPO
from tools.engine import run_program
from tools.schema import Validator

EXAMPLE = REPO / "examples" / "Pulumi.gitops.yaml"
STACK = "kubernetes:pulumi.com/v1:Stack"


def example() -> dict[str, Any]:
    return dict(yaml.safe_load(EXAMPLE.read_text())["config"]["kuberay-platform:platform"])


def stacks(platform: dict[str, Any]) -> dict[str, dict[str, Any]]:
    manifests = build_manifests(parse_platform(platform, "gitops.yaml"), "gitops.yaml")
    assert manifests.gitops is not None
    return {s["metadata"]["name"]: s for s in manifests.gitops.stacks}


def test_the_example_previews_clean(tmp_path: Path) -> None:
    args = ["preview", "--stack", "gitops", "--stack-file", str(EXAMPLE), "--out", str(tmp_path)]
    proc = subprocess.run([sys.executable, "-m", "tools", *args], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    kinds = [yaml.safe_load(p.read_text())["kind"] for p in (tmp_path / "gitops" / "manifests").glob("*.yaml")]
    assert kinds.count("Stack") == 3 and "ServiceAccount" in kinds


def test_one_stack_object_per_environment_tracks_the_repository_and_is_schema_valid() -> None:
    found = stacks(example())
    assert set(found) == {"dev", "staging", "prod"}
    prod = found["prod"]["spec"]
    assert prod["stack"] == "acme/kuberay-platform/prod"
    assert prod["projectRepo"] == "https://github.com/acme/kuberay-platform.git" and prod["branch"] == "main"
    assert prod["destroyOnFinalize"] is False and prod["resyncFrequencySeconds"] == 600
    assert prod["envRefs"]["PULUMI_ACCESS_TOKEN"] == {
        "type": "Secret",
        "secret": {"name": "pulumi-api", "key": "accessToken"},
    }
    assert found["dev"]["spec"]["destroyOnFinalize"] is True and found["dev"]["spec"]["resyncFrequencySeconds"] == 300
    validator = Validator("1.33")
    for obj in found.values():
        assert validator.validate(obj) == []
    broken = copy.deepcopy(found["dev"])
    broken["spec"]["resyncFrequencySeconds"] = "often"
    assert validator.validate(broken) != []


def test_the_workspaces_account_can_authenticate_the_operator_and_deploy() -> None:
    manifests = build_manifests(parse_platform(example(), "gitops.yaml"), "gitops.yaml")
    assert manifests.gitops is not None
    roles = {o["roleRef"]["name"] for o in manifests.gitops.access if o["kind"] == "ClusterRoleBinding"}
    assert roles == {"system:auth-delegator", "cluster-admin"}
    assert all(s["spec"]["serviceAccountName"] == "pulumi" for s in manifests.gitops.stacks)


def test_a_prod_stack_object_is_protected_and_the_chart_comes_first() -> None:
    resources = run_program(REPO, "test", {"kuberay-platform:platform": example()})
    by_name = {r.name: r for r in resources if r.type == STACK}
    assert set(by_name) == {"kuberay-gitops-stack-dev", "kuberay-gitops-stack-staging", "kuberay-gitops-stack-prod"}
    assert by_name["kuberay-gitops-stack-prod"].options.get("protect") is True
    assert not by_name["kuberay-gitops-stack-dev"].options.get("protect")
    chart = next(r for r in resources if r.type == "kubernetes:helm.sh/v4:Chart" and "gitops" in r.name)
    assert chart.inputs["chart"] == "oci://ghcr.io/pulumi/helm-charts/pulumi-kubernetes-operator"
    assert chart.inputs["version"] == "2.9.0"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda p: p["gitops"]["stacks"][2].update(destroyOnFinalize=True),
            "gitops.stacks[2].destroyOnFinalize: deleting the Stack object would destroy prod",
        ),
        (
            lambda p: p["prerequisites"].update(secrets=[]),
            "gitops.accessToken: Secret pulumi-kubernetes-operator/pulumi-api (key accessToken) is not declared",
        ),
        (lambda p: p["gitops"].pop("accessToken"), "gitops.accessToken: Pulumi Cloud (no backend set) needs"),
        (lambda p: p["gitops"]["stacks"].append(dict(p["gitops"]["stacks"][0])), "gitops.stacks: each name once"),
    ],
)
def test_mistakes_are_one_line_errors(change: Any, message: str) -> None:
    platform = copy.deepcopy(example())
    change(platform)
    with pytest.raises(ConfigError) as raised:
        build_manifests(parse_platform(platform, "gitops.yaml"), "gitops.yaml")
    assert any(message in line for line in raised.value.lines), raised.value.lines
