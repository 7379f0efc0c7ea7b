"""``make new-stack``: a new stack file from a template stack file (``tools/new_stack.py``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from components.errors import ConfigError
from tests.conftest import REPO
from tools.new_stack import MODELINE, create

PLATFORM = "kuberay-platform:platform"


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    folder = tmp_path / "stacks"
    folder.mkdir()
    for name in ("dev", "staging"):
        shutil.copy(REPO / "stacks" / f"Pulumi.{name}.yaml", folder)
    return folder


def test_a_new_stack_has_the_templates_config_and_previews_clean(stacks: Path, tmp_path: Path) -> None:
    target, secrets = create("dev-alice", "dev", stacks=stacks)
    assert target == stacks / "Pulumi.dev-alice.yaml" and secrets == []
    text = target.read_text()
    assert text.startswith(MODELINE)
    assert yaml.safe_load(text)["config"] == yaml.safe_load((stacks / "Pulumi.dev.yaml").read_text())["config"]
    args = ["preview", "--stack", "dev-alice", "--stack-file", str(target), "--out", str(tmp_path / "out")]
    preview = subprocess.run(
        [sys.executable, "-m", "tools", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert preview.returncode == 0, preview.stderr
    assert (tmp_path / "out" / "dev-alice" / "summary.md").is_file()


def test_the_environment_can_change_and_encrypted_values_are_left_to_the_user(stacks: Path) -> None:
    template = yaml.safe_load((stacks / "Pulumi.staging.yaml").read_text())
    template["config"]["kuberay-platform:objectStoreKey"] = {"secure": "v1:AAAA"}
    (stacks / "Pulumi.staging.yaml").write_text(yaml.safe_dump(template))
    target, secrets = create("staging-eu", "staging", environment="prod", stacks=stacks)
    config = yaml.safe_load(target.read_text())["config"]
    assert config[PLATFORM]["environment"] == "prod"
    assert secrets == ["kuberay-platform:objectStoreKey"] and "kuberay-platform:objectStoreKey" not in config


@pytest.mark.parametrize(
    ("name", "template", "message"),
    [
        ("dev", "dev", "stacks/Pulumi.dev.yaml: exists already"),
        ("dev alice", "dev", "NAME=dev alice: a stack name is"),
        ("dev-bob", "nope", "stacks/Pulumi.nope.yaml (FROM=nope): stack file not found"),
    ],
)
def test_mistakes_get_one_line_and_write_nothing(stacks: Path, name: str, template: str, message: str) -> None:
    before = sorted(p.name for p in stacks.iterdir())
    with pytest.raises(ConfigError) as raised:
        create(name, template, stacks=stacks)
    (line,) = raised.value.lines
    assert line.startswith(message), line
    assert sorted(p.name for p in stacks.iterdir()) == before


def test_the_command_exits_2_on_a_mistake() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "new-stack", "--name", "dev", "--from", "dev"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "stacks/Pulumi.dev.yaml: exists already; pick another NAME or edit that file"
