"""The platform's NetworkPolicies in every namespace that runs Ray (``platform.networkPolicies``), pure.

Kubernetes NetworkPolicies only add allowances to the pods they select, so each namespace gets a
``default-deny`` for every pod (ingress and egress) and then one policy per allowance, each naming
its peers by the labels they really carry:

- Ray pods by the platform's ``kuberay-platform.io/workload`` pod-template label: a RayJob's and a
  RayService's clusters have generated names (and a RayService has two during an upgrade), so
  ``ray.io/cluster`` cannot be written down ahead;
  a RayJob's submitter pod carries it too (the platform writes its ``submitterPodTemplate``);
- the proxies of an incremental upgrade's Gateway by ``gateway.networking.k8s.io/gateway-name``
  (set by Gateway controllers on the pods they deploy for a Gateway, Istio's included);
- other namespaces by ``kubernetes.io/metadata.name`` (set by the API server).

Kubelet probes and volume mounts (NFS) do not pass through pod networking and need no rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.manifests.cluster import WORKLOAD_LABEL
from components.manifests.common import metadata
from components.manifests.gateway import LISTENER_PORT, gateway_name
from components.manifests.network_policy import (
    CLIENT_PORT,
    DASHBOARD_PORT,
    DNS_EGRESS,
    HEAD_METRICS_PORTS,
    METRICS_PORT,
    NAMESPACE_NAME_LABEL,
    SERVE_PORT,
)
from components.manifests.ray_objects import cluster_spec
from components.manifests.redis import REDIS_CLIENT_NODE_TYPES, REDIS_PORT, STORAGE_LABEL, selector
from components.spec.network import NamespaceNetworkSpec, PlatformNetworkSpec

API_VERSION = "networking.k8s.io/v1"
CREATED_BY = {"app.kubernetes.io/created-by": "kuberay-operator"}
"""Set by KubeRay on every Ray pod."""
HEADS = {**CREATED_BY, "ray.io/node-type": "head"}
OPERATOR_PODS = {"app.kubernetes.io/name": "kuberay-operator"}
"""The kuberay-operator chart's pod label (``nameOverride: kuberay-operator``)."""
RAY_NODES = {
    "matchLabels": CREATED_BY,
    "matchExpressions": [{"key": "ray.io/node-type", "operator": "In", "values": ["head", "worker"]}],
}
"""Heads and workers (not submitters, which also carry ``created-by``)."""
GATEWAY_POD_LABEL = "gateway.networking.k8s.io/gateway-name"


def _tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": p} for p in ports]


def _namespaces(names: Iterable[str]) -> dict[str, Any]:
    return {
        "namespaceSelector": {
            "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(names)}]
        }
    }


def heads_of(workloads: list[str]) -> dict[str, Any]:
    """The head pods of these workloads."""
    return {
        "matchLabels": {"ray.io/node-type": "head"},
        "matchExpressions": [{"key": WORKLOAD_LABEL, "operator": "In", "values": workloads}],
    }


def workload_pods(name: str) -> dict[str, Any]:
    return {"matchLabels": {WORKLOAD_LABEL: name}}


def _policy(
    name: str,
    namespace: str,
    environment: str,
    pods: Mapping[str, Any],
    ingress: list[dict[str, Any]] | None = None,
    egress: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    # An empty rule list is written as none (the provider drops empty lists; both deny everything).
    spec: dict[str, Any] = {"podSelector": dict(pods), "policyTypes": []}
    if ingress is not None:
        spec["policyTypes"].append("Ingress")
        if ingress:
            spec["ingress"] = ingress
    if egress is not None:
        spec["policyTypes"].append("Egress")
        if egress:
            spec["egress"] = egress
    return {
        "apiVersion": API_VERSION,
        "kind": "NetworkPolicy",
        "metadata": metadata(f"ray-{name}", namespace, environment, "network-policy"),
        "spec": spec,
    }


def _autoscales(obj: Mapping[str, Any]) -> bool:
    found = cluster_spec(obj)
    return found is not None and found[1].get("enableInTreeAutoscaling") is True


def _has_ingress(obj: Mapping[str, Any]) -> bool:
    found = cluster_spec(obj)
    return found is not None and (found[1].get("headGroupSpec") or {}).get("enableIngress") is True


def _redis_storage(obj: Mapping[str, Any]) -> str | None:
    found = cluster_spec(obj)
    if found is None:
        return None
    labels = ((found[1].get("headGroupSpec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
    storage = labels.get(STORAGE_LABEL)
    return str(storage) if storage else None


def namespace_policies(
    network: PlatformNetworkSpec,
    workloads: list[dict[str, Any]],
    operator_namespace: str,
    metrics_from: list[str],
    redis_namespaces: Mapping[str, str],
    gateways: Mapping[tuple[str, str], bool],
    environment: str,
    team_operators: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """NetworkPolicies for every namespace of ``workloads`` (Ray objects as emitted).

    ``redis_namespaces``: in-cluster GCS Redis name -> its namespace. ``gateways``: (namespace,
    RayService) -> whether its incremental-upgrade Gateway is internal (True) or external (False).
    ``team_operators``: namespaces whose team runs its own operator there."""
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for obj in workloads:
        by_namespace.setdefault(obj["metadata"]["namespace"], []).append(obj)
    objects: list[dict[str, Any]] = []
    for namespace in sorted(by_namespace):
        allow = network.for_namespace(namespace)
        objects += _namespace(
            namespace,
            by_namespace[namespace],
            allow,
            network,
            operator_namespace,
            metrics_from,
            redis_namespaces,
            gateways,
            environment,
            namespace in team_operators,
        )
    return objects


def _namespace(
    namespace: str,
    members: list[dict[str, Any]],
    allow: NamespaceNetworkSpec,
    network: PlatformNetworkSpec,
    operator_namespace: str,
    metrics_from: list[str],
    redis_namespaces: Mapping[str, str],
    gateways: Mapping[tuple[str, str], bool],
    env: str,
    own_operator: bool,
) -> list[dict[str, Any]]:
    kinds = {obj["kind"] for obj in members}
    # The operator that drives this namespace: the platform's, or the team's own beside its pods.
    operator = {"podSelector": {"matchLabels": OPERATOR_PODS}} if own_operator else _namespaces([operator_namespace])
    out = [
        _policy("default-deny", namespace, env, {}, ingress=[], egress=[]),
        _policy("allow-dns", namespace, env, {}, egress=[DNS_EGRESS]),
    ]
    for obj in members:
        # Head, workers and a RayJob's submitter (its pod template carries the label too) talk freely.
        name = obj["metadata"]["name"]
        own = {"podSelector": workload_pods(name)}
        out.append(
            _policy(
                f"workload-{name}",
                namespace,
                env,
                workload_pods(name),
                ingress=[{"from": [own]}],
                egress=[{"to": [own]}],
            )
        )
    # The operator drives RayJobs and RayServices through the head's dashboard, and checks a
    # RayService head's Serve proxy.
    if kinds & {"RayJob", "RayCronJob", "RayService"}:
        ports = [DASHBOARD_PORT, SERVE_PORT] if "RayService" in kinds else [DASHBOARD_PORT]
        out.append(
            _policy(
                "operator-to-heads",
                namespace,
                env,
                {"matchLabels": HEADS},
                ingress=[{"from": [operator], "ports": _tcp(*ports)}],
            )
        )
    if own_operator:
        # The team's operator: the API server (it watches and writes everything), the heads it drives,
        # and Prometheus in to its metrics.
        egress: list[dict[str, Any]] = [
            {"to": [{"podSelector": {"matchLabels": HEADS}}], "ports": _tcp(DASHBOARD_PORT, SERVE_PORT)}
        ]
        if network.api_server_cidrs:
            egress.append({"to": [{"ipBlock": {"cidr": c}} for c in network.api_server_cidrs]})
        ingress = [{"from": [_namespaces(metrics_from)], "ports": _tcp(METRICS_PORT)}] if metrics_from else []
        out.append(
            _policy("team-operator", namespace, env, {"matchLabels": OPERATOR_PODS}, ingress=ingress, egress=egress)
        )
    if allow.clients_from:
        out.append(
            _policy(
                "clients-to-heads",
                namespace,
                env,
                {"matchLabels": HEADS},
                ingress=[{"from": [_namespaces(allow.clients_from)], "ports": _tcp(CLIENT_PORT, DASHBOARD_PORT)}],
            )
        )
    exposed = sorted(o["metadata"]["name"] for o in members if _has_ingress(o))
    if exposed and allow.ingress_from:
        out.append(
            _policy(
                "ingress-to-dashboards",
                namespace,
                env,
                heads_of(exposed),
                ingress=[{"from": [_namespaces(allow.ingress_from)], "ports": _tcp(DASHBOARD_PORT)}],
            )
        )
    for obj in (o for o in members if o["kind"] == "RayService"):
        name = obj["metadata"]["name"]
        internal = gateways.get((namespace, name))
        sources: list[dict[str, Any]] = [_namespaces(allow.serve_from)] if allow.serve_from else []
        gateway_pods = {"matchLabels": {GATEWAY_POD_LABEL: gateway_name(name)}}
        if internal is not None:
            sources.append({"podSelector": gateway_pods})
            # The Gateway's proxies: clients in (from serveFrom, or anywhere when external), Serve
            # and the Gateway's control plane out.
            listener: dict[str, Any] = {"ports": _tcp(LISTENER_PORT)}
            if internal:
                listener["from"] = [_namespaces(allow.serve_from)]
            cp = network.gateway_control_plane
            out.append(
                _policy(
                    f"gateway-{name}",
                    namespace,
                    env,
                    gateway_pods,
                    ingress=[listener],
                    egress=[
                        {"to": [{"podSelector": workload_pods(name)}], "ports": _tcp(SERVE_PORT)},
                        {"to": [_namespaces([cp.namespace])], "ports": _tcp(*cp.ports)},
                    ],
                )
            )
        if sources:
            out.append(
                _policy(
                    f"serve-{name}",
                    namespace,
                    env,
                    workload_pods(name),
                    ingress=[{"from": sources, "ports": _tcp(SERVE_PORT)}],
                )
            )
    if metrics_from:
        out.append(
            _policy(
                "metrics",
                namespace,
                env,
                RAY_NODES,
                ingress=[{"from": [_namespaces(metrics_from)], "ports": _tcp(METRICS_PORT, *HEAD_METRICS_PORTS)}],
            )
        )
    autoscaling = sorted(o["metadata"]["name"] for o in members if _autoscales(o))
    if autoscaling and network.api_server_cidrs:
        out.append(
            _policy(
                "autoscaler-to-api-server",
                namespace,
                env,
                heads_of(autoscaling),
                egress=[{"to": [{"ipBlock": {"cidr": c}} for c in network.api_server_cidrs]}],
            )
        )
    for storage in sorted({s for o in members if (s := _redis_storage(o)) and s in redis_namespaces}):
        redis = {"podSelector": {"matchLabels": selector(storage)}}
        if redis_namespaces[storage] != namespace:
            redis = {**_namespaces([redis_namespaces[storage]]), **redis}
        out.append(
            _policy(
                f"gcs-redis-{storage}",
                namespace,
                env,
                {
                    "matchLabels": {STORAGE_LABEL: storage},
                    "matchExpressions": [
                        {"key": "ray.io/node-type", "operator": "In", "values": REDIS_CLIENT_NODE_TYPES}
                    ],
                },
                egress=[{"to": [redis], "ports": _tcp(REDIS_PORT)}],
            )
        )
    if allow.egress:
        rules = []
        for a in allow.egress:
            block: dict[str, Any] = {"cidr": a.cidr}
            if a.except_cidrs:
                block["except"] = list(a.except_cidrs)
            rule: dict[str, Any] = {"to": [{"ipBlock": block}]}
            if a.ports:
                rule["ports"] = _tcp(*a.ports)
            rules.append(rule)
        # Ray's pods only (heads, workers, submitters): not Redis, not Gateway proxies.
        out.append(_policy("egress", namespace, env, {"matchLabels": CREATED_BY}, egress=rules))
    return out
