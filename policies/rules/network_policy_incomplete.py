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
    """A rule allows ``port`` when it lists it (or its name, or a range holding it) or lists no ports."""
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


def _allows_dns(rules: list[Any]) -> bool:
    """An egress rule reaches DNS when it lists port 53 (or no ports) and either names no
    destination or one that can be kube-dns (pods or namespaces; an ``ipBlock`` alone cannot)."""
    for rule in rules:
        destinations = as_list(as_map(rule).get("to"))
        can_be_dns = not destinations or any(
            "podSelector" in as_map(d) or "namespaceSelector" in as_map(d) for d in destinations
        )
        if can_be_dns and _allows_port([rule], 53):
            return True
    return False


def _worker_rules(policy: Mapping[str, Any], spec: Mapping[str, Any], key: str) -> list[list[Any]]:
    """Per worker group, the rules KubeRay applies: its ``workerGroups`` entry if there is one
    (it replaces ``worker``), else ``worker``."""
    by_group = {as_map(g).get("groupName"): as_list(as_map(g).get(key)) for g in as_list(policy.get("workerGroups"))}
    default = as_list(as_map(policy.get("worker")).get(key))
    names = [as_map(g).get("groupName") for g in as_list(spec.get("workerGroupSpecs"))]
    return [by_group.get(name, default) for name in names] or [default]


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    policy = as_map(spec.get("networkPolicy"))
    mode = policy.get("mode")
    if mode in EGRESS_MODES:
        head_egress = as_list(as_map(policy.get("head")).get("egressRules"))
        if not _allows_dns(head_egress) or not all(_allows_dns(r) for r in _worker_rules(policy, spec, "egressRules")):
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
    worker_ingress = _worker_rules(policy, spec, "ingressRules")
    if (
        mode in INGRESS_MODES
        and props.get("kind") == "RayService"
        and not any(_allows_port(r, 8000, ("serve",)) for r in worker_ingress)
    ):
        yield (
            f"{base}.networkPolicy: mode {mode} lets nothing outside the cluster reach Ray Serve (8000) on the "
            "workers; add a worker ingress rule from the gateway's or ingress controller's namespace"
        )


RULE = ResourceRule(
    name="network-policy-incomplete",
    description="KubeRay-managed NetworkPolicies allow DNS egress and the operator's access to the head.",
    levels=MANDATORY,
    check=check,
)
