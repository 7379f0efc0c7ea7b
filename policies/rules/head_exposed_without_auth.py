"""head-exposed-without-auth: a head reachable from outside the cluster requires auth.

Severity: advisory in dev, mandatory in staging and prod.

Why: ``headGroupSpec.serviceType: LoadBalancer``/``NodePort``, a custom ``headGroupSpec.headService``
of those types (KubeRay adds the head container's ports, dashboard and client among them, to it:
``BuildServiceForHeadPod`` in ray-operator/controllers/ray/common/service.go) or
``enableIngress: true`` publishes the dashboard and job-submission API; without
``authOptions.mode: token`` that is remote code execution for anyone on the network (exposed Ray
dashboards are a known attack vector, e.g. the ShadowRay campaign).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, cluster_spec, dig
from policies.rules.base import NOT_DEV, ResourceRule, RuleContext

EXPOSING_TYPES = ("LoadBalancer", "NodePort")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    head = as_map(spec.get("headGroupSpec"))
    exposed = []
    if head.get("serviceType") in EXPOSING_TYPES:
        exposed.append(f"serviceType {head['serviceType']}")
    custom_type = dig(head, "headService", "spec", "type")
    if custom_type in EXPOSING_TYPES:
        exposed.append(f"headService of type {custom_type}")
    if head.get("enableIngress") is True:
        exposed.append("enableIngress")
    if exposed and dig(spec, "authOptions", "mode") != "token":
        yield (
            f"{base}.headGroupSpec exposes the head ({', '.join(exposed)}) without token auth; set "
            "authOptions.mode: token or keep the head internal"
        )


RULE = ResourceRule(
    name="head-exposed-without-auth",
    description="A head exposed outside the cluster requires authOptions.mode: token.",
    levels=NOT_DEV,
    check=check,
)
