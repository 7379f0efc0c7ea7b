"""Secrets never leave their Secret (issue 16): a known value planted in every config secret a stack
reads (Redis passwords, Ray auth tokens, Grafana's admin password), plus one it does not read, and
the preview's every output is searched for it: each file of ``out/<stack>/`` (manifests,
``plan.json``, ``summary.md``, ``connectivity.txt``), stdout and stderr, in plain text, base64 and
hex, for a preview that passes and for one that stops on a config mistake.

The real engine's output, state and rendered files are searched the same way by
``tests/test_real_engine.py`` (``make test-engine``)."""

from __future__ import annotations

import base64
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from components.spec import parse_platform
from components.stack_config import PROJECT, required_secret_config
from tests.conftest import REPO

STACK_FILES = sorted((REPO / "stacks").glob("Pulumi.*.yaml")) + sorted((REPO / "examples").glob("Pulumi.*.yaml"))
UNREAD_KEY = f"{PROJECT}:scanProbeUnread"
"""A config secret no part of the program reads: it must not surface either (no config dump)."""


def forms(value: str) -> list[bytes]:
    """The spellings a leaked value could take in a file: as is, base64 (a Secret's ``data``), hex."""
    raw = value.encode()
    return [raw, base64.b64encode(raw), raw.hex().encode()]


@dataclass
class Scan:
    returncode: int
    outputs: dict[str, bytes]
    """Every output by name: ``stdout``, ``stderr`` and each file under the output folder."""
    planted: dict[str, str]


def scan(stack_file: Path, tmp: Path, *, mistake: bool = False) -> Scan:
    """Preview ``stack_file`` with a fresh random value in every config secret it reads (and in one
    it does not), the way ``make preview`` runs it; collect every output."""
    stack = stack_file.name.removeprefix("Pulumi.").removesuffix(".yaml")
    doc = yaml.safe_load(stack_file.read_text())
    config = doc["config"]
    spec = parse_platform(config[f"{PROJECT}:platform"], str(stack_file))
    keys = [*required_secret_config(spec), UNREAD_KEY]
    planted = {key: f"planted{secrets.token_hex(12)}" for key in keys}
    config.update(planted)
    if mistake:
        config[f"{PROJECT}:platform"]["operator"]["scal"] = {}
    path = tmp / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "preview", "--stack", stack, "--stack-file", str(path), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        timeout=600,
    )
    outputs = {"stdout": proc.stdout, "stderr": proc.stderr}
    outputs |= {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return Scan(proc.returncode, outputs, planted)


def leaks(result: Scan) -> list[tuple[str, str]]:
    """(config key, output name) for every output holding a planted value in any spelling."""
    return [
        (key, name)
        for key, value in result.planted.items()
        for name, data in result.outputs.items()
        if any(form in data for form in forms(value))
    ]


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: p.name)
def test_no_planted_secret_appears_in_any_output_of_a_preview(stack_file: Path, tmp_path: Path) -> None:
    result = scan(stack_file, tmp_path)
    assert result.returncode in (0, 1), result.outputs["stderr"].decode()[-2000:]  # built: clean or findings
    assert {"stdout", "stderr"} < set(result.outputs)
    files = [name for name in result.outputs if name not in ("stdout", "stderr")]
    assert any(n.endswith("/plan.json") for n in files) and any(n.endswith("/summary.md") for n in files)
    assert len([n for n in files if "/manifests/" in n]) >= 5
    assert leaks(result) == []


def test_the_scan_finds_a_value_that_does_leak(tmp_path: Path) -> None:
    """The scan is not blind: a planted value written into an output, in each spelling, is found."""
    value = "v" * 16
    for spelling in forms(value):
        result = Scan(0, {"stdout": b"", "prod/manifests/x.yaml": b"k: " + spelling}, {"k": value})
        assert leaks(result) == [("k", "prod/manifests/x.yaml")], spelling


@pytest.mark.parametrize("stack_file", [REPO / "stacks" / "Pulumi.prod.yaml"], ids=lambda p: p.name)
def test_a_preview_stopped_by_a_mistake_shows_no_secret_either(stack_file: Path, tmp_path: Path) -> None:
    result = scan(stack_file, tmp_path, mistake=True)
    assert result.returncode == 2
    (line,) = result.outputs["stderr"].decode().strip().splitlines()
    assert "platform.operator.scal: unknown key" in line
    assert len(result.planted) == 3  # prod's Redis password, its RayService token, the unread probe
    assert leaks(result) == []
