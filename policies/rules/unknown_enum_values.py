"""unknown-enum-values: values the operator validates but the CRD does not.

Severity: mandatory everywhere (the operator rejects the object after a successful apply).

Why: ``RayService.spec.upgradeStrategy.type`` and ``RayJob.spec.submissionMode`` are plain strings in
the CRD; KubeRay 1.7.0 accepts only the listed values and fails the object at reconcile time,
which a ``kubectl apply`` or ``pulumi up`` would report as success (DESIGN.md upstream facts).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import dig, job_spec, job_spec_path
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

UPGRADE_TYPES = ("NewCluster", "NewClusterWithIncrementalUpgrade", "None")
SUBMISSION_MODES = ("K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") == "RayService":
        value = dig(props, "spec", "upgradeStrategy", "type")
        if value is not None and value not in UPGRADE_TYPES:
            yield f"spec.upgradeStrategy.type {value!r} is not one of {', '.join(UPGRADE_TYPES)}"
    job = job_spec(props)
    if job is not None:
        mode = job.get("submissionMode")
        if mode is not None and mode not in SUBMISSION_MODES:
            yield f"{job_spec_path(props)}.submissionMode {mode!r} is not one of {', '.join(SUBMISSION_MODES)}"


RULE = ResourceRule(
    name="unknown-enum-values",
    description="upgradeStrategy.type and submissionMode take only the values KubeRay accepts.",
    levels=MANDATORY,
    check=check,
)
