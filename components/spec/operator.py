"""The KubeRay operator's part of the spec: chart, image, scale, namespaces, feature gates."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, model_validator

from components.spec.base import (
    KUBERAY_CHART_REPO,
    KUBERAY_VERSION,
    Duration,
    FeatureGate,
    ImageTag,
    K8sName,
    Model,
    Resources,
)


class ImageRef(Model):
    repository: str
    tag: ImageTag


class OperatorResources(Model):
    requests: Resources
    limits: Resources


class ScaleProfile(Model):
    reconcile_concurrency: int = Field(ge=1)
    kube_client_qps: float = Field(gt=0)
    kube_client_burst: int = Field(ge=1)
    resources: OperatorResources


SCALE_PROFILES: dict[str, ScaleProfile] = {
    # Chart defaults: one reconcile at a time, 100 QPS / 200 burst. The chart notes that about 500
    # Ray pods need roughly 500 MB of operator memory, so 512Mi covers a small platform.
    "small": ScaleProfile(
        reconcile_concurrency=1,
        kube_client_qps=100.0,
        kube_client_burst=200,
        resources=OperatorResources(
            requests=Resources(cpu="100m", memory="512Mi"),
            limits=Resources(cpu="500m", memory="512Mi"),
        ),
    ),
    # KubeRay v1.5 scale test: 100 RayClusters with 10,000 pods created in 3m20s with
    # reconcileConcurrency 20, kubeClient.qps 100, kubeClient.burst 200 (seeds ch. 8.10). Memory
    # follows the chart's ~1 MB per Ray pod; CPU is raised so 20 reconcilers are not throttled.
    "large": ScaleProfile(
        reconcile_concurrency=20,
        kube_client_qps=100.0,
        kube_client_burst=200,
        resources=OperatorResources(
            requests=Resources(cpu="1", memory="10Gi"),
            limits=Resources(cpu="4", memory="10Gi"),
        ),
    ),
}


PROJECT_ROOT = Path(__file__).resolve().parents[2]


class ChartSource(Model):
    """Where the operator chart comes from: exactly one of a Helm repository (the default, the public
    KubeRay repository), an OCI reference, or a local chart archive for air-gapped clusters."""

    repository: str | None = None
    """An HTTP(S) Helm repository URL; the chart ``kuberay-operator`` at ``chartVersion`` is taken from it."""
    oci: str | None = None
    """A full OCI chart reference, ``oci://<registry>/<path>/kuberay-operator`` (version: ``chartVersion``)."""
    archive: str | None = None
    """A packaged chart (``helm package``/``helm pull``), absolute or relative to the project root. It must
    be the ``kuberay-operator`` chart at ``chartVersion``; the provider reads it on every preview and up."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ChartSource:
        chosen = [k for k in ("repository", "oci", "archive") if getattr(self, k)]
        if len(chosen) != 1:
            raise ValueError(f"set exactly one of repository, oci, archive (got {', '.join(chosen) or 'none'})")
        if self.repository and not self.repository.startswith(("https://", "http://")):
            raise ValueError(f"repository must be an http(s):// Helm repository URL (got {self.repository!r})")
        if self.oci and not self.oci.startswith("oci://"):
            raise ValueError(f"oci must be an oci:// chart reference (got {self.oci!r})")
        return self

    @property
    def archive_path(self) -> Path | None:
        return (PROJECT_ROOT / self.archive).resolve() if self.archive else None

    def describe(self) -> str:
        return self.repository or self.oci or f"archive {self.archive}"


def archive_chart(path: Path) -> dict[str, Any]:
    """The ``Chart.yaml`` of a packaged chart (``<name>/Chart.yaml`` inside the archive)."""
    try:
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                parts = member.name.split("/")
                if len(parts) == 2 and parts[1] == "Chart.yaml" and member.isfile():
                    handle = tar.extractfile(member)
                    if handle is not None:
                        data = yaml.safe_load(handle.read())
                        if isinstance(data, dict):
                            return data
    except (OSError, tarfile.TarError) as exc:
        raise ValueError(f"cannot read chart archive {path}: {exc}") from None
    raise ValueError(f"{path} is not a packaged Helm chart (no <chart>/Chart.yaml inside)")


class ServiceMonitorSpec(Model):
    enabled: bool = False
    """Off by default: it needs the prometheus-operator CRDs in the cluster."""
    interval: Duration = "30s"
    """Prometheus scrape interval (the chart's default)."""
    labels: dict[str, str] = {}
    """Extra labels, e.g. ``release: prometheus`` so a Prometheus selector picks it up."""


class OperatorSpec(Model):
    namespace: K8sName = "kuberay-system"
    chart_version: Literal["1.7.0"] = "1.7.0"
    """Pinned: the KubeRay schemas in ``schemas/`` (``schemas/pins.yaml``) and every value below are for
    this version; a test fails when they disagree."""
    chart: ChartSource = ChartSource(repository=KUBERAY_CHART_REPO)
    """The chart's source; ``chartVersion`` is the version whatever the source."""
    image: ImageRef = ImageRef(repository="quay.io/kuberay/operator", tag=f"v{KUBERAY_VERSION}")
    replicas: int = Field(default=1, ge=1, le=3)
    """Operator pods; more than one only adds a standby (leader election is on)."""
    watch_namespaces: list[K8sName] | None = None
    """Multi-tenant mode: when set, the operator gets namespaced RBAC and watches only these."""
    scale: Literal["small", "large"] = "small"
    """``small``: chart defaults, up to ~500 Ray pods. ``large``: ~100 RayClusters / 10,000 pods."""
    reconcile_concurrency: int | None = Field(default=None, ge=1, le=100)
    """Overrides the scale profile's concurrent reconciles."""
    kube_client_qps: float | None = Field(default=None, gt=0)
    kube_client_burst: int | None = Field(default=None, ge=1)
    resources: OperatorResources | None = None
    """Overrides the scale profile's operator requests/limits."""
    feature_gates: dict[FeatureGate, bool] = {}
    """Explicit overrides; alpha gates are otherwise derived from what the workloads use."""
    service_monitor: ServiceMonitorSpec = ServiceMonitorSpec()
    extra_values: dict[str, Any] = {}
    """Escape hatch: raw chart values merged last. Every key must exist in the chart's values."""

    @model_validator(mode="after")
    def _archive_matches_version(self) -> OperatorSpec:
        path = self.chart.archive_path
        if path is None:
            return self
        if not path.is_file():
            raise ValueError(f"chart.archive: no such file {path} (a kuberay-operator-{self.chart_version}.tgz)")
        meta = archive_chart(path)
        if (meta.get("name"), str(meta.get("version"))) != ("kuberay-operator", self.chart_version):
            raise ValueError(
                f"chart.archive: {path} holds chart {meta.get('name')} {meta.get('version')}, "
                f"expected kuberay-operator {self.chart_version} (chartVersion)"
            )
        return self

    @property
    def profile(self) -> ScaleProfile:
        return SCALE_PROFILES[self.scale]
