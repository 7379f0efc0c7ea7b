"""Checks that every chart value the program sets exists in the chart's own values file."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

# chart name -> its default values file, relative to the CRD directory
VALUES_FILES = {
    "kuberay-operator": "kuberay/kuberay-operator-values.yaml",
    "kueue": "kueue/kueue-chart-values.yaml",
    "cert-manager": "cert-manager/cert-manager-chart-values.yaml",
    "pulumi-kubernetes-operator": "pulumi-kubernetes-operator/pulumi-operator-chart-values.yaml",
}
_KEY = re.compile(r"^( *)([A-Za-z][A-Za-z0-9_-]*):")
_COMMENTED_KEY = re.compile(r"^( *)# ?([a-z][A-Za-z0-9]*):")


def upstream_values(crd_dir: Path, chart: str) -> dict[str, Any] | None:
    """The chart's documented values. Keys that upstream documents only as commented-out YAML
    (``# watchNamespace:``, ``  # requests:``) count as existing, with free-form contents."""
    rel = VALUES_FILES.get(chart)
    if rel is None or not (crd_dir / rel).is_file():
        return None
    text = (crd_dir / rel).read_text()
    values = yaml.safe_load(text) or {}
    for parent, key in commented_keys(text):
        node = values
        for part in parent:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.setdefault(key, None)
    return values


def commented_keys(text: str) -> list[tuple[list[str], str]]:
    """(parent path, key) of each commented-out key, placed by its indentation."""
    found = []
    stack: list[tuple[int, str]] = []  # (indent, key) of the real keys enclosing the current line
    for line in text.splitlines():
        real = _KEY.match(line)
        commented = None if real else _COMMENTED_KEY.match(line)
        match = real or commented
        if match is None:
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if real:
            stack.append((indent, match.group(2)))
        else:
            found.append(([k for _, k in stack], match.group(2)))
    return found


def unknown_keys(values: Mapping[str, Any], upstream: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths in ``values`` that the upstream values do not have. Below an upstream key whose
    default is an empty map, a scalar, a list or null (free-form), anything goes."""
    missing = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        if key not in upstream:
            missing.append(path)
        elif isinstance(value, Mapping) and isinstance(upstream[key], Mapping) and upstream[key]:
            missing += unknown_keys(value, upstream[key], f"{path}.")
    return missing
