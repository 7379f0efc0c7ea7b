"""network-policy-incomplete: a KubeRay-managed NetworkPolicy leaves the cluster able to work.

Severity: mandatory everywhere (pods cannot start, or the operator cannot drive the cluster).

Why: KubeRay 1.7.0's managed policies (``spec.networkPolicy``, networkpolicy_controller.go) allow
only traffic within the cluster. With ``DenyAll``/``DenyAllEgress`` and no DNS egress rule, Ray
processes cannot resolve the head's service name and the cluster never starts ("DNS egress is
intentionally NOT baked in"). With ``DenyAll``/``DenyAllIngress`` on a RayJob or RayService and no
head ingress rule for the dashboard port (8265), the operator cannot submit jobs, read their status
or deploy serve applications ("Operator access is intentionally omitted here").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, cluster_spec
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

EGRESS_MODES = ("DenyAll", "DenyAllEgress")
INGRESS_MODES = ("DenyAll", "DenyAllIngress")


def _allows_port(rules: list[Any], port: int, names: tuple[str, ...] = ()) -> bool:
    """A rule allows ``port`` when it lists it (or its name), lists no ports at all, or a range holds it."""
    for rule in rules:
        ports = as_list(as_map(rule).get("ports"))
        if not ports:
            return True
        for entry in ports:
            value, end = as_map(entry).get("port"), as_map(entry).get("endPort")
            if value is None or str(value) == str(port) or value in names:
                return True
            if isinstance(value, int) and isinstance(end, int) and value <= port <= end:
                return True
    return False


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    policy = as_map(spec.get("networkPolicy"))
    mode = policy.get("mode")
    if mode in EGRESS_MODES:
        head_egress = as_list(as_map(policy.get("head")).get("egressRules"))
        worker_egress = as_list(as_map(policy.get("worker")).get("egressRules"))
        groups = [as_list(as_map(g).get("egressRules")) for g in as_list(policy.get("workerGroups"))]
        if not _allows_port(head_egress, 53) or not all(_allows_port(r, 53) for r in [worker_egress, *groups]):
            yield (
                f"{base}.networkPolicy: mode {mode} with no DNS egress (port 53) for the head and every worker: "
                "pods cannot resolve the head; add an egress rule to kube-dns on UDP/TCP 53"
            )
    if mode in INGRESS_MODES and props.get("kind") in ("RayJob", "RayService", "RayCronJob"):
        head_ingress = as_list(as_map(policy.get("head")).get("ingressRules"))
        if not _allows_port(head_ingress, 8265, ("dashboard",)):
            yield (
                f"{base}.networkPolicy: mode {mode} lets nothing outside the cluster reach the head's dashboard "
                "(8265), which the operator drives jobs and serve deployments through; add a head ingress rule "
                "from the operator's namespace on 8265"
            )


RULE = ResourceRule(
    name="network-policy-incomplete",
    description="KubeRay-managed NetworkPolicies allow DNS egress and the operator's access to the head.",
    levels=MANDATORY,
    check=check,
)
