"""Wraps the pure rules as pulumi_policy policies (without starting the analyzer server).

The environment reaches the rules through policy config: ``pulumi preview --policy-pack policies
--policy-pack-config policies/config/<env>.json``. Each file sets, per policy, ``environment`` and
the ``enforcementLevel`` from the rule's level table; ``make policy-config`` regenerates them and a
test keeps them in sync. Without config the pack judges as for prod.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
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
from policies.rules.base import (
    DEFAULT_ENVIRONMENT,
    ENVIRONMENTS,
    SCHEMA_POLICY,
    ResourceRule,
    Rule,
    RuleContext,
    StackRule,
    as_object,
)
from tools.schema import custom_resource_errors, custom_resource_schema
from tools.schema_store import load_store

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


def _context(config: Mapping[str, Any], urns: Sequence[str] = ()) -> RuleContext:
    env = str(config.get("environment", DEFAULT_ENVIRONMENT))
    return RuleContext(environment=env, options={k: v for k, v in config.items() if k != "environment"}, urns=urns)


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
        urns = [r.urn for r in args.resources]
        for subject, message in rule.check(resources, _context(args.get_config(), urns)):
            report_violation(message, args.resources[subject].urn if isinstance(subject, int) else None)

    return StackValidationPolicy(
        name=rule.name,
        description=rule.description,
        validate=validate,
        enforcement_level=_LEVELS[rule.level(DEFAULT_ENVIRONMENT)],
        config_schema=_schema(rule),
    )


SCHEMA_DESCRIPTION = (
    "Custom resources (KubeRay, Kueue, cert-manager, Gateway API, Prometheus operator) pass the project's "
    "pinned upstream schemas and CEL rules (schemas/), as the API server will check them."
)


def _plain(value: Any) -> Any:
    """A plain JSON value from pulumi_policy's unknown-checking proxies (an unknown value raises
    UnknownValueError: the analyzer reports that the policy cannot run during this preview), with
    whole floats back to ints (numbers reach the pack as protobuf floats)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(value[k]) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(value[i]) for i in range(len(value))]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _schema_policy() -> ResourceValidationPolicy:
    """Strict schema validation of custom resources, from the project's ``schemas/``: a first
    ``pulumi preview`` cannot ask the cluster (the CRDs arrive with the charts), so nothing else checks
    them before ``pulumi up``. Core kinds are left to the provider and the API server (the offline
    preview and ``make lint`` check those too, with kubernetes-validate)."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if not args.resource_type.startswith("kubernetes:"):
            return
        obj = _plain(as_object(args.resource_type, args.props))
        found = custom_resource_schema(load_store(), str(obj.get("apiVersion")), str(obj.get("kind")))
        if found is None:
            return
        for err in custom_resource_errors(*found, obj):
            report_violation(f"{err.path or '<root>'}: {err.message}", None)

    return ResourceValidationPolicy(
        name=SCHEMA_POLICY,
        description=SCHEMA_DESCRIPTION,
        validate=validate,
        enforcement_level=EnforcementLevel.MANDATORY,
        config_schema=PolicyConfigSchema(
            properties={"environment": {"type": "string", "enum": list(ENVIRONMENTS), "default": DEFAULT_ENVIRONMENT}}
        ),
    )


def build_policies() -> list[Policy]:
    policies: list[Policy] = [_schema_policy()]
    policies += [_resource_policy(rule) for rule in RESOURCE_RULES]
    policies += [_stack_policy(rule) for rule in STACK_RULES]
    return policies


def policy_config(environment: str) -> dict[str, Any]:
    """The ``--policy-pack-config`` document for one environment."""
    rules: list[Rule] = [*RESOURCE_RULES, *STACK_RULES]
    config = {rule.name: {"enforcementLevel": rule.level(environment), "environment": environment} for rule in rules}
    config[SCHEMA_POLICY] = {"enforcementLevel": "mandatory", "environment": environment}
    return config


def write_policy_configs(directory: Path = CONFIG_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for env in ENVIRONMENTS:
        path = directory / f"{env}.json"
        path.write_text(json.dumps(policy_config(env), indent=2, sort_keys=True) + "\n")
        paths.append(path)
    return paths
