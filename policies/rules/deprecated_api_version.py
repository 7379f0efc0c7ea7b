"""deprecated-api-version: objects use the served storage versions, not deprecated ones.

Severity: advisory in dev, mandatory in staging and prod.

Why: ``ray.io/v1alpha1`` is still served by KubeRay 1.7.0 but deprecated, and Kueue v0.19 deprecates
``kueue.x-k8s.io/v1beta1`` in favour of ``v1beta2`` (``cohortName`` instead of ``cohort``). Objects
on deprecated versions break when the version is removed (upstream CRDs, ``deprecated: true``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from policies.rules.base import NOT_DEV, ResourceRule, RuleContext

REPLACEMENTS = {"ray.io/v1alpha1": "ray.io/v1", "kueue.x-k8s.io/v1beta1": "kueue.x-k8s.io/v1beta2"}


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    api = props.get("apiVersion")
    if isinstance(api, str) and api in REPLACEMENTS:
        yield f"apiVersion {api} is deprecated; use {REPLACEMENTS[api]}"


RULE = ResourceRule(
    name="deprecated-api-version",
    description="No deprecated API versions (ray.io/v1alpha1, kueue.x-k8s.io/v1beta1).",
    levels=NOT_DEV,
    check=check,
)
