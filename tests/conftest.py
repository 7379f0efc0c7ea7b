from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tools.schema import default_crd_dir, yaml_load_all  # noqa: E402

SHARED = Path(os.environ.get("KUBERAY_PLATFORM_SHARED", REPO.parent / "shared"))
SAMPLES = SHARED / "samples"


@pytest.fixture(scope="session")
def crd_dir() -> Path:
    path = default_crd_dir()
    if not path.is_dir():
        pytest.fail(f"upstream CRDs not found at {path}; set KUBERAY_PLATFORM_CRDS")
    return path


def sample(name: str) -> list[dict[str, Any]]:
    """Every object of one upstream sample file (``kuberay/ray-cluster.mtls.yaml``)."""
    return [d for d in yaml_load_all((SAMPLES / name).read_text()) if isinstance(d, dict)]


def all_samples() -> Iterator[tuple[str, dict[str, Any]]]:
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
