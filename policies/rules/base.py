"""What every rule is made of: a pure check, a stable name and a level per environment."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Enforcement = Literal["mandatory", "advisory", "disabled"]
ENVIRONMENTS: tuple[str, ...] = ("dev", "staging", "prod")
DEFAULT_ENVIRONMENT = "prod"
"""Without policy config the pack judges as strictly as for production."""


@dataclass(frozen=True)
class RuleContext:
    environment: str = DEFAULT_ENVIRONMENT


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


@dataclass(frozen=True)
class ResourceRule:
    name: str
    description: str
    levels: Mapping[str, Enforcement]
    check: ResourceCheck

    def level(self, environment: str) -> Enforcement:
        return self.levels.get(environment, self.levels[DEFAULT_ENVIRONMENT])


def levels(dev: Enforcement, staging: Enforcement, prod: Enforcement) -> dict[str, Enforcement]:
    return {"dev": dev, "staging": staging, "prod": prod}


def resource_type(obj: Mapping[str, Any]) -> str:
    """The Pulumi type token of a Kubernetes object: ``kubernetes:ray.io/v1:RayCluster``,
    ``kubernetes:core/v1:Namespace``."""
    api = str(obj.get("apiVersion", ""))
    return f"kubernetes:{api if '/' in api else 'core/' + api}:{obj.get('kind')}"
