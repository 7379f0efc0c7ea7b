"""The local control plane (``make e2e``): etcd, kube-apiserver, kube-controller-manager and
kube-scheduler built from their pinned modules, started on loopback with generated certificates,
and stopped without leaving a process behind."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools import toolchain
from tools.controlplane import ControlPlane, running

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def binaries() -> dict[str, Path]:
    if shutil.which("go") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("go is not installed (the control plane is built from its pinned modules)")
        pytest.skip("needs go")
    return toolchain.ensure(log=lambda _: None, groups=("controlplane",))


@pytest.fixture(scope="module")
def plane(binaries: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    with running(binaries, tmp_path_factory.mktemp("controlplane")) as started:
        yield started


def test_the_api_server_reports_its_pinned_release(plane: ControlPlane) -> None:
    version = json.loads(plane.get("/version"))
    assert version["gitVersion"] == toolchain.KUBERNETES_VERSION
    assert (version["major"], version["minor"]) == ("1", "36")


def test_the_api_server_is_ready_with_its_built_in_namespaces(plane: ControlPlane) -> None:
    names = {n["metadata"]["name"] for n in json.loads(plane.get("/api/v1/namespaces"))["items"]}
    assert {"default", "kube-system", "kube-public"} <= names


def test_stopping_leaves_no_process_behind(binaries: dict[str, Path], tmp_path: Path) -> None:
    with running(binaries, tmp_path / "plane") as started:
        pids = [p.pid for p in started.processes.values()]
        assert set(started.processes) == {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
