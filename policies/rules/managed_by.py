"""managed-by: ``spec.managedBy`` names a controller that exists.

Severity: mandatory everywhere (the API server rejects other values; the field is immutable).

Why: only ``ray.io/kuberay-operator`` and ``kueue.x-k8s.io/multikueue`` are accepted; since the
field cannot be changed later, a typo means deleting and recreating the workload
(KubeRay 1.7.0 CRD validation).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import dig, is_ray_object, job_spec, job_spec_path
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

MANAGERS = ("ray.io/kuberay-operator", "kueue.x-k8s.io/multikueue")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if not is_ray_object(props):
        return
    job = job_spec(props)
    where, value = (
        (f"{job_spec_path(props)}.managedBy", job.get("managedBy"))
        if job is not None
        else ("spec.managedBy", dig(props, "spec", "managedBy"))
    )
    if value is not None and value not in MANAGERS:
        yield f"{where} {value!r} is not one of {', '.join(MANAGERS)} (and cannot be changed later)"


RULE = ResourceRule(
    name="managed-by",
    description="spec.managedBy is ray.io/kuberay-operator or kueue.x-k8s.io/multikueue.",
    levels=MANDATORY,
    check=check,
)
