"""The dependency groups: each hand-written ``.in`` file and its locked, hashed ``.txt``.

- ``requirements.txt``: the Pulumi program (``pulumi up`` installs it into ``.venv``);
- ``policies/requirements.txt``: the policy pack, in its own ``policies/venv``;
- ``requirements/checks.txt``: ``make preview``, ``make lint``, ``make policy-config``;
- ``requirements/dev.txt``: ``make test``, ``make check``, ``make bench``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
# lock -> the .in file it is compiled from
GROUPS = {
    "requirements.txt": "requirements.in",
    "policies/requirements.txt": "policies/requirements.in",
    "requirements/checks.txt": "requirements/checks.in",
    "requirements/dev.txt": "requirements/dev.in",
}
RUNTIME, POLICY, CHECKS, DEV = GROUPS
TOOL_GROUPS = {"requirements/nca.txt": "requirements/nca.in", "requirements/checkov.txt": "requirements/checkov.in"}
"""Tools in a virtualenv of their own (``.venv-nca``, ``.venv-checkov``): their packages pin
dependencies exactly, at versions the other groups need not share."""
HEAVY = {"ray", "pyarrow"}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(\S+)$")


def normalize(name: str) -> str:
    """PEP 503 name: ``PyYAML`` and ``pyyaml``, ``pulumi_kubernetes`` and ``pulumi-kubernetes`` agree."""
    return re.sub(r"[-_.]+", "-", name).lower()


def entries(text: str) -> list[str]:
    """A requirements file's logical lines: continuations joined, comments and blanks dropped."""
    joined = re.sub(r"\\\n", " ", text)
    lines = (line.split(" #", 1)[0].strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def lock_pins(text: str) -> dict[str, str]:
    """name -> version of every requirement in a lock; anything not pinned with ``==`` is an error."""
    pins: dict[str, str] = {}
    for entry in entries(text):
        requirement = entry.split()[0]
        if requirement.startswith("-"):
            raise ValueError(f"a lock holds only pinned requirements, found option {requirement!r}")
        match = _PIN.match(requirement)
        if match is None:
            raise ValueError(f"not pinned with ==: {requirement!r}")
        pins[normalize(match[1])] = match[3]
    return pins


def unhashed(text: str) -> list[str]:
    """The requirements of a lock that carry no ``--hash=sha256:``."""
    return [entry.split()[0] for entry in entries(text) if "--hash=sha256:" not in entry]


def top_level_pins(in_file: Path) -> dict[str, str]:
    """The ``name==version`` lines of a ``.in`` file, following ``-r`` includes (relative to the file)."""
    pins: dict[str, str] = {}
    for entry in entries(in_file.read_text()):
        if entry.startswith("-r "):
            pins.update(top_level_pins(in_file.parent / entry.split(None, 1)[1]))
            continue
        match = _PIN.match(entry)
        if match is None:
            raise ValueError(f"{in_file}: top-level requirements are pinned with ==: {entry!r}")
        pins[normalize(match[1])] = match[3]
    return pins


def locked(lock: str) -> dict[str, str]:
    return lock_pins((ROOT / lock).read_text())


# The parsers above must be able to say no, or the tests below prove nothing.
def test_a_requirement_without_a_hash_is_found() -> None:
    text = "a==1 \\\n    --hash=sha256:00\n    # via b\nb==2\n"
    assert unhashed(text) == ["b==2"]


def test_an_unpinned_requirement_or_an_option_is_not_a_lock() -> None:
    with pytest.raises(ValueError, match="not pinned"):
        lock_pins("ray>=2.60 \\\n    --hash=sha256:00\n")
    with pytest.raises(ValueError, match="option"):
        lock_pins("--find-links /opt/wheels\n")


def test_names_are_compared_normalized() -> None:
    assert lock_pins("PyYAML==6.0.3 --hash=sha256:00\npulumi_kubernetes==4.34.2 --hash=sha256:00\n") == {
        "pyyaml": "6.0.3",
        "pulumi-kubernetes": "4.34.2",
    }


@pytest.mark.parametrize("lock", {**GROUPS, **TOOL_GROUPS})
def test_every_locked_requirement_carries_a_sha256_hash(lock: str) -> None:
    text = (ROOT / lock).read_text()
    assert locked(lock), f"{lock} is empty"
    assert unhashed(text) == [], f"{lock}: run `make lock`"


def test_all_locks_agree_on_every_shared_version() -> None:
    seen: dict[str, tuple[str, str]] = {}
    disagreements = []
    for lock in GROUPS:
        for name, version in locked(lock).items():
            first = seen.setdefault(name, (version, lock))
            if first[0] != version:
                disagreements.append(f"{name}: {first[0]} in {first[1]}, {version} in {lock}")
    assert disagreements == []


@pytest.mark.parametrize(("lock", "source"), {**GROUPS, **TOOL_GROUPS}.items())
def test_each_top_level_pin_is_locked_at_its_version(lock: str, source: str) -> None:
    pins = top_level_pins(ROOT / source)
    have = locked(lock)
    assert pins, f"{source} pins nothing"
    assert {name: have.get(name) for name in pins} == pins


@pytest.mark.parametrize(("smaller", "larger"), [(RUNTIME, CHECKS), (POLICY, CHECKS), (CHECKS, DEV)])
def test_each_group_contains_the_groups_it_builds_on(smaller: str, larger: str) -> None:
    assert set(locked(smaller)) - set(locked(larger)) == set()


def test_the_program_runtime_is_only_the_program_and_its_dependencies() -> None:
    assert set(top_level_pins(ROOT / "requirements.in")) == {"pulumi", "pulumi-kubernetes", "pydantic", "pyyaml"}
    have = set(locked(RUNTIME))
    assert have & {*HEAVY, "kubernetes-validate", "pytest", "pulumi-policy", "jsonschema", "cel-python"} == set()


def test_the_policy_pack_runtime_has_neither_ray_nor_pyarrow() -> None:
    assert set(locked(POLICY)) & HEAVY == set()
    assert {"pulumi-policy", "pulumi", "pydantic", "pyyaml", "protobuf"} <= set(locked(POLICY))


def test_the_checks_group_has_neither_ray_nor_pyarrow_and_dev_has_both() -> None:
    assert set(locked(CHECKS)) & HEAVY == set()
    assert set(locked(DEV)) >= HEAVY


def test_the_analyzer_has_its_own_virtualenv_that_preview_and_test_install() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "NCA_VENV := .venv-nca" in makefile and "NCA_LOCK := requirements/nca.txt" in makefile
    for target in ("preview", "test"):
        (line,) = [x for x in makefile.splitlines() if x.startswith(f"{target}:")]
        assert "$(NCA_STAMP)" in line, line
    assert "network-config-analyzer" in locked("requirements/nca.txt")
    assert not set(locked("requirements/nca.txt")) & {"pulumi", "ray", "pydantic"}


def test_checkov_is_installed_for_the_benchmark_only() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "CHECKOV_VENV := .venv-checkov" in makefile and "CHECKOV_LOCK := requirements/checkov.txt" in makefile
    rules = [x for x in makefile.splitlines() if re.match(r"^[a-z-]+:[^=]", x)]
    needing = {x.split(":", 1)[0] for x in rules if "$(CHECKOV_STAMP)" in x}
    assert needing == {"checkov-venv", "bench"}  # never preview, lint, test or the product
    assert "checkov" in locked("requirements/checkov.txt")
    assert not set(locked("requirements/checkov.txt")) & {"pulumi", "ray"}


def test_the_policy_pack_has_its_own_virtualenv_inside_the_pack() -> None:
    pack = ROOT / "policies"
    options = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())["runtime"]["options"]
    assert options["toolchain"] == "pip"
    venv = (pack / options["virtualenv"]).resolve()
    # the CLI resolves a relative virtualenv against the pack's folder and installs its requirements.txt
    assert venv.parent == pack, f"virtualenv {options['virtualenv']!r} is not the pack's own"
    assert (pack / "requirements.txt").is_file()
    ignored = (ROOT / ".gitignore").read_text().split()
    assert f"policies/{options['virtualenv']}/" in ignored


def test_the_program_venv_is_the_one_pulumi_installs_requirements_txt_into() -> None:
    options = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["runtime"]["options"]
    assert options == {"toolchain": "pip", "virtualenv": ".venv"}


# Without Ray (checks group, policy pack venv) serve configs are checked against the generated schemas.
def test_the_prod_preview_runs_clean_without_ray(tmp_path: Path) -> None:
    """The prod stack has an LLM RayService: with Ray hidden (as in the checks group) the preview
    still validates its serve config (schemas/ray/) and stays clean."""
    code = (
        "import runpy, sys; sys.modules['ray'] = None; "
        f"sys.argv = ['tools', 'preview', '--stack', 'prod', '--out', {str(tmp_path)!r}]; "
        "runpy.run_module('tools', run_name='__main__')"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "0 schema errors, 0 mandatory" in done.stdout
    assert (tmp_path / "prod" / "plan.json").is_file()
