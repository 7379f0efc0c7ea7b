from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tools.schema import yaml_load_all  # noqa: E402

SHARED = Path(os.environ.get("KUBERAY_PLATFORM_SHARED", REPO.parent / "shared"))
"""The workplace's upstream material (samples, charts, raw CRDs). Tests may read it; the product
never does. Without it, the tests that need it skip, saying so; with ``CI=true`` they fail."""
SAMPLES = SHARED / "samples"
UPSTREAM_CRDS = SHARED / "crds"


def needs_shared(path: Path) -> None:
    """Skip (fail under ``CI=true``) when a test's upstream material is absent."""
    if path.exists():
        return
    message = f"needs {path} (the upstream material beside the repository; set KUBERAY_PLATFORM_SHARED)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def needs_tool(command: str, package: str) -> str:
    """The path of ``command``; skip without it (fail under ``CI=true``: ``make test`` installs the
    Debian ``package`` as root)."""
    path = shutil.which(command)
    if path is not None:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{command} is not installed (make test installs Debian's {package} as root)")
    pytest.skip(f"needs {command} (Debian package {package})")


@pytest.fixture()
def samples_dir() -> Path:
    needs_shared(SAMPLES)
    return SAMPLES


@pytest.fixture()
def upstream_crds() -> Path:
    needs_shared(UPSTREAM_CRDS)
    return UPSTREAM_CRDS


def sample(name: str) -> list[dict[str, Any]]:
    """Every object of one upstream sample file (``kuberay/ray-cluster.mtls.yaml``)."""
    needs_shared(SAMPLES / name)
    return [d for d in yaml_load_all((SAMPLES / name).read_text()) if isinstance(d, dict)]


def all_samples() -> Iterator[tuple[str, dict[str, Any]]]:
    needs_shared(SAMPLES)
    for path in sorted(SAMPLES.rglob("*.yaml")):
        for doc in yaml_load_all(path.read_text()):
            if isinstance(doc, dict):
                yield str(path.relative_to(SAMPLES)), doc


def minimal_platform(**overrides: Any) -> dict[str, Any]:
    """The smallest valid platform spec, as a stack file would hold it."""
    data: dict[str, Any] = {
        "environment": "dev",
        "workloads": {
            "rayClusters": [{"name": "c1", "namespace": "ray", "workerGroups": [{"name": "cpu", "maxReplicas": 2}]}]
        },
    }
    data.update(overrides)
    return data


def crd_without(kind_file: str, drop: str) -> dict:
    """A CRD as upstream writes it, from the project's schema of ``kind_file``, without one spec field
    (a release that lacks it)."""
    entry = json.loads((REPO / "schemas" / "crds" / kind_file).read_text())
    for v in entry["versions"]:
        v["schema"]["properties"]["spec"]["properties"].pop(drop, None)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{entry['plural']}.{entry['group']}"},
        "spec": {
            "group": entry["group"],
            "names": {"kind": entry["kind"], "plural": entry["plural"]},
            "scope": entry["scope"],
            "versions": [
                {"name": v["name"], "served": True, "storage": v["storage"], "schema": {"openAPIV3Schema": v["schema"]}}
                for v in entry["versions"]
            ],
        },
    }
