"""Runs the rules over resources (offline preview) or plain Kubernetes objects (lint)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.manifests.ray_objects import metadata_of
from policies.rules import RESOURCE_RULES, STACK_RULES
from policies.rules.base import Resource, Rule, RuleContext, Violation, as_object, resource_type


def violation(rule_name: str, level: Any, obj: Mapping[str, Any], rtype: str, message: str) -> Violation:
    """A finding of ``rule_name`` about ``obj`` (kind, name, namespace read from the object)."""
    meta = metadata_of(obj)
    name = meta.get("name")
    namespace = meta.get("namespace")
    return Violation(
        policy=rule_name,
        enforcement=level,
        kind=str(obj.get("kind") or rtype.rsplit(":", 1)[-1]),
        name=str(name) if name is not None else "-",
        namespace=str(namespace) if namespace is not None else None,
        message=message,
    )


PolicyConfig = Mapping[str, Mapping[str, Any]]
"""A ``--policy-pack-config`` document: rule name -> {enforcementLevel, environment, options...}."""
NOT_OPTIONS = ("enforcementLevel", "environment")


def _settings(rule: Rule, ctx: RuleContext, config: PolicyConfig) -> tuple[str, RuleContext]:
    """The level and context a rule runs with: the policy config's entry, else the rule's defaults."""
    entry = config.get(rule.name, {})
    level = str(entry.get("enforcementLevel") or rule.level(ctx.environment))
    options = {**ctx.options, **{k: v for k, v in entry.items() if k not in NOT_OPTIONS}}
    return level, RuleContext(environment=ctx.environment, options=options, urns=ctx.urns, aliases=ctx.aliases)


def evaluate_resources(
    resources: list[Resource], ctx: RuleContext, config: PolicyConfig | None = None
) -> list[tuple[int, Violation]]:
    """(index of the resource, violation) for every resource rule and stack rule; -1 for a finding
    about an object the resources no longer have."""
    config = config or {}
    objects = [as_object(rtype, props) for rtype, props in resources]
    found: list[tuple[int, Violation]] = []
    for rule in RESOURCE_RULES:
        level, rule_ctx = _settings(rule, ctx, config)
        if level == "disabled":
            continue
        for i, ((rtype, _), obj) in enumerate(zip(resources, objects, strict=True)):
            if not rtype.startswith("kubernetes:"):
                continue
            found += [(i, violation(rule.name, level, obj, rtype, m)) for m in rule.check(rtype, obj, rule_ctx)]
    for stack_rule in STACK_RULES:
        level, rule_ctx = _settings(stack_rule, ctx, config)
        if level == "disabled":
            continue
        for subject, message in stack_rule.check(resources, rule_ctx):
            if isinstance(subject, int):
                rtype = resources[subject][0]
                found.append((subject, violation(stack_rule.name, level, objects[subject], rtype, message)))
            else:  # an object the stack no longer has: reported first
                found.append((-1, violation(stack_rule.name, level, subject, resource_type(subject), message)))
    found.sort(key=lambda pair: pair[0])
    return found


def evaluate(
    objects: Iterable[Mapping[str, Any]], ctx: RuleContext, config: PolicyConfig | None = None
) -> list[Violation]:
    """Every violation among plain Kubernetes objects judged together."""
    resources = [(resource_type(obj), obj) for obj in objects]
    return [v for _, v in evaluate_resources(resources, ctx, config)]
