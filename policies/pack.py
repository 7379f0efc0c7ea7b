"""Wraps the pure rules as pulumi_policy policies (without starting the analyzer server).

The environment reaches the rules through policy config: ``pulumi preview --policy-pack policies
--policy-pack-config policies/config/<env>.json``. Each file sets, per policy, ``environment`` and
the ``enforcementLevel`` from the rule's level table; ``make policy-config`` regenerates them and a
test keeps them in sync. Without config the pack judges as for prod.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from policies.rules import RESOURCE_RULES, STACK_RULES
from policies.rules.base import DEFAULT_ENVIRONMENT, ENVIRONMENTS, ResourceRule, Rule, RuleContext, StackRule, as_object

PACK_NAME = "kuberay-platform-policies"
CONFIG_DIR = Path(__file__).resolve().parent / "config"
_LEVELS = {
    "mandatory": EnforcementLevel.MANDATORY,
    "advisory": EnforcementLevel.ADVISORY,
    "disabled": EnforcementLevel.DISABLED,
}


def _schema(rule: Rule) -> PolicyConfigSchema:
    properties: dict[str, dict[str, Any]] = {
        "environment": {"type": "string", "enum": list(ENVIRONMENTS), "default": DEFAULT_ENVIRONMENT}
    }
    properties.update({k: dict(v) for k, v in rule.options.items()})
    return PolicyConfigSchema(properties=properties)


def _context(config: Mapping[str, Any]) -> RuleContext:
    env = str(config.get("environment", DEFAULT_ENVIRONMENT))
    return RuleContext(environment=env, options={k: v for k, v in config.items() if k != "environment"})


def _resource_policy(rule: ResourceRule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if not args.resource_type.startswith("kubernetes:"):
            return
        obj = as_object(args.resource_type, args.props)
        for message in rule.check(args.resource_type, obj, _context(args.get_config())):
            report_violation(message, None)

    return ResourceValidationPolicy(
        name=rule.name,
        description=rule.description,
        validate=validate,
        enforcement_level=_LEVELS[rule.level(DEFAULT_ENVIRONMENT)],
        config_schema=_schema(rule),
    )


def _stack_policy(rule: StackRule) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [(r.resource_type, r.props) for r in args.resources]
        for index, message in rule.check(resources, _context(args.get_config())):
            report_violation(message, args.resources[index].urn)

    return StackValidationPolicy(
        name=rule.name,
        description=rule.description,
        validate=validate,
        enforcement_level=_LEVELS[rule.level(DEFAULT_ENVIRONMENT)],
        config_schema=_schema(rule),
    )


def build_policies() -> list[Policy]:
    policies: list[Policy] = [_resource_policy(rule) for rule in RESOURCE_RULES]
    policies += [_stack_policy(rule) for rule in STACK_RULES]
    return policies


def policy_config(environment: str) -> dict[str, Any]:
    """The ``--policy-pack-config`` document for one environment."""
    rules: list[Rule] = [*RESOURCE_RULES, *STACK_RULES]
    return {rule.name: {"enforcementLevel": rule.level(environment), "environment": environment} for rule in rules}


def write_policy_configs(directory: Path = CONFIG_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for env in ENVIRONMENTS:
        path = directory / f"{env}.json"
        path.write_text(json.dumps(policy_config(env), indent=2, sort_keys=True) + "\n")
        paths.append(path)
    return paths
