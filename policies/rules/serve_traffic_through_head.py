"""serve-traffic-through-head: RayService traffic goes to workers only.

Severity: advisory in dev and staging, mandatory in prod.

Why: unless ``excludeHeadPodFromServeSvc: true``, the serve Service also routes requests to the
head pod, loading the node that runs GCS and the autoscaler with user traffic and limiting
scale-out (seeds ch. 9.6 "Serve traffic only through workers").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import dig
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") == "RayService" and dig(props, "spec", "excludeHeadPodFromServeSvc") is not True:
        yield "spec.excludeHeadPodFromServeSvc: set it to true so serve traffic never goes through the head"


RULE = ResourceRule(
    name="serve-traffic-through-head",
    description="RayService sets excludeHeadPodFromServeSvc: true.",
    levels=PROD_ONLY,
    check=check,
)
