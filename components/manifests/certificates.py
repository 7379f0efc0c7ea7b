"""cert-manager objects (pure): the chart's values when the stack installs it, the platform's
ClusterIssuers, and a Certificate for every head ingress that asks for one; plus the ingress
annotations the Ray dashboard needs behind ingress-nginx.

Order on a fresh cluster: the chart (its ``startupapicheck`` Job, a Helm hook that Chart v4 renders
as an ordinary Job the provider waits for, passes only once cert-manager's webhook answers), then the
issuers, then the certificates, then the workloads whose ingresses use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.manifests.common import metadata
from components.manifests.namespace import namespace
from components.spec.certificates import CertManagerInstall, CertManagerSpec, cluster_issuer_name
from components.spec.workloads import ClusterBase

API_VERSION = "cert-manager.io/v1"
CA_SECRET = "kuberay-platform-ca"
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
"""KubeRay 1.7.0 turns it into the head Ingress's ``ingressClassName`` (common/ingress.go) and copies
every other annotation of the workload onto the Ingress."""
NGINX_DASHBOARD_ANNOTATIONS = {
    # The dashboard streams logs and job status over websockets: keep idle connections open.
    "nginx.ingress.kubernetes.io/proxy-read-timeout": "3600",
    "nginx.ingress.kubernetes.io/proxy-send-timeout": "3600",
    # Job submission uploads the working_dir package through the dashboard; Ray caps it at its gRPC
    # message size, 512 MiB (GCS_STORAGE_MAX_SIZE).
    "nginx.ingress.kubernetes.io/proxy-body-size": "512m",
    # Large dashboard responses (and auth headers) overflow ingress-nginx's default 4k buffer.
    "nginx.ingress.kubernetes.io/proxy-buffer-size": "16k",
}


def cert_manager_values(install: CertManagerInstall) -> dict[str, Any]:
    """Chart values: CRDs from the chart and kept (``crds.keep``; the platform also retains them on
    destroy), replicas with PodDisruptionBudgets when more than one."""
    ha = install.replicas > 1
    pdb = {"enabled": ha, "minAvailable": 1} if ha else {"enabled": False}
    return {
        "crds": {"enabled": True, "keep": True},
        "replicaCount": install.replicas,
        "podDisruptionBudget": pdb,
        "webhook": {"replicaCount": install.replicas, "podDisruptionBudget": dict(pdb)},
    }


def issuers(spec: CertManagerSpec, environment: str) -> list[dict[str, Any]]:
    """The platform's ClusterIssuers (and the CA certificate), in creation order."""
    objects: list[dict[str, Any]] = []
    if spec.ca is not None:
        selfsigned = cluster_issuer_name("selfsigned")
        objects += [
            {
                "apiVersion": API_VERSION,
                "kind": "ClusterIssuer",
                "metadata": metadata(selfsigned, None, environment, "certificates"),
                "spec": {"selfSigned": {}},
            },
            {
                "apiVersion": API_VERSION,
                "kind": "Certificate",
                "metadata": metadata(CA_SECRET, spec.namespace, environment, "certificates"),
                "spec": {
                    "isCA": True,
                    "commonName": spec.ca.common_name,
                    "secretName": CA_SECRET,
                    "duration": f"{spec.ca.duration_hours}h",
                    "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                    "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": selfsigned},
                },
            },
            {
                "apiVersion": API_VERSION,
                "kind": "ClusterIssuer",
                "metadata": metadata(cluster_issuer_name("ca"), None, environment, "certificates"),
                "spec": {"ca": {"secretName": CA_SECRET}},
            },
        ]
    if spec.acme is not None:
        name = cluster_issuer_name("acme")
        objects.append(
            {
                "apiVersion": API_VERSION,
                "kind": "ClusterIssuer",
                "metadata": metadata(name, None, environment, "certificates"),
                "spec": {
                    "acme": {
                        "email": spec.acme.email,
                        "server": str(spec.acme.server),
                        "privateKeySecretRef": {"name": f"{name}-account"},
                        "solvers": [{"http01": {"ingress": {"ingressClassName": spec.acme.ingress_class}}}],
                    }
                },
            }
        )
    return objects


def dashboard_tls_secret(w: ClusterBase) -> str | None:
    """The TLS Secret of a workload's head ingress: named in the spec, or the one cert-manager issues."""
    ingress = w.head.ingress
    if ingress is None:
        return None
    if ingress.tls_secret:
        return ingress.tls_secret
    return f"{w.name}-dashboard-tls" if ingress.certificate else None


def dashboard_certificate(w: ClusterBase, issuer: str, environment: str) -> dict[str, Any]:
    ingress = w.head.ingress
    assert ingress is not None
    secret = dashboard_tls_secret(w)
    return {
        "apiVersion": API_VERSION,
        "kind": "Certificate",
        "metadata": metadata(f"{w.name}-dashboard", w.namespace, environment, "certificates"),
        "spec": {
            "secretName": secret,
            "dnsNames": [ingress.host],
            "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
            "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": issuer},
        },
    }


def ingress_annotations(w: ClusterBase) -> dict[str, str]:
    """What the workload carries for KubeRay to copy onto its head Ingress."""
    ingress = w.head.ingress
    if ingress is None or ingress.class_name is None:
        return {}
    out = {INGRESS_CLASS_ANNOTATION: ingress.class_name}
    if ingress.class_name == "nginx":
        out |= NGINX_DASHBOARD_ANNOTATIONS
    return out


@dataclass(frozen=True)
class CertManagerManifests:
    spec: CertManagerSpec
    namespace: dict[str, Any] | None
    """cert-manager's namespace when the stack installs it (its pods run restricted)."""
    values: dict[str, Any] | None
    issuers: list[dict[str, Any]]
    certificates: list[dict[str, Any]]
    """Dashboard certificates, in the workloads' namespaces."""


def cert_manager(
    spec: CertManagerSpec, workloads: list[ClusterBase], environment: str, kubernetes_version: str
) -> CertManagerManifests:
    issuer = spec.issuer_for_ingress
    certificates = [
        dashboard_certificate(w, issuer, environment)
        for w in workloads
        if issuer is not None and w.head.ingress is not None and w.head.ingress.certificate
    ]
    install = spec.install
    return CertManagerManifests(
        spec=spec,
        namespace=(
            namespace(spec.namespace, environment, "cert-manager", "restricted", kubernetes_version)
            if install
            else None
        ),
        values=cert_manager_values(install) if install else None,
        issuers=issuers(spec, environment),
        certificates=certificates,
    )
