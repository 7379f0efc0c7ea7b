"""Determinism (issue 16): previewing the same stack twice, from two processes with different hash
seeds, writes byte-identical ``out/`` (stable ordering, no timestamps, no random names)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def preview(stack: str, out: Path, seed: str) -> dict[str, bytes]:
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "preview", "--stack", stack, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONHASHSEED": seed},
    )
    assert proc.returncode == 0, proc.stderr
    root = out / stack
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_two_previews_write_byte_identical_outputs(stack: str, tmp_path: Path) -> None:
    first = preview(stack, tmp_path / "a", "1")
    second = preview(stack, tmp_path / "b", "2")
    assert {"summary.md", "plan.json"} <= set(first)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []
