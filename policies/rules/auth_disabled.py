"""auth-disabled: Ray clusters require token authentication in production.

Severity: advisory in dev and staging, mandatory in prod.

Why: without auth anyone who reaches the dashboard or client port can submit jobs, i.e. run
arbitrary code with the cluster's credentials. KubeRay 1.5+ with Ray 2.52+ supports
``authOptions.mode: token`` (the operator creates the token Secret); set the mode explicitly
(seeds ch. 8.5; DESIGN.md: "set mode explicitly").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import cluster_spec, dig
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    mode = dig(spec, "authOptions", "mode")
    if mode is None:
        yield f"{base}.authOptions.mode: not set (auth disabled); set authOptions.mode: token"
    elif mode == "disabled":
        yield f"{base}.authOptions.mode is disabled: anyone reaching the cluster can run code; use token"


RULE = ResourceRule(
    name="auth-disabled",
    description="Ray clusters set authOptions.mode: token.",
    levels=PROD_ONLY,
    check=check,
)
