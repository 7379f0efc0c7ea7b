"""The README's "How to" snippets work: each one, added to the prod stack in order, still builds."""

from __future__ import annotations

import copy
import re
import textwrap

import yaml

from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.conftest import REPO


def snippets() -> list[dict]:
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## How to\n", 1)[1].split("\n## ", 1)[0]
    return [yaml.safe_load(textwrap.dedent(block)) for block in re.findall(r"```yaml\n(.*?)```", section, flags=re.S)]


def test_every_how_to_snippet_builds_on_the_prod_stack() -> None:
    found = snippets()
    assert [next(iter(s)) for s in found] == ["teams", "pools", "pools", "rayServices"]
    platform = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["kuberay-platform:platform"]
    platform = copy.deepcopy(platform)
    for snippet in found:
        key, value = next(iter(snippet.items()))
        if key == "teams":
            platform["teams"].update(value)
        elif key == "pools":
            platform["workloads"]["pools"].update(value)
        else:
            platform["workloads"]["rayServices"] += value
    # The new namespaces need what prod's policed namespaces need; everything else comes from the snippets.
    spec = parse_platform(platform, "README.md")
    manifests = build_manifests(spec, "README.md")
    names = {o["metadata"]["name"] for o in manifests.workloads}
    assert "embed" in names and "l4" in spec.workloads.pools and "vision" in spec.teams
