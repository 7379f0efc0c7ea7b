"""deletion-rules-conflict: RayJob ``deletionRules`` stand alone.

Severity: mandatory everywhere (KubeRay rejects the RayJob).

Why: ``deletionStrategy.deletionRules`` cannot be combined with ``shutdownAfterJobFinishes``, the
global ``ttlSecondsAfterFinished`` or the legacy ``onSuccess``/``onFailure`` policies (seeds ch. 9.5;
KubeRay RayJob validation). Nor can a ``DeleteWorkers`` rule run with ``enableInTreeAutoscaling``:
the autoscaler would bring the workers back, and KubeRay rejects the pair. The CRD's CEL rules catch
only the legacy mix; the operator rejects the rest at reconcile time, after the apply has succeeded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, dig, job_spec, job_spec_path
from policies.rules.base import MANDATORY, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    job = job_spec(props)
    if job is None:
        return
    strategy = as_map(job.get("deletionStrategy"))
    if strategy.get("deletionRules") is None:
        return
    base = job_spec_path(props)
    clashes = []
    if job.get("shutdownAfterJobFinishes") is True:
        clashes.append("shutdownAfterJobFinishes")
    if job.get("ttlSecondsAfterFinished") not in (None, 0):
        clashes.append("ttlSecondsAfterFinished")
    clashes += [f"deletionStrategy.{k}" for k in ("onSuccess", "onFailure") if k in strategy]
    if clashes:
        yield (
            f"{base}.deletionStrategy.deletionRules cannot be combined with {', '.join(clashes)}; "
            "express the cleanup as deletionRules only"
        )
    rules = [as_map(r) for r in as_list(strategy.get("deletionRules"))]
    if dig(job, "rayClusterSpec", "enableInTreeAutoscaling") is True and any(
        r.get("policy") == "DeleteWorkers" for r in rules
    ):
        yield (
            f"{base}.deletionStrategy.deletionRules: DeleteWorkers is not supported with "
            "rayClusterSpec.enableInTreeAutoscaling; use DeleteCluster or turn the autoscaler off"
        )


RULE = ResourceRule(
    name="deletion-rules-conflict",
    description="RayJob deletionRules are not mixed with shutdownAfterJobFinishes, TTL or legacy policies.",
    levels=MANDATORY,
    check=check,
)
