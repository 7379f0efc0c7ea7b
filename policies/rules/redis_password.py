"""redis-password-missing and redis-password-inline: GCS fault tolerance on Redis uses a password
from a Secret.

Severity: ``redis-password-missing`` advisory in dev, mandatory in staging and prod;
``redis-password-inline`` mandatory everywhere (a plain-text secret in Git and in the manifest).

Why: GCS state in Redis includes everything needed to run code in the cluster; an open Redis is a
way in, and a password written in the manifest is a password published (seeds ch. 8.2 uses
``redisPassword.valueFrom.secretKeyRef``). Covers ``gcsFaultToleranceOptions`` and the legacy
form (annotation ``ray.io/ft-enabled`` with ``RAY_REDIS_ADDRESS`` / ``REDIS_PASSWORD`` env and the
``redis-password`` start param).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, cluster_spec, head_group
from policies.rules.base import MANDATORY, NOT_DEV, ResourceRule, RuleContext


def _head_env(props: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    head = head_group(props)
    if head is None:
        return {}
    return {str(as_map(e).get("name")): as_map(e) for e in as_list(head.ray_container.get("env"))}


def _head_params(props: Mapping[str, Any]) -> Mapping[str, Any]:
    head = head_group(props)
    return head.ray_start_params if head is not None else {}


def check_missing(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    ft = spec.get("gcsFaultToleranceOptions")
    if isinstance(ft, Mapping):
        if ft.get("backend") != "rocksdb" and ft.get("redisAddress") and ft.get("redisPassword") is None:
            yield (
                f"{base}.gcsFaultToleranceOptions.redisPassword: missing; protect Redis with a password "
                "from a Secret (redisPassword.valueFrom.secretKeyRef)"
            )
        return
    env = _head_env(props)
    if "RAY_REDIS_ADDRESS" in env and "REDIS_PASSWORD" not in env and "redis-password" not in _head_params(props):
        yield (
            f"{base}.headGroupSpec: RAY_REDIS_ADDRESS without a Redis password; set REDIS_PASSWORD from a "
            "Secret, or move to gcsFaultToleranceOptions with redisPassword.valueFrom.secretKeyRef"
        )


def check_inline(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    password = as_map(as_map(spec.get("gcsFaultToleranceOptions")).get("redisPassword"))
    if password.get("value"):
        yield (
            f"{base}.gcsFaultToleranceOptions.redisPassword.value: the password is in plain text; use "
            "redisPassword.valueFrom.secretKeyRef"
        )
    env = _head_env(props)
    if as_map(env.get("REDIS_PASSWORD")).get("value"):
        yield f"{base}.headGroupSpec: env REDIS_PASSWORD has a literal value; use valueFrom.secretKeyRef"
    param = _head_params(props).get("redis-password")
    if isinstance(param, str) and param and not param.startswith("$"):
        yield (
            f"{base}.headGroupSpec.rayStartParams.redis-password is a literal; reference an env var set "
            "from a Secret ($REDIS_PASSWORD)"
        )


MISSING = ResourceRule(
    name="redis-password-missing",
    description="GCS fault tolerance on Redis sets a password.",
    levels=NOT_DEV,
    check=check_missing,
)
INLINE = ResourceRule(
    name="redis-password-inline",
    description="Redis passwords come from a Secret, never inline.",
    levels=MANDATORY,
    check=check_inline,
)
