"""The GitHub Actions workflows (``.github/workflows/``): valid against GitHub's workflow schema
(``check-jsonschema --builtin-schema vendor.github-workflows``, offline), pinned by commit SHA, and
running the same make targets CI runs here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def load(path: Path) -> dict[Any, Any]:
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return dict(doc)


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):", (REPO / "Makefile").read_text(), flags=re.M))


def make_targets_in(text: str) -> set[str]:
    """The targets of every ``make`` command in ``text`` (variables like STACK=... are not targets)."""
    found: set[str] = set()
    for match in re.finditer(r"\bmake((?:[ \t]+[A-Za-z0-9_.=\"'${}/-]+)+)", text):
        found |= {w for w in match.group(1).split() if "=" not in w and re.fullmatch(r"[a-z][a-z0-9-]*", w)}
    return found


def test_there_are_pull_request_main_and_deploy_workflows() -> None:
    assert {p.name for p in WORKFLOWS} == {"pull-request.yml", "main.yml", "deploy.yml"}


def test_every_workflow_passes_githubs_workflow_schema() -> None:
    checker = Path(sys.executable).parent / "check-jsonschema"
    proc = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_fails_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    doc = load(REPO / ".github" / "workflows" / "main.yml")
    doc["jobs"]["dev"]["runs-on-typo"] = "ubuntu-24.04"
    broken.write_text(yaml.safe_dump(doc))
    checker = Path(sys.executable).parent / "check-jsonschema"
    proc = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", str(broken)], capture_output=True, text=True
    )
    assert proc.returncode != 0


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_are_pinned_by_commit_sha(path: Path) -> None:
    for job in load(path)["jobs"].values():
        if "uses" in job:  # a reusable workflow of this repository
            assert job["uses"].startswith("./.github/workflows/")
        for step in job.get("steps", []):
            if "uses" in step:
                assert SHA_PIN.match(step["uses"]), step["uses"]
    for line in path.read_text().splitlines():
        if re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40}", line):
            assert re.search(r"# v\d+\.\d+\.\d+$", line), f"{path.name}: name the pinned version: {line.strip()}"


def test_workflows_and_ci_run_only_make_targets_that_exist() -> None:
    targets = makefile_targets()
    used = set()
    commands = {
        path.name: "\n".join(
            step.get("run", "") for job in load(path)["jobs"].values() for step in job.get("steps", [])
        )
        for path in WORKFLOWS
    }
    commands["ci/run"] = (REPO / ".ci" / "run").read_text()
    for name, text in commands.items():
        named = make_targets_in(text)
        assert named <= targets, f"{name}: no such make target: {sorted(named - targets)}"
        used |= named
    assert {"test", "preview", "venv-checks", "policy-venv"} <= used


def test_pull_requests_run_the_tests_and_preview_every_committed_stack() -> None:
    pr = load(REPO / ".github" / "workflows" / "pull-request.yml")
    assert pr["on"]["pull_request"]["branches"] == ["main"]
    steps = [s.get("run", "") for s in pr["jobs"]["test"]["steps"]]
    assert "make test" in steps
    preview = "\n".join(s.get("run", "") for s in pr["jobs"]["preview"]["steps"])
    committed = sorted(p.name.split(".")[1] for p in (REPO / "stacks").glob("Pulumi.*.yaml"))
    (listed,) = set(re.findall(r"for stack in ([a-z ]+); do", preview))
    assert sorted(listed.split()) == committed
    real = pr["jobs"]["pulumi-preview"]
    assert sorted(real["strategy"]["matrix"]["stack"]) == committed
    (action,) = [s for s in real["steps"] if s.get("uses", "").startswith("pulumi/actions@")]
    assert action["with"]["command"] == "preview" and action["with"]["policyPacks"] == "policies"


def test_main_deploys_dev_then_staging_then_prod_with_approval_and_one_update_per_stack() -> None:
    main = load(REPO / ".github" / "workflows" / "main.yml")
    jobs = main["jobs"]
    assert list(jobs) == ["dev", "staging", "prod"]
    assert "needs" not in jobs["dev"] and jobs["staging"]["needs"] == "dev" and jobs["prod"]["needs"] == "staging"
    assert jobs["prod"]["with"]["environment"] == "production"
    deploy = load(REPO / ".github" / "workflows" / "deploy.yml")
    (up,) = deploy["jobs"].values()
    assert up["environment"] == "${{ inputs.environment }}"
    assert up["concurrency"] == {"group": "pulumi-up-${{ inputs.stack }}", "cancel-in-progress": False}
    (action,) = [s for s in up["steps"] if s.get("uses", "").startswith("pulumi/actions@")]
    assert action["with"]["command"] == "up" and action["with"]["policyPacks"] == "policies"
