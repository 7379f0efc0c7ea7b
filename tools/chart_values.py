"""Checks that every chart value the program sets exists in the chart's own values file (the
values come from the project's schemas: ``SchemaStore.chart_values``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
