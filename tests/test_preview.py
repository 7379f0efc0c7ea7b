"""``make preview``: the dev stack end to end, outputs, and the promised exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, crd_without
from tools.preview import run_preview, write_outputs
from tools.schema import Validator


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tools", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def dev_preview(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("out")
    return cli("preview", "--stack", "dev", "--out", str(out)), out / "dev"


def test_the_dev_stack_previews_clean(dev_preview: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, out = dev_preview
    assert proc.returncode == 0, proc.stderr
    assert "0 schema errors, 0 mandatory" in proc.stdout
    assert {p.name for p in out.iterdir()} == {"manifests", "plan.json", "summary.md"}


def test_every_written_manifest_passes_strict_validation(
    dev_preview: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = dev_preview
    files = sorted((out / "manifests").glob("*.yaml"))
    kinds = []
    validator = Validator("1.33")
    for path in files:
        docs = list(yaml.safe_load_all(path.read_text()))
        assert len(docs) == 1, path  # one object per file
        assert validator.validate(docs[0]) == [], path
        kinds.append(docs[0]["kind"])
    # Namespaces first, then by kind: the operator's and the two teams' namespaces, each team's
    # LimitRange, ResourceQuota, Role and RoleBinding, a RayCluster per team and the nightly RayCronJob.
    assert (
        kinds
        == ["Namespace"] * 3
        + ["LimitRange"] * 2
        + ["RayCluster"] * 2
        + ["RayCronJob"]
        + ["ResourceQuota"] * 2
        + ["Role"] * 2
        + ["RoleBinding"] * 2
    )


def test_plan_json_has_the_promised_shape(dev_preview: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = dev_preview
    plan = json.loads((out / "plan.json").read_text())
    assert plan["stack"] == "dev" and plan["violations"] == []
    for res in plan["resources"]:
        assert set(res) >= {"type", "name", "parent", "inputs"}
    types = {r["type"] for r in plan["resources"]}
    assert {
        "kubernetes:ray.io/v1:RayCluster",
        "kubernetes:helm.sh/v4:Chart",
        "kuberay-platform:index:KubeRayOperator",
    } <= types
    cluster = next(r for r in plan["resources"] if r["type"] == "kubernetes:ray.io/v1:RayCluster")
    group = cluster["inputs"]["spec"]["workerGroupSpecs"][0]
    assert isinstance(group["maxReplicas"], int)  # not 4.0: the wire format's floats are undone


def test_summary_is_a_reviewable_markdown_report(dev_preview: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = dev_preview
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# kuberay-platform preview: stack `dev`")
    assert "**clean**" in summary
    assert "| RayCluster | ray-dev/dev-cpu | training | 2.60.0 |" in summary
    assert "| RayCronJob (0 3 * * *) | ray-dev/nightly-smoke | training |" in summary
    assert "## Capacity" in summary and "| RayCluster/ray-dev/dev-cpu | - | - | - |" in summary
    assert "| RayClusterMTLS | no |" in summary


def test_a_misspelled_key_exits_2_with_file_path_and_hint_and_no_traceback(tmp_path: Path) -> None:
    stack = (REPO / "stacks" / "Pulumi.dev.yaml").read_text().replace("scale: small", "scael: small")
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(stack)
    proc = cli("preview", "--stack", "dev", "--stack-file", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{path}: platform.operator.scael: unknown key; did you mean 'scale'?")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr + proc.stdout


def test_broken_yaml_and_missing_stacks_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  kuberay-platform:platform: {environment: dev\n")
    proc = cli("preview", "--stack", "dev", "--stack-file", str(path))
    assert proc.returncode == 2 and proc.stderr.startswith(f"{path}:3:1: not valid YAML")
    proc = cli("preview", "--stack", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "stacks/Pulumi.nope.yaml: stack file not found (create it, or pick another STACK)"


def test_other_crds_take_precedence_and_the_summary_names_them(tmp_path: Path) -> None:
    """``--crds`` (or $KUBERAY_PLATFORM_CRDS): a folder of other CRDs, e.g. another KubeRay release,
    overrides the project's schemas for the kinds it holds; the rest still validate."""
    other = tmp_path / "crds" / "kuberay"
    other.mkdir(parents=True)
    crd = crd_without("ray.io_rayclusters.json", "enableInTreeAutoscaling")
    (other / "ray.io_rayclusters.yaml").write_text(yaml.safe_dump(crd))
    proc = cli("preview", "--stack", "dev", "--crds", str(tmp_path / "crds"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1
    assert (
        "schema: RayCluster/ray-dev/dev-cpu: spec: Additional properties are not allowed "
        "('enableInTreeAutoscaling' was unexpected)" in proc.stderr
    )
    summary = (tmp_path / "out" / "dev" / "summary.md").read_text()
    # One error per RayCluster (two teams); the RayCronJob still validates against the project's schema.
    assert "blocked: 2 schema error(s)" in summary
    assert f"- overridden from `{tmp_path / 'crds'}` (--crds / $KUBERAY_PLATFORM_CRDS): ray.io/RayCluster" in summary
    plan = json.loads((tmp_path / "out" / "dev" / "plan.json").read_text())
    assert any("KubeRay 1.7.0" in line for line in plan["schemas"])


def test_the_summary_says_which_schemas_were_used(dev_preview: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = dev_preview
    summary = (out / "summary.md").read_text()
    assert "- project schemas (`schemas/`, pinned in `schemas/pins.yaml`): KubeRay 1.7.0, Kueue v0.19.2" in summary
    assert "overridden" not in summary


def test_a_missing_crd_folder_is_a_config_error(tmp_path: Path) -> None:
    proc = cli("preview", "--stack", "dev", "--crds", str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert f"CRD folder {tmp_path / 'nope'} not found" in proc.stderr and "Traceback" not in proc.stderr


def test_a_mandatory_violation_fails_the_preview(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import components.manifests.workloads as builder

    original = builder.ray_cluster

    def head_runs_tasks(*args, **kwargs):  # type: ignore[no-untyped-def]
        obj = original(*args, **kwargs)
        obj["spec"]["headGroupSpec"]["rayStartParams"].pop("num-cpus")
        return obj

    monkeypatch.setattr("components.manifests.platform.ray_cluster", head_runs_tasks)
    stack = (REPO / "stacks" / "Pulumi.dev.yaml").read_text().replace("environment: dev", "environment: prod")
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(stack)
    result = run_preview("dev", stack_path=path)
    # A dev stack promoted to prod also lacks prod's NetworkPolicies.
    assert sorted((v.policy, v.enforcement) for v in result.violations) == [
        ("head-runs-tasks", "mandatory"),  # one per team's RayCluster
        ("head-runs-tasks", "mandatory"),
        ("namespace-default-deny", "mandatory"),  # one per Ray namespace
        ("namespace-default-deny", "mandatory"),
    ]
    assert result.exit_code == 1
    write_outputs(result, tmp_path / "out")
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert plan["violations"][0]["policy"] == "head-runs-tasks"
    assert plan["violations"][0]["kind"] == "RayCluster" and plan["violations"][0]["namespace"] == "ray-dev"


def test_internal_errors_exit_101_without_traceback_unless_debug(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  kuberay-platform:platform: {environment: dev}\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tools.preview as p; p.run_program = None; from tools.__main__ import main; "
            f"sys.exit(main(['preview', '--stack', 'dev', '--stack-file', {str(path)!r}]))",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 101
    assert "internal error: TypeError" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_every_stack_previews_clean_with_no_policy_findings(stack: str) -> None:
    result = run_preview(stack)
    assert result.spec.environment == stack
    assert [str(e) for e in result.schema_errors] == []
    assert result.violations == []
    assert result.exit_code == 0


def test_the_prod_stack_switches_on_the_gates_its_workloads_use() -> None:
    result = run_preview("prod")
    chart = next(r for r in result.resources if r.type == "kubernetes:helm.sh/v4:Chart")
    gates = {g["name"]: g["enabled"] for g in chart.inputs["values"]["featureGates"]}
    assert gates["GCSFaultToleranceEmbeddedStorage"] and gates["RayClusterNetworkPolicy"]
    assert gates["RayClusterMTLS"] and not gates["RayCronJob"]  # research's clusters (untrusted team)
    assert chart.inputs["values"]["reconcileConcurrency"] == 20
    assert chart.inputs["values"]["watchNamespace"] == ["ray-prod", "ray-research", "ray-serving"]  # training: its own


def test_a_secret_platform_value_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  kuberay-platform:platform:\n    secure: AAABAOpaque==\n")
    proc = cli("preview", "--stack", "dev", "--stack-file", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().startswith(f"{path}: config.kuberay-platform:platform: must be a plain YAML mapping")
    assert "Traceback" not in proc.stderr


def test_a_clean_preview_prints_nothing_on_stderr(tmp_path: Path) -> None:
    """Diagnostics go to stderr only when there is something to fix (prod loads Ray Serve LLM)."""
    proc = cli("preview", "--stack", "prod", "--out", str(tmp_path))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    # The same run checks docs/pr-summary-prod.md, the example PR summary (make stack-schema).
    example = (REPO / "docs" / "pr-summary-prod.md").read_text()
    header, _, body = example.partition("\n")
    assert header.startswith("<!-- Generated by make stack-schema")
    assert body == (tmp_path / "prod" / "summary.md").read_text(), "docs/pr-summary-prod.md is stale: make stack-schema"
