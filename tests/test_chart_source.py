"""The operator chart's source: the public repository, an OCI reference, or a local archive."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
import yaml

from components.charts import chart_source_args
from components.errors import ConfigError
from components.spec import parse_platform
from components.spec.base import KUBERAY_CHART_REPO
from tests.conftest import SHARED, minimal_platform, needs_shared

SOURCE = "stacks/Pulumi.test.yaml"


def operator_with(chart: dict) -> dict:
    return minimal_platform(operator={"chart": chart})


def errors_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_platform(data, SOURCE)
    return info.value.lines


def packaged(path: Path, name: str, version: str) -> Path:
    """A minimal packaged chart, as `helm package` lays it out: <name>/Chart.yaml inside a .tgz."""
    body = yaml.safe_dump({"apiVersion": "v2", "name": name, "version": version}).encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(f"{name}/Chart.yaml")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return path


def test_the_default_is_the_public_repository_at_the_pinned_version() -> None:
    spec = parse_platform(minimal_platform(), SOURCE).operator
    args = chart_source_args(spec.chart, "kuberay-operator", spec.chart_version)
    assert (args["chart"], args["version"], args["repository_opts"].repo) == (
        "kuberay-operator",
        "1.7.0",
        KUBERAY_CHART_REPO,
    )


def test_an_oci_reference_is_the_chart_with_the_pinned_version() -> None:
    ref = "oci://registry.example.com/charts/kuberay-operator"
    spec = parse_platform(operator_with({"oci": ref}), SOURCE).operator
    assert chart_source_args(spec.chart, "kuberay-operator", spec.chart_version) == {"chart": ref, "version": "1.7.0"}


def test_a_local_archive_is_passed_as_an_absolute_path(tmp_path: Path) -> None:
    archive = packaged(tmp_path / "kuberay-operator-1.7.0.tgz", "kuberay-operator", "1.7.0")
    spec = parse_platform(operator_with({"archive": str(archive)}), SOURCE).operator
    assert chart_source_args(spec.chart, "kuberay-operator", spec.chart_version) == {"chart": str(archive)}


def test_a_relative_archive_is_relative_to_the_project_root_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from components.spec import chart as operator

    packaged(tmp_path / "kuberay-operator-1.7.0.tgz", "kuberay-operator", "1.7.0")
    monkeypatch.setattr(operator, "PROJECT_ROOT", tmp_path)
    monkeypatch.chdir("/")
    spec = parse_platform(operator_with({"archive": "kuberay-operator-1.7.0.tgz"}), SOURCE).operator
    assert chart_source_args(spec.chart, "kuberay-operator", spec.chart_version) == {
        "chart": str(tmp_path / "kuberay-operator-1.7.0.tgz")
    }


def test_an_archive_of_another_version_or_chart_is_refused(tmp_path: Path) -> None:
    wrong = packaged(tmp_path / "old.tgz", "kuberay-operator", "1.6.0")
    (line,) = errors_of(operator_with({"archive": str(wrong)}))
    assert line.startswith(f"{SOURCE}: platform.operator: ")
    assert "holds chart kuberay-operator 1.6.0, expected kuberay-operator 1.7.0 (chartVersion)" in line
    other = packaged(tmp_path / "other.tgz", "kuberay-apiserver", "1.7.0")
    assert "holds chart kuberay-apiserver 1.7.0" in errors_of(operator_with({"archive": str(other)}))[0]


def test_a_missing_or_unreadable_archive_is_one_clear_line(tmp_path: Path) -> None:
    (line,) = errors_of(operator_with({"archive": str(tmp_path / "nope.tgz")}))
    assert "chart.archive: no such file" in line and "kuberay-operator-1.7.0.tgz" in line
    (tmp_path / "junk.tgz").write_bytes(b"not a tarball")
    (line,) = errors_of(operator_with({"archive": str(tmp_path / "junk.tgz")}))
    assert "cannot read chart archive" in line


@pytest.mark.parametrize(
    ("chart", "message"),
    [
        ({}, "set exactly one of repository, oci, archive (got none)"),
        ({"repository": KUBERAY_CHART_REPO, "oci": "oci://x/kuberay-operator"}, "(got repository, oci)"),
        ({"repository": "ray-project.github.io/kuberay-helm"}, "must be an http(s):// Helm repository URL"),
        ({"oci": "ghcr.io/x/kuberay-operator"}, "oci must be an oci:// chart reference"),
    ],
)
def test_exactly_one_well_formed_source(chart: dict, message: str) -> None:
    (line,) = errors_of(operator_with(chart))
    assert line.startswith(f"{SOURCE}: platform.operator.chart") and message in line


def test_the_shared_offline_chart_is_accepted() -> None:
    chart = SHARED / "charts" / "kuberay-operator-1.7.0.tgz"
    needs_shared(chart)
    spec = parse_platform(operator_with({"archive": str(chart)}), SOURCE).operator
    assert chart_source_args(spec.chart, "kuberay-operator", spec.chart_version) == {"chart": str(chart.resolve())}
