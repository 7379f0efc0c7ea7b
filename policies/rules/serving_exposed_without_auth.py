"""serving-exposed-without-auth (stack rule): an incremental RayService's Gateway is internal, or
something authenticates clients in front of it.

Severity: advisory in dev and staging, mandatory in prod.

Why: for ``NewClusterWithIncrementalUpgrade`` KubeRay 1.7.0 creates Gateway ``<service>-gateway``
with only the class and an HTTP listener on port 80 (``createGateway`` in rayservice_controller.go);
gateway controllers usually publish a Gateway through a LoadBalancer, so Ray Serve's proxy, which
has no auth, faces the network. KubeRay keeps an existing Gateway of that name whose class and
listeners match (``IsGatewayEqual``): create it first, internal (the platform does, labelled
``kuberay-platform.io/exposure: internal``), or record what authenticates clients in front of it in
the RayService annotation ``kuberay-platform.io/serving-auth``.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.manifests.gateway import EXPOSURE_LABEL, SERVING_AUTH_ANNOTATION, gateway_name
from components.manifests.ray_objects import as_map, dig
from policies.rules.base import PROD_ONLY, Resource, RuleContext, StackRule, as_object


def check(resources: list[Resource], ctx: RuleContext) -> Iterator[tuple[int, str]]:
    objects = [as_object(rtype, props) for rtype, props in resources]
    internal = {
        (dig(o, "metadata", "namespace"), dig(o, "metadata", "name"))
        for o in objects
        if o.get("kind") == "Gateway" and as_map(dig(o, "metadata", "labels")).get(EXPOSURE_LABEL) == "internal"
    }
    for i, obj in enumerate(objects):
        if obj.get("kind") != "RayService":
            continue
        if dig(obj, "spec", "upgradeStrategy", "type") != "NewClusterWithIncrementalUpgrade":
            continue
        namespace, name = dig(obj, "metadata", "namespace"), str(dig(obj, "metadata", "name"))
        if (namespace, gateway_name(name)) in internal:
            continue
        if as_map(dig(obj, "metadata", "annotations")).get(SERVING_AUTH_ANNOTATION):
            continue
        yield (
            i,
            f"KubeRay will create Gateway {gateway_name(name)} (HTTP on port 80, usually behind a LoadBalancer) in "
            f"front of Ray Serve, which has no auth; create it first and internal ({EXPOSURE_LABEL}: internal, "
            f"the platform's upgrade.exposure: internal), or annotate {SERVING_AUTH_ANNOTATION} with what "
            "authenticates clients in front of it",
        )


RULE = StackRule(
    name="serving-exposed-without-auth",
    description="An incremental RayService's Gateway is internal or has authentication in front of it.",
    levels=PROD_ONLY,
    check=check,
)
