"""``make lint``: the same rules over any YAML a user already has."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from lark import Lark

from tests.conftest import REPO, crd_without
from tools.lint import lint

GOLDEN = yaml.safe_load((REPO / "tests/data/policies/golden-raycluster.yaml").read_text())


def bad_cluster(name: str) -> dict:
    obj = copy.deepcopy(GOLDEN)
    obj["metadata"]["name"] = name
    obj["spec"]["headGroupSpec"]["rayStartParams"] = {}
    return obj


def make_lint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", "lint", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_multi_document_files_lists_and_folders(tmp_path: Path) -> None:
    (tmp_path / "multi.yaml").write_text(yaml.safe_dump_all([GOLDEN, bad_cluster("a")]))
    sub = tmp_path / "more"
    sub.mkdir()
    (sub / "list.yml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [bad_cluster("b")]}))
    (sub / "notes.txt").write_text("ignored: not YAML by suffix")
    findings = lint([str(tmp_path)], "prod")
    assert [(Path(p).name, v.name, v.policy) for p, v in findings] == [
        ("list.yml", "b", "head-runs-tasks"),
        ("multi.yaml", "a", "head-runs-tasks"),
    ]


def test_an_anti_pattern_is_flagged_and_its_fixed_twin_is_not(tmp_path: Path) -> None:
    fixed = copy.deepcopy(GOLDEN)
    fixed["metadata"]["name"] = "twin"
    (tmp_path / "pair.yaml").write_text(yaml.safe_dump_all([bad_cluster("anti"), fixed]))
    assert [v.name for _, v in lint([str(tmp_path / "pair.yaml")], "prod")] == ["anti"]


def test_make_lint_json_output_and_exit_code(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad_cluster("bad")))
    proc = make_lint("ENV=prod", f"FILES={path}", "FORMAT=json")
    assert proc.returncode == 2  # make's own status when the tool exits 1
    doc = json.loads(proc.stdout)
    assert doc == {
        "violations": [
            {
                "policy": "head-runs-tasks",
                "enforcement": "mandatory",
                "kind": "RayCluster",
                "name": "bad",
                "namespace": "ray",
                "message": 'spec.headGroupSpec.rayStartParams: set num-cpus: "0" so tasks and actors are never '
                "scheduled on the head",
            }
        ]
    }


def test_the_tool_exit_codes(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad_cluster("bad")))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tools", "lint", *args], cwd=REPO, capture_output=True, text=True)

    prod = run("--env", "prod", str(path))
    assert prod.returncode == 1
    assert prod.stdout.strip() == (
        f'{path}: RayCluster/bad: head-runs-tasks: spec.headGroupSpec.rayStartParams: set num-cpus: "0" so tasks '
        "and actors are never scheduled on the head [mandatory]"
    )
    assert run("--env", "dev", str(path)).returncode == 0  # advisory in dev
    missing = run(str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and missing.stderr.strip() == f"{tmp_path / 'nope.yaml'}: no such file or folder"
    (tmp_path / "broken.yaml").write_text("a: [\n")
    broken = run(str(tmp_path / "broken.yaml"))
    assert broken.returncode == 2 and "broken.yaml:2:1: not valid YAML" in broken.stderr


def test_make_lint_without_files_prints_usage() -> None:
    proc = make_lint()
    assert proc.returncode == 2 and "usage: make lint" in proc.stderr


def test_every_upstream_sample_lints_without_an_internal_error(samples_dir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "lint", "--env", "prod", "--format", "json", str(samples_dir)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "internal error" not in proc.stderr
    assert isinstance(json.loads(proc.stdout)["violations"], list)


def test_make_lint_never_builds_the_spec_models(samples_dir: Path) -> None:
    """Linting every upstream sample imports neither pydantic nor the stack spec (nor Ray in the
    checks group's mode): a second of every lint's start-up that judging manifests never needs."""
    code = (
        "import contextlib, io, sys\n"
        "from tools.__main__ import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['lint', '--env', 'prod', {str(samples_dir)!r}])\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('pydantic', 'ray') or 'components.spec' in m]\n"
        "print(sorted(heavy))"
    )
    env = {**os.environ, "KUBERAY_PLATFORM_SERVE_VALIDATION": "schema"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env, check=True)
    assert proc.stdout.strip() == "[]", proc.stdout[:500]


def _rocksdb_cluster() -> dict:
    obj = copy.deepcopy(GOLDEN)
    obj["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb"}
    return obj


def _operator(gates: str) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kuberay-operator", "namespace": "kuberay-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "kuberay-operator"}},
            "template": {
                "metadata": {"labels": {"app": "kuberay-operator"}},
                "spec": {"containers": [{"name": "kuberay-operator", "args": [f"--feature-gates={gates}"]}]},
            },
        },
    }


def test_stack_rules_apply_across_all_files_given_together(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(_rocksdb_cluster()))
    alone = lint([str(tmp_path / "cluster.yaml")], "prod")
    assert [(Path(p).name, v.policy, v.enforcement) for p, v in alone] == [
        ("cluster.yaml", "feature-gates-unknown", "advisory")
    ]
    (tmp_path / "operator.yaml").write_text(yaml.safe_dump(_operator("GCSFaultToleranceEmbeddedStorage=true")))
    assert lint([str(tmp_path / "cluster.yaml"), str(tmp_path / "operator.yaml")], "prod") == []


def test_a_policy_config_changes_levels_for_lint(tmp_path: Path) -> None:
    obj = copy.deepcopy(GOLDEN)
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"] = "rayproject/ray:2.60.0-py311"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(obj))
    assert lint([str(tmp_path / "c.yaml")], "prod") == []  # image-digest is opt-in
    config = tmp_path / "prod.json"
    config.write_text(json.dumps({"image-digest": {"enforcementLevel": "mandatory", "environment": "prod"}}))
    proc = make_lint("ENV=prod", f"FILES={tmp_path / 'c.yaml'}", f"POLICY_CONFIG={config}")
    assert proc.returncode == 2 and "image-digest" in proc.stdout and "[mandatory]" in proc.stdout


def test_a_broken_policy_config_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text(json.dumps({"image-digets": {"enforcementLevel": "blocking"}}))
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "lint", "--policy-config", str(config), str(REPO / "tests/data/policies")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"{config}: image-digets: unknown policy (see POLICIES.md)"


# --- Schema validation (the same strict schemas and CEL rules as make preview) -----------------


def _misspelled() -> dict:
    obj = copy.deepcopy(GOLDEN)
    obj["spec"]["headGroupSpec"]["rayStartParam"] = obj["spec"]["headGroupSpec"].pop("rayStartParams")
    obj["spec"]["workerGroupSpecs"][0]["maxReplicas"] = "ten"
    return obj


def test_lint_reports_schema_errors_as_mandatory_findings_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(_misspelled()))
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "lint", "--env", "dev", "--format", "json", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr
    schema = [v for v in json.loads(proc.stdout)["violations"] if v["policy"] == "schema"]
    assert {v["enforcement"] for v in schema} == {"mandatory"}
    assert {(v["kind"], v["name"]) for v in schema} == {("RayCluster", GOLDEN["metadata"]["name"])}
    assert sorted(v["message"] for v in schema) == [
        "spec.headGroupSpec: Additional properties are not allowed ('rayStartParam' was unexpected)",
        "spec.workerGroupSpecs[0].maxReplicas: 'ten' is not of type 'integer'",
    ]


def test_make_lint_text_output_shows_schema_findings(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(_misspelled()))
    proc = make_lint("ENV=dev", f"FILES={path}")
    assert proc.returncode == 2  # make's status for the tool's exit 1
    name = GOLDEN["metadata"]["name"]
    assert (
        f"{path}: RayCluster/{name}: schema: spec.workerGroupSpecs[0].maxReplicas: 'ten' is not of type 'integer' "
        "[mandatory]" in proc.stdout.splitlines()
    )


def test_a_cel_rule_of_the_crd_is_a_schema_finding(tmp_path: Path) -> None:
    obj = copy.deepcopy(GOLDEN)
    obj["spec"]["managedBy"] = "kueue"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(obj))
    schema = [v for _, v in lint([str(tmp_path)], "dev") if v.policy == "schema"]
    assert [v.message for v in schema] == [
        "spec.managedBy: the managedBy field value must be either 'ray.io/kuberay-operator' or "
        "'kueue.x-k8s.io/multikueue'"
    ]


def test_a_kind_without_a_schema_is_an_advisory_finding_not_a_silent_pass(tmp_path: Path) -> None:
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}, "spec": {}}
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(queue))
    ((_, finding),) = lint([str(tmp_path)], "prod")
    assert (finding.policy, finding.enforcement, finding.kind, finding.name) == ("schema", "advisory", "Queue", "q")
    assert finding.message.startswith("not validated: no schema for scheduling.volcano.sh/v1beta1 Queue")
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "lint", str(tmp_path)], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "[advisory]" in proc.stdout


def test_lint_validates_core_kinds_for_the_kubernetes_version_given(tmp_path: Path) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spec": {"finalizer": []}}
    (tmp_path / "ns.yaml").write_text(yaml.safe_dump(ns))
    ((_, finding),) = lint([str(tmp_path)], "prod", kubernetes_version="1.34")
    assert finding.policy == "schema" and "'finalizer' was unexpected" in finding.message


def test_lint_takes_other_crds_too(tmp_path: Path) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "rc.yaml").write_text(yaml.safe_dump(crd_without("ray.io_rayclusters.json", "headGroupSpec")))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(GOLDEN))
    found = [v.message for _, v in lint([str(tmp_path / "c.yaml")], "prod", crd_dir=crds) if v.policy == "schema"]
    assert found == ["spec: Additional properties are not allowed ('headGroupSpec' was unexpected)"]


def test_a_kubernetes_version_without_schemas_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(GOLDEN))
    for version, expected in (
        ("abc", "expected a minor version such as 1.33"),
        ("1.2", "no Kubernetes schemas for 1.2"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "tools", "lint", "--kubernetes-version", version, str(tmp_path)],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2 and expected in proc.stderr and "Traceback" not in proc.stderr


def test_the_cel_parser_is_saved_once_and_a_broken_save_is_rebuilt(tmp_path: Path) -> None:
    """Its LALR tables come from the cache after the first run; a missing, truncated or foreign file
    is rebuilt by celpy itself, and every run finds the same CEL violation."""
    obj = copy.deepcopy(GOLDEN)
    obj["spec"]["managedBy"] = "kueue"
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "c.yaml").write_text(yaml.safe_dump(obj))
    cache = tmp_path / "cache"
    env = {**os.environ, "KUBERAY_PLATFORM_CACHE": str(cache), "KUBERAY_PLATFORM_SERVE_VALIDATION": "schema"}
    command = [sys.executable, "-m", "tools", "lint", "--env", "dev", "--format", "json", str(tmp_path / "manifests")]

    def cel_findings() -> list[str]:
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env)
        assert proc.returncode == 1, proc.stderr
        return [v["message"] for v in json.loads(proc.stdout)["violations"] if v["policy"] == "schema"]

    expected = cel_findings()
    assert expected and "managedBy" in expected[0]
    (saved,) = (cache / "cel").iterdir()
    first = saved.read_bytes()
    assert cel_findings() == expected and saved.read_bytes() == first  # read, not rebuilt
    for broken in (first[: len(first) // 2], b"not a pickle"):
        saved.write_bytes(broken)
        assert cel_findings() == expected
        with saved.open("rb") as f:
            assert Lark.load(f).parse("self.x == 1")  # saved again, whole
