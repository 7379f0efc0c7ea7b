"""namespace-default-deny (stack rule): every namespace that runs Ray denies traffic by default.

Severity: mandatory in prod, advisory in staging, off in dev (a developer's sandbox).

Why: Ray's head runs the GCS, the dashboard (jobs API: arbitrary code execution) and the client
server; without NetworkPolicies any pod in the cluster reaches them, and a compromised pod of one
team reaches every team's clusters. A namespace is covered when a NetworkPolicy there selects every
pod (``podSelector: {}``) for both Ingress and Egress with no allow rule of its own, and another
allows DNS egress (port 53): the platform's ``networkPolicies`` emit both. Judged for the namespaces
the resources create (a Namespace among them): a manifest linted alone says nothing of the
namespace's policies. KubeRay's managed
policies (``spec.networkPolicy``) do not count: they select only the cluster's own pods and leave
every other pod of the namespace open.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, is_ray_object, metadata_of
from policies.rules.base import Resource, RuleContext, StackRule, as_object, levels


def _namespace(obj: Mapping[str, Any]) -> str:
    return str(metadata_of(obj).get("namespace") or "default")


def _denies_all(policy: Mapping[str, Any]) -> bool:
    spec = as_map(policy.get("spec"))
    types = set(as_list(spec.get("policyTypes")))
    return (
        as_map(spec.get("podSelector")) in ({}, {"matchLabels": {}})
        and {"Ingress", "Egress"} <= types
        and not as_list(spec.get("ingress"))
        and not as_list(spec.get("egress"))
    )


def _allows_dns(policy: Mapping[str, Any]) -> bool:
    for rule in as_list(as_map(policy.get("spec")).get("egress")):
        ports = as_list(as_map(rule).get("ports"))
        if not ports or any(str(as_map(p).get("port")) == "53" for p in ports):
            return True
    return False


def check(resources: list[Resource], ctx: RuleContext) -> Iterator[tuple[int, str]]:
    objects = [as_object(rtype, props) for rtype, props in resources]
    policies = [o for o in objects if o.get("kind") == "NetworkPolicy"]
    owned = {str(metadata_of(o).get("name")) for o in objects if o.get("kind") == "Namespace"}
    deny = {_namespace(p) for p in policies if _denies_all(p)}
    dns = {_namespace(p) for p in policies if _allows_dns(p)}
    reported: set[str] = set()
    for i, obj in enumerate(objects):
        namespace = _namespace(obj)
        if not is_ray_object(obj) or namespace in reported or namespace not in owned:
            continue
        wanted = (("a default-deny policy", deny), ("a DNS allowance", dns))
        missing = [what for what, have in wanted if namespace not in have]
        if missing:
            reported.add(namespace)
            yield (
                i,
                f"namespace {namespace} runs Ray without {' and '.join(missing)}; set platform.networkPolicies "
                "(default deny with the platform's allowances)",
            )


RULE = StackRule(
    name="namespace-default-deny",
    description="Every namespace that runs Ray has a default-deny NetworkPolicy and a DNS allowance.",
    levels=levels("disabled", "advisory", "mandatory"),
    check=check,
)
