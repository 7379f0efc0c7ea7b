"""Bad input (issue 16): Hypothesis mutates the shipped stack configs (wrong types, unknown keys,
out-of-range and huge numbers, empty and duplicated lists, unicode, missing parts, dangling
references) and every result is either a built platform or ``ConfigError`` lines that name the file
and the key path: never another exception. The count of configs tried is printed (RELIABILITY.md)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.conftest import REPO

SOURCE = "stacks/Pulumi.fuzz.yaml"
STACKS = {
    name: yaml.safe_load((REPO / "stacks" / f"Pulumi.{name}.yaml").read_text())["config"]["kuberay-platform:platform"]
    for name in ("dev", "staging", "prod")
}
TRIED = {"configs": 0, "valid": 0, "errors": 0}


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from paths(value, (*prefix, i))


ALL_PATHS = {name: [p for p in paths(doc) if p] for name, doc in STACKS.items()}

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["", "0", "-1", "1e309", "ünïcødé-名前", "a" * 300, "NVIDIA-H100", "nope", "2Ti", "-5Gi"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=8), st.integers(), max_size=3),
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    stack = draw(st.sampled_from(sorted(STACKS)))
    doc = copy.deepcopy(STACKS[stack])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        live = [p for p in paths(doc) if p]
        path = draw(st.sampled_from(live or ALL_PATHS[stack]))
        parent: Any = doc
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        kind = draw(st.sampled_from(["replace", "delete", "unknown-key", "empty", "duplicate", "dangle"]))
        if kind == "replace":
            parent[key] = draw(values)
        elif kind == "delete":
            del parent[key]
        elif kind == "unknown-key" and isinstance(parent[key], dict):
            parent[key][draw(st.text(min_size=1, max_size=12))] = draw(values)
        elif kind == "empty" and isinstance(parent[key], (list, dict)):
            parent[key] = type(parent[key])()
        elif kind == "duplicate" and isinstance(parent[key], list) and parent[key]:
            parent[key].append(copy.deepcopy(parent[key][0]))
        elif kind == "dangle" and isinstance(parent[key], str):
            parent[key] = parent[key] + "-missing"  # a pool, queue, Secret or Redis that does not exist
    return stack, doc


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_stack_builds_or_fails_with_one_line_errors(case: tuple[str, dict[str, Any]]) -> None:
    _, doc = case
    TRIED["configs"] += 1
    try:
        build_manifests(parse_platform(doc, SOURCE), SOURCE)
    except ConfigError as exc:
        TRIED["errors"] += 1
        assert exc.lines
        for line in exc.lines:
            assert line.startswith(f"{SOURCE}: platform"), line
            assert "\n" not in line and "Traceback" not in line, line
    else:
        TRIED["valid"] += 1


def test_report_the_count_tried(capsys: pytest.CaptureFixture[str]) -> None:
    """Both outcomes happened (the mutations reach valid configs and refused ones alike)."""
    assert TRIED["configs"] >= 1000 and TRIED["valid"] > 0 and TRIED["errors"] > 0, TRIED
    with capsys.disabled():
        print(
            f"\nbad input: {TRIED['configs']} mutated stack configs, {TRIED['valid']} built, "
            f"{TRIED['errors']} refused with one-line errors naming file and key path, 0 other exceptions"
        )
