"""Where a Helm chart comes from (repository, OCI reference or local archive), for every chart the
platform installs."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import model_validator

from components.spec.base import Model

PROJECT_ROOT = Path(__file__).resolve().parents[2]


class ChartSource(Model):
    """Where a chart comes from: exactly one of a Helm repository, an OCI reference, or a local chart
    archive for air-gapped clusters. The version is the component's ``chartVersion`` whatever the source."""

    repository: str | None = None
    """An HTTP(S) Helm repository URL; the chart is taken from it at ``chartVersion``."""
    oci: str | None = None
    """A full OCI chart reference, ``oci://<registry>/<path>/<chart>`` (version: ``chartVersion``)."""
    archive: str | None = None
    """A packaged chart (``helm package``/``helm pull``), absolute or relative to the project root. It must
    be the component's chart at ``chartVersion``; the provider reads it on every preview and up."""

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

    def check_archive(self, chart: str, version: str) -> None:
        """A local archive must exist and hold ``chart`` at ``version``; raises ValueError otherwise."""
        path = self.archive_path
        if path is None:
            return
        if not path.is_file():
            raise ValueError(f"chart.archive: no such file {path} (a {chart}-{version}.tgz)")
        meta = archive_chart(path)
        if (meta.get("name"), str(meta.get("version"))) != (chart, version):
            raise ValueError(
                f"chart.archive: {path} holds chart {meta.get('name')} {meta.get('version')}, "
                f"expected {chart} {version} (chartVersion)"
            )


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
