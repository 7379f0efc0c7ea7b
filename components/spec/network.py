"""The platform's NetworkPolicies (``platform.networkPolicies``): default deny in every namespace that
runs Ray, and only the traffic a working platform needs allowed back in (``components.manifests.
namespace_policies`` says which). The alternative per workload is KubeRay's own ``networkPolicy``
(``components.spec.workloads.NetworkPolicySpec``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from components.spec.base import K8sName, Model
from components.spec.workloads import CIDR

Port = Annotated[int, Field(ge=1, le=65535)]


class EgressAllowance(Model):
    """Egress to addresses outside the cluster: an object store, a model hub, a managed Redis."""

    cidr: CIDR
    except_cidrs: list[CIDR] = []
    """Ranges inside ``cidr`` that stay closed (e.g. the cluster's pod and service ranges)."""
    ports: list[Port] = []
    """TCP ports; empty: every port."""
    purpose: str = Field(min_length=3)
    """What it is for (``S3``, ``Hugging Face Hub``): shown in summary.md."""


class NamespaceNetworkSpec(Model):
    """What one namespace's Ray pods may additionally talk to (on top of ``networkPolicies``'s own)."""

    clients_from: list[K8sName] = []
    """Namespaces whose pods may reach heads' client (10001) and dashboard (8265) ports."""
    serve_from: list[K8sName] = []
    """Namespaces whose pods may reach Ray Serve (8000) on RayService pods and the listener of their
    incremental-upgrade Gateway: the ingress controller's or Gateway's."""
    ingress_from: list[K8sName] = []
    """The ingress controllers' namespaces: they reach the dashboard (8265) of heads with an ingress."""
    egress: list[EgressAllowance] = []


class GatewayControlPlane(Model):
    namespace: K8sName = "istio-system"
    ports: list[Port] = [15012]
    """istiod's xDS and certificate port, which every Istio gateway proxy dials."""


class PlatformNetworkSpec(NamespaceNetworkSpec):
    """NetworkPolicies in every namespace that runs Ray: deny all ingress and egress, then allow DNS;
    traffic within each workload (head, workers, a RayJob's submitter); the operator to heads'
    dashboard (and a RayService head's serve port); ``clientsFrom``, ``serveFrom``, Prometheus
    (``metricsFrom``) to their ports; heads to the API server (autoscaler) and to their GCS Redis;
    and ``egress``. ``clientsFrom``, ``serveFrom`` and ``egress`` here apply to every such namespace;
    ``namespaces`` adds to one."""

    metrics_from: list[K8sName] | None = None
    """Namespaces that scrape the metrics ports. Default: ``monitoring.prometheus.namespace`` when the
    stack has monitoring, else none."""
    api_server_cidrs: list[CIDR] = []
    """The API server's endpoints (``kubectl get endpoints kubernetes``): heads whose autoscaler runs
    need them. Required when a workload autoscales."""
    gateway_control_plane: GatewayControlPlane = GatewayControlPlane()
    """Where the proxies of incremental-upgrade Gateways (deployed into the RayService's namespace by
    the Gateway controller) get their configuration."""
    namespaces: dict[K8sName, NamespaceNetworkSpec] = {}

    def for_namespace(self, namespace: str) -> NamespaceNetworkSpec:
        """The platform-wide allowances plus the namespace's own."""
        extra = self.namespaces.get(namespace, NamespaceNetworkSpec())
        return NamespaceNetworkSpec(
            clients_from=sorted({*self.clients_from, *extra.clients_from}),
            serve_from=sorted({*self.serve_from, *extra.serve_from}),
            ingress_from=sorted({*self.ingress_from, *extra.ingress_from}),
            egress=[*self.egress, *extra.egress],
        )
