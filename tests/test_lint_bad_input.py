"""``make lint`` over input that cannot be linted (issue 16): one clear line per such file on stderr,
exit 2, and every other file still linted. Memory is bounded by refusing files over 10 MiB and alias
bombs before building their trees (figures in RELIABILITY.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO


def alias_bomb() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        name, previous = chr(ord("a") + i), chr(ord("a") + i - 1)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n" + "\n".join("  " + x for x in lines)


def test_each_unlintable_file_gets_one_line_and_the_rest_are_linted(tmp_path: Path) -> None:
    bad = {
        "syntax.yaml": "a: [1,\n",
        "list.yaml": "- 1\n- 2\n",
        "nokind.yaml": "apiVersion: v1\nmetadata: {name: x}\n",
        "bomb.yaml": alias_bomb(),
        "deep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {a: "
        + "[" * 3000
        + "]" * 3000
        + "}\n",
    }
    for name, text in bad.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "binary.yaml").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "empty.yaml").write_text("")
    with (tmp_path / "big.yaml").open("w") as big:
        big.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n")
        for i in range(11 * 1024):
            big.write(f"  k{i}: {'x' * 1024}\n")
    # A RayCluster whose head runs Ray tasks: a mandatory finding that must still be reported.
    sample = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "tasks-on-head", "namespace": "ray"},
        "spec": {
            "rayVersion": "2.60.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.60.0-py311"}]}},
            },
        },
    }
    (tmp_path / "good.yaml").write_text(yaml.safe_dump(sample))
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "lint", "--env", "prod", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    named = {Path(line.split(":", 1)[0]).name for line in lines}
    assert named == {"syntax.yaml", "list.yaml", "nokind.yaml", "bomb.yaml", "deep.yaml", "binary.yaml", "big.yaml"}, (
        lines
    )
    assert len(lines) == len(named)  # one line each
    assert any("alias bomb" in line for line in lines) and any(
        "over the lint limit of 10 MiB" in line for line in lines
    )
    # The good file was still linted.
    assert "good.yaml" in proc.stdout and "head-runs-tasks" in proc.stdout
