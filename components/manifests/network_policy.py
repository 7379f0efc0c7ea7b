"""KubeRay's managed NetworkPolicies, completed so the cluster still works (KubeRay 1.7.0,
ray-operator/controllers/ray/networkpolicy_controller.go).

KubeRay builds one policy for the head and one per worker group, allowing traffic within the
cluster (plus, for a RayJob in K8sJobMode, its submitter to the dashboard), and appends the rules in
``spec.networkPolicy``. It adds no DNS egress, no API server egress and no operator access: "Operator
access is intentionally omitted here — platforms that need it should inject it via
spec.networkPolicy.head.ingressRules". The operator reaches a RayJob's and a RayService's head on the
dashboard port (job status, serve deployments: ``FetchHeadServiceURL(..., DashboardPortName)``) and a
RayService's head on the serve port (``CheckProxyActorHealth``). Its validation refuses ingress rules
under ``DenyAllEgress`` and egress rules under ``DenyAllIngress``.
"""

from __future__ import annotations

from typing import Any

from components.spec.workloads import NetworkPolicySpec

DASHBOARD_PORT = 8265
CLIENT_PORT = 10001
SERVE_PORT = 8000
DNS_PORT = 53
METRICS_PORT = 8080
HEAD_METRICS_PORTS = (44217, 44227)
"""Autoscaler and dashboard metrics (KubeRay's PodMonitor ports ``as-metrics``, ``dash-metrics``)."""
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Set by the API server on every namespace (Kubernetes 1.22+)."""


def _tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": p} for p in ports]


def _from_namespaces(names: list[str]) -> list[dict[str, Any]]:
    return [
        {"namespaceSelector": {"matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": names}]}}
    ]


DNS_EGRESS: dict[str, Any] = {
    "to": [
        {
            "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ],
    "ports": [{"protocol": "UDP", "port": DNS_PORT}, {"protocol": "TCP", "port": DNS_PORT}],
}
"""kube-dns (CoreDNS keeps the ``k8s-app: kube-dns`` label on kubeadm, GKE, EKS and AKS)."""


def network_policy(kind: str, policy: NetworkPolicySpec, operator_namespace: str) -> dict[str, Any]:
    """``spec.networkPolicy`` of a Ray cluster of ``kind`` (RayCluster, RayJob, RayService). The
    platform's RayServices keep the head out of the serve Service (``excludeHeadPodFromServeSvc``),
    so Ray Serve is opened on the workers only."""
    body: dict[str, Any] = {"mode": policy.mode}
    head: dict[str, Any] = {}
    worker: dict[str, Any] = {}
    if policy.restricts_ingress:
        ingress = []
        if kind in ("RayJob", "RayService"):
            ports = [DASHBOARD_PORT, SERVE_PORT] if kind == "RayService" else [DASHBOARD_PORT]
            ingress.append({"from": _from_namespaces([operator_namespace]), "ports": _tcp(*ports)})
        if policy.clients_from:
            ingress.append(
                {"from": _from_namespaces(sorted(policy.clients_from)), "ports": _tcp(CLIENT_PORT, DASHBOARD_PORT)}
            )
        worker_ingress = []
        if kind == "RayService" and policy.serve_from:
            worker_ingress.append({"from": _from_namespaces(sorted(policy.serve_from)), "ports": _tcp(SERVE_PORT)})
        if policy.metrics_from:
            scrapers = _from_namespaces(sorted(policy.metrics_from))
            ingress.append({"from": scrapers, "ports": _tcp(METRICS_PORT, *HEAD_METRICS_PORTS)})
            worker_ingress.append({"from": scrapers, "ports": _tcp(METRICS_PORT)})
        if ingress:
            head["ingressRules"] = ingress
        if worker_ingress:
            worker["ingressRules"] = worker_ingress
    if policy.restricts_egress:
        extra = [{"to": [{"ipBlock": {"cidr": c}} for c in policy.egress_cidrs]}] if policy.egress_cidrs else []
        api = [{"to": [{"ipBlock": {"cidr": c}} for c in policy.api_server_cidrs]}] if policy.api_server_cidrs else []
        head["egressRules"] = [DNS_EGRESS, *api, *extra]
        worker["egressRules"] = [DNS_EGRESS, *extra]
    if head:
        body["head"] = head
    if worker:
        body["worker"] = worker
    return body
