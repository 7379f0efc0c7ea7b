"""cert-manager for the platform (``platform.certManager``): installed by the stack or already there
(``prerequisites.certManager``), the ClusterIssuers the platform's certificates come from, and what
needs it: TLS for heads' dashboard ingresses, and KubeRay's mTLS (``mtls: true``), which issues its
certificates through cert-manager itself."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import AnyHttpUrl, Field, model_validator

from components.spec.base import K8sName, Model
from components.spec.chart import ChartSource

CERT_MANAGER_VERSION: Final = "v1.21.1"
"""Pinned with the cert-manager schemas and chart values in ``schemas/`` (``schemas/pins.yaml``)."""
CERT_MANAGER_REPOSITORY = "https://charts.jetstack.io"
LETSENCRYPT = "https://acme-v02.api.letsencrypt.org/directory"


class CertManagerInstall(Model):
    """cert-manager from its chart, CRDs included and kept on destroy."""

    chart_version: Literal["v1.21.1"] = CERT_MANAGER_VERSION
    chart: ChartSource = ChartSource(repository=CERT_MANAGER_REPOSITORY)
    replicas: int = Field(default=1, ge=1, le=3)
    """Controller and webhook replicas (more than one: leader election and PodDisruptionBudgets)."""

    @model_validator(mode="after")
    def _archive_matches_version(self) -> CertManagerInstall:
        self.chart.check_archive("cert-manager", self.chart_version)
        return self


class CaIssuer(Model):
    """A private CA: a self-signed bootstrap ClusterIssuer signs the CA certificate (its key in
    cert-manager's namespace), and a CA ClusterIssuer signs everything else with it. For internal
    hosts; clients must trust the CA (``kubectl -n <certManager.namespace> get secret
    kuberay-platform-ca -o jsonpath='{.data.ca\\.crt}'``)."""

    common_name: str = Field(default="kuberay-platform CA", min_length=1, max_length=64)
    duration_hours: int = Field(default=87600, ge=720)
    """The CA certificate's lifetime (cert-manager renews it at two thirds)."""


class AcmeIssuer(Model):
    """An ACME ClusterIssuer (Let's Encrypt by default) solving HTTP-01 through an ingress class:
    for hosts the internet can resolve and reach."""

    email: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    server: AnyHttpUrl = AnyHttpUrl(LETSENCRYPT)
    ingress_class: str = Field(min_length=1)
    """The ingress class that serves the HTTP-01 challenges."""


class CertManagerSpec(Model):
    namespace: K8sName = "cert-manager"
    """cert-manager's namespace, also its cluster resource namespace: where a CA ClusterIssuer reads
    its key."""
    install: CertManagerInstall | None = None
    """Install cert-manager; without it ``prerequisites.certManager: true`` says it is there."""
    ca: CaIssuer | None = None
    acme: AcmeIssuer | None = None
    ingress_issuer: Literal["ca", "acme"] | None = None
    """Which issuer signs dashboard ingress certificates. Default: the only one configured."""

    @model_validator(mode="after")
    def _issuer_is_configured(self) -> CertManagerSpec:
        if self.ingress_issuer is not None and getattr(self, self.ingress_issuer) is None:
            raise ValueError(
                f"ingressIssuer: {self.ingress_issuer} is not configured; add certManager.{self.ingress_issuer}"
            )
        if self.ingress_issuer is None and self.ca is not None and self.acme is not None:
            raise ValueError("ingressIssuer: both ca and acme are configured; say which signs ingress certificates")
        return self

    @property
    def issuer_for_ingress(self) -> str | None:
        """The ClusterIssuer name dashboard certificates come from, or None without issuers."""
        chosen = self.ingress_issuer or ("ca" if self.ca is not None else "acme" if self.acme is not None else None)
        return None if chosen is None else cluster_issuer_name(chosen)


def cluster_issuer_name(kind: Literal["ca", "acme", "selfsigned"]) -> str:
    return f"kuberay-platform-{kind}"
