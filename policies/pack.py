"""Wraps the pure rules as pulumi_policy policies (without starting the analyzer server).

The environment reaches the rules through policy config: ``pulumi preview --policy-pack policies
--policy-pack-config policies/config/<env>.json``. Each file sets, per policy, ``environment`` and
the ``enforcementLevel`` from the rule's level table; ``make policy-config`` regenerates them and a
test keeps them in sync. Without config the pack judges as for prod.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from policies.rules import RESOURCE_RULES
from policies.rules.base import DEFAULT_ENVIRONMENT, ENVIRONMENTS, ResourceRule, RuleContext

PACK_NAME = "kuberay-platform-policies"
CONFIG_DIR = Path(__file__).resolve().parent / "config"
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={"environment": {"type": "string", "enum": list(ENVIRONMENTS), "default": DEFAULT_ENVIRONMENT}}
)
_LEVELS = {
    "mandatory": EnforcementLevel.MANDATORY,
    "advisory": EnforcementLevel.ADVISORY,
    "disabled": EnforcementLevel.DISABLED,
}


def _resource_policy(rule: ResourceRule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if not args.resource_type.startswith("kubernetes:"):
            return
        env = str(args.get_config().get("environment", DEFAULT_ENVIRONMENT))
        for message in rule.check(args.resource_type, args.props, RuleContext(environment=env)):
            report_violation(message, None)

    return ResourceValidationPolicy(
        name=rule.name,
        description=rule.description,
        validate=validate,
        enforcement_level=_LEVELS[rule.level(DEFAULT_ENVIRONMENT)],
        config_schema=CONFIG_SCHEMA,
    )


def build_policies() -> list[Policy]:
    return [_resource_policy(rule) for rule in RESOURCE_RULES]


def policy_config(environment: str) -> dict[str, Any]:
    """The ``--policy-pack-config`` document for one environment."""
    return {
        rule.name: {"enforcementLevel": rule.level(environment), "environment": environment} for rule in RESOURCE_RULES
    }


def write_policy_configs(directory: Path = CONFIG_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for env in ENVIRONMENTS:
        path = directory / f"{env}.json"
        path.write_text(json.dumps(policy_config(env), indent=2, sort_keys=True) + "\n")
        paths.append(path)
    return paths
