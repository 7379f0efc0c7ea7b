"""Runs the rules over plain Kubernetes objects (offline preview and lint)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.manifests.ray_objects import as_map
from policies.rules import RESOURCE_RULES
from policies.rules.base import ResourceRule, RuleContext, Violation, resource_type


def evaluate(
    objects: Iterable[Mapping[str, Any]], ctx: RuleContext, rules: list[ResourceRule] | None = None
) -> list[Violation]:
    violations: list[Violation] = []
    for obj in objects:
        meta = as_map(obj.get("metadata"))
        rtype = resource_type(obj)
        for rule in RESOURCE_RULES if rules is None else rules:
            level = rule.level(ctx.environment)
            if level == "disabled":
                continue
            for message in rule.check(rtype, obj, ctx):
                violations.append(
                    Violation(
                        policy=rule.name,
                        enforcement=level,
                        kind=str(obj.get("kind")),
                        name=str(meta.get("name")),
                        namespace=meta.get("namespace"),
                        message=message,
                    )
                )
    return violations
