"""The Gateway an incremental RayService upgrade routes through, created by the platform so it stays
internal (KubeRay 1.7.0, ray-operator/controllers/ray/rayservice_controller.go).

KubeRay reconciles ``<service>-gateway`` before anything else of the RayService (``reconcileGateway``)
and creates it with only ``gatewayClassName`` and one listener ``{name: http, protocol: HTTP,
port: 80}`` (``createGateway``); gateway controllers usually publish such a Gateway through a
LoadBalancer, in front of Ray Serve's proxy, which has no auth. KubeRay leaves an existing Gateway of
that name alone as long as the class and listeners match what it would create (``IsGatewayEqual``
compares nothing else), so the platform creates it first, identical in those, with the annotations
that keep it inside the cluster. KubeRay deletes it by name when the RayService is suspended
(``deleteRayServiceOwnedResources``); the next ``pulumi up`` recreates it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from components.manifests.common import metadata

if TYPE_CHECKING:  # make lint imports this module for its names, not the spec's models
    from components.spec.workloads import RayServiceSpec

GATEWAY_API_VERSION = "gateway.networking.k8s.io/v1"
EXPOSURE_LABEL = "kuberay-platform.io/exposure"
SERVING_AUTH_ANNOTATION = "kuberay-platform.io/serving-auth"
"""On a RayService whose Gateway is external: what authenticates clients in front of Ray Serve."""
LISTENER_PORT = 80
LISTENER = {"name": "http", "protocol": "HTTP", "port": LISTENER_PORT}
"""Exactly KubeRay's (``GatewayListenerPortName``, ``DefaultGatewayListenerPort``)."""


def gateway_name(service_name: str) -> str:
    return f"{service_name}-gateway"


def serving_gateway(service: RayServiceSpec, environment: str) -> dict[str, Any] | None:
    """The internal Gateway of an incrementally upgraded service, or None (external or blue-green)."""
    upgrade = service.upgrade
    annotations = upgrade.internal_gateway_annotations
    if upgrade.exposure != "internal" or not upgrade.gateway_class_name or annotations is None:
        return None
    meta = metadata(gateway_name(service.name), service.namespace, environment, "ray-serving-gateway")
    meta["labels"][EXPOSURE_LABEL] = "internal"
    meta["annotations"] = dict(sorted(annotations.items()))
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "Gateway",
        "metadata": meta,
        "spec": {"gatewayClassName": upgrade.gateway_class_name, "listeners": [dict(LISTENER)]},
    }
