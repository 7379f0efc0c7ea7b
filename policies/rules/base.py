"""What every rule is made of: a pure check, a stable name and a level per environment."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from components.manifests.ray_objects import as_map

Enforcement = Literal["mandatory", "advisory", "disabled"]
ENVIRONMENTS: tuple[str, ...] = ("dev", "staging", "prod")
DEFAULT_ENVIRONMENT = "prod"
SCHEMA_POLICY = "schema"
"""The policy name of schema validation findings (pack, ``make lint``): mandatory unless the
policy config says otherwise. It has no rule here: validation lives with the offline engine."""
"""Without policy config the pack judges as strictly as for production."""


@dataclass(frozen=True)
class RuleContext:
    environment: str = DEFAULT_ENVIRONMENT
    options: Mapping[str, Any] = field(default_factory=dict)
    """Per-rule tunables from policy config (e.g. ``largeServiceAccelerators``)."""
    urns: Sequence[str] = ()
    """The URN of each resource a stack rule judges, where known (not for linted files)."""
    aliases: Mapping[str, Sequence[str]] | None = None
    """URN -> the URNs it answers to (its aliases, as the engine matches them), where the caller
    knows them (the offline preview); None where it cannot (the policy pack sees no aliases)."""


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: Enforcement
    kind: str
    name: str
    namespace: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "enforcement": self.enforcement,
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "message": self.message,
        }


ResourceCheck = Callable[[str, Mapping[str, Any], RuleContext], Iterable[str]]
"""(Pulumi resource type, the object's properties, context) -> one message per problem."""

Resource = tuple[str, Mapping[str, Any]]
"""(Pulumi resource type, properties) as a stack rule sees each resource of the stack."""

Subject = int | Mapping[str, Any]
"""What a stack rule's finding is about: the index of the offending resource, or, for what the
stack no longer has, that object's ``apiVersion``, ``kind`` and ``metadata``."""

StackCheck = Callable[[list[Resource], RuleContext], Iterable[tuple[Subject, str]]]
"""(every resource of the stack, context) -> (the subject, message)."""


@dataclass(frozen=True, kw_only=True)
class Rule:
    name: str
    """Stable: policy config files and suppressions refer to it."""
    description: str
    levels: Mapping[str, Enforcement]
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Tunables the rule reads from ``ctx.options``, as JSON Schema properties with defaults."""

    def level(self, environment: str) -> Enforcement:
        return self.levels.get(environment, self.levels[DEFAULT_ENVIRONMENT])


@dataclass(frozen=True, kw_only=True)
class ResourceRule(Rule):
    """Judges one object at a time."""

    check: ResourceCheck


@dataclass(frozen=True, kw_only=True)
class StackRule(Rule):
    """Judges all resources of a stack (or all objects linted together)."""

    check: StackCheck


def levels(dev: Enforcement, staging: Enforcement, prod: Enforcement) -> dict[str, Enforcement]:
    return {"dev": dev, "staging": staging, "prod": prod}


MANDATORY = levels("mandatory", "mandatory", "mandatory")
"""What the operator or the API would reject anyway, or what cannot work: blocked everywhere."""
PROD_ONLY = levels("advisory", "advisory", "mandatory")
"""Unsafe for production; a dev or staging stack may legitimately differ."""
NOT_DEV = levels("advisory", "mandatory", "mandatory")
"""Unsafe beyond a developer's sandbox."""


def resource_type(obj: Mapping[str, Any]) -> str:
    """The Pulumi type token of a Kubernetes object: ``kubernetes:ray.io/v1:RayCluster``,
    ``kubernetes:core/v1:Namespace``."""
    api = str(obj.get("apiVersion", ""))
    return f"kubernetes:{api if '/' in api else 'core/' + api}:{obj.get('kind')}"


def as_object(rtype: str, props: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Kubernetes object behind a Pulumi resource: its properties, with ``apiVersion`` and
    ``kind`` taken from the type token when the properties lack them."""
    if "apiVersion" in props and "kind" in props:
        return props
    parts = rtype.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return props
    return {"apiVersion": parts[1].removeprefix("core/"), "kind": parts[2], **dict(as_map(props))}
