"""llm-serving-grace-period: LLM serving workers get 300-600 s to drain.

Severity: advisory in dev and staging, mandatory in prod. Tunable: ``llmGracePeriodSeconds`` (300).

Why: an LLM request can stream for minutes; with Kubernetes' default 30 s grace period an upgrade
or scale-down kills in-flight generations (seeds ch. 8.10: terminationGracePeriodSeconds 300-600).
Applies to RayServices whose serve config uses Ray Serve LLM or vLLM.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import number, pod_groups
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext
from policies.rules.helpers import is_llm_service

KUBERNETES_DEFAULT = 30
OPTIONS = {"llmGracePeriodSeconds": {"type": "integer", "minimum": 0, "default": 300}}


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if not is_llm_service(props):
        return
    minimum = float(ctx.options.get("llmGracePeriodSeconds", OPTIONS["llmGracePeriodSeconds"]["default"]))
    for group in pod_groups(props):
        if group.role != "worker":
            continue
        raw = group.pod_spec.get("terminationGracePeriodSeconds", KUBERNETES_DEFAULT)
        seconds = number(raw)
        if seconds is not None and seconds < minimum:
            shown = f"{int(seconds)}" + ("" if "terminationGracePeriodSeconds" in group.pod_spec else " (default)")
            yield (
                f"{group.path}.template.spec.terminationGracePeriodSeconds is {shown}: LLM serving workers "
                f"need {int(minimum)}-600 s to finish in-flight requests"
            )


RULE = ResourceRule(
    name="llm-serving-grace-period",
    description="LLM serving workers set terminationGracePeriodSeconds of 300-600 s.",
    levels=PROD_ONLY,
    check=check,
    options=OPTIONS,
)
