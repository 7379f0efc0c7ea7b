"""The platform on a local control plane (``make e2e``): the cluster a stack is deployed into.

``local_cluster`` starts, on loopback, from the pinned builds (``make controlplane-toolchain``):

- etcd, kube-apiserver, kube-controller-manager and kube-scheduler (``tools.controlplane``);
- kwok with fake nodes mirroring the stack's pools and a default StorageClass it provisions
  (``tools.kwok``);
- the Kueue controller v0.19.2 with the stack's Kueue configuration and its Ray and core webhooks
  (``tools.kueue_local``), when the stack uses Kueue.

What the e2e installs itself, and why:

- CRDs of what the stacks declare as prerequisites (prometheus-operator, cert-manager, Gateway API):
  their controllers are not part of the platform, and cert-manager's webhook would point at pods
  that serve nothing here. The caller passes the files (the tests take the pinned upstream copies).
- Kueue's CRDs and webhooks, and Kueue itself as a local process: a stack that installs Kueue's chart
  (``kueue.install``) runs here in the "already installed" mode (``prerequisites.kueue``), because the
  chart's webhooks would point at a Service whose pods never run. The process gets the same
  Configuration the chart would.
- The prerequisite Secrets and claims the stack declares (``prerequisites.secrets``,
  ``persistentVolumeClaims``), with placeholder values.

Not here: the KubeRay operator. The Go module proxy refuses ``github.com/ray-project/kuberay/
ray-operator`` v1.7.0 (403), and KubeRay 1.6.x, which it serves, is no stand-in: its controllers
``Update`` whole objects (finalizers) with 1.6 types, which would strip 1.7.0 fields such as
``gcsFaultToleranceOptions.backend`` from what Pulumi applied. So the stacks run with
``workloads.waitForReady: false``; the chart's operator Deployment is applied as rendered and its
pods run on kwok nodes, but no controller reconciles the Ray objects.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.spec.kueue import KueueInstallSpec
from components.spec.platform import PlatformSpec
from tools import controlplane, kueue_local, kwok, toolchain
from tools.controlplane import ControlPlane, free_port, spawn
from tools.kube import Client, apply_all, wait_until

PROJECT = "kuberay-platform"
PLACEHOLDER = "e2e-placeholder"
KUEUE_READY_SECONDS = 120
NOT_READY_TAINT = "node.kubernetes.io/not-ready"


@dataclass
class LocalCluster:
    plane: ControlPlane
    client: Client
    kueue: bool

    @property
    def kubeconfig(self) -> Path:
        return self.plane.kubeconfig


def module_source(module: str, version: str, tool_dir: Path) -> Path:
    """Where ``go mod download`` keeps ``module@version`` (verified against the tools module's go.sum)."""
    proc = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        cwd=tool_dir,
        env={**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=readonly"},
        capture_output=True,
        text=True,
    )
    info = json.loads(proc.stdout or "{}")
    if proc.returncode != 0 or "Dir" not in info:
        raise RuntimeError(f"go mod download {module}@{version}: {info.get('Error') or proc.stderr.strip()}")
    return Path(info["Dir"])


def uses_kueue(spec: PlatformSpec) -> bool:
    return spec.kueue.install is not None or spec.prerequisites.kueue


def kueue_install_spec(spec: PlatformSpec) -> KueueInstallSpec:
    """What configures the local Kueue: the stack's install spec, else the chart's defaults with the Ray
    integrations (what ``prerequisites.kueue`` asks of an existing installation)."""
    return spec.kueue.install or KueueInstallSpec()


def e2e_document(document: Mapping[str, Any]) -> dict[str, Any]:
    """The stack file as the e2e deploys it: waits for nothing KubeRay would report (no operator runs),
    and Kueue (and cert-manager) in "already installed" mode."""
    doc = copy.deepcopy(dict(document))
    platform = doc["config"][f"{PROJECT}:platform"]
    platform.setdefault("workloads", {})["waitForReady"] = False
    prerequisites = platform.setdefault("prerequisites", {})
    kueue = platform.get("kueue")
    if isinstance(kueue, dict) and kueue.get("install") is not None:
        del kueue["install"]
        prerequisites["kueue"] = True
    cert_manager = platform.get("certManager")
    if isinstance(cert_manager, dict) and cert_manager.get("install") is not None:
        del cert_manager["install"]
        prerequisites["certManager"] = True
    return doc


def prerequisite_objects(spec: PlatformSpec) -> list[dict[str, Any]]:
    """The namespaces, Secrets and claims the stack declares it finds in the cluster; with
    ``prometheusOperator``, the namespace of the Prometheus that selects the stack's monitors, and with
    ``certManager``, cert-manager's own namespace."""
    prereq = spec.prerequisites
    namespaces = {s.namespace for s in prereq.secrets} | {c.namespace for c in prereq.persistent_volume_claims}
    if prereq.prometheus_operator and spec.monitoring is not None:
        namespaces.add(spec.monitoring.prometheus.namespace)
    if prereq.cert_manager and spec.cert_manager is not None:
        namespaces.add(spec.cert_manager.namespace)
    out: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in sorted(namespaces)
    ]
    for secret in prereq.secrets:
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": secret.name, "namespace": secret.namespace},
                "stringData": dict.fromkeys(secret.keys or ["value"], PLACEHOLDER),
            }
        )
    for claim in prereq.persistent_volume_claims:
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim.name, "namespace": claim.namespace},
                "spec": {
                    "accessModes": [claim.access_mode],
                    "resources": {"requests": {"storage": str(claim.size or "1Gi")}},
                },
            }
        )
    return out


def _documents(paths: Sequence[Path]) -> list[dict[str, Any]]:
    return [doc for path in paths for doc in yaml.safe_load_all(path.read_text()) if doc]


def _start_kwok(plane: ControlPlane, client: Client, binaries: Mapping[str, Path], spec: PlatformSpec) -> None:
    tool = next(t for t in toolchain.CONTROL_PLANE if t.name == "kwok")
    source = module_source("sigs.k8s.io/kwok", tool.version, tool.module_dir)
    spawn(plane, "kwok", kwok.argv(binaries["kwok"], plane.kubeconfig, source, free_port()))
    nodes = kwok.nodes(spec.workloads.pools)
    apply_all(client, [kwok.storage_class(), *nodes])

    def ready() -> bool:
        found = client.list("v1", "Node", selector="type=kwok")
        return len(found) == len(nodes) and all(
            any(c["type"] == "Ready" and c["status"] == "True" for c in (n.get("status") or {}).get("conditions") or [])
            and not any(t["key"] == NOT_READY_TAINT for t in n["spec"].get("taints") or [])
            for n in found
        )

    # Ready, and the node lifecycle controller took away the taint the API server put on the new node.
    wait_until("kwok nodes Ready", ready, timeout=90)


def _start_kueue(plane: ControlPlane, client: Client, binaries: Mapping[str, Path], spec: PlatformSpec) -> None:
    tool = next(t for t in toolchain.CONTROL_PLANE if t.name == "kueue")
    source = module_source("sigs.k8s.io/kueue", tool.version, tool.module_dir)
    apply_all(client, kueue_local.crds(source))
    install = kueue_install_spec(spec)
    root = plane.root / "kueue"
    ca = kueue_local.serving_certificate(root / "webhook-certs")
    try:
        kueue_local.serving_certificate(kueue_local.METRICS_CERT_DIR)
    except PermissionError as exc:
        raise RuntimeError(
            f"Kueue reads its metrics certificate from {kueue_local.METRICS_CERT_DIR} only: run as root ({exc})"
        ) from None
    ports = {name: free_port() for name in ("health", "metrics", "webhook")}
    config = root / "config.yaml"
    config.write_text(yaml.safe_dump(kueue_local.configuration(install, root / "webhook-certs", ports)))
    client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": kueue_local.NAMESPACE}})
    spawn(plane, "kueue", kueue_local.argv(binaries["kueue"], config, plane.kubeconfig, install))

    def healthy() -> bool:
        if plane.processes["kueue"].poll() is not None:
            raise RuntimeError(f"kueue exited: {plane.log('kueue')[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ports['health']}/readyz", timeout=5) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    wait_until("Kueue ready", healthy, timeout=KUEUE_READY_SECONDS)
    apply_all(client, kueue_local.webhook_configurations(source, ports["webhook"], ca))


@contextmanager
def local_cluster(
    binaries: Mapping[str, Path], root: Path, spec: PlatformSpec, prerequisite_crds: Sequence[Path] = ()
) -> Iterator[LocalCluster]:
    """A control plane ready for ``spec``'s stack; every process stops on exit."""
    with controlplane.running(binaries, root) as plane:
        client = plane.client()
        wait_until("default ServiceAccount", lambda: client.exists("v1", "ServiceAccount", "default", "default"))
        _start_kwok(plane, client, binaries, spec)
        apply_all(client, _documents(prerequisite_crds))
        kueue = uses_kueue(spec)
        if kueue:
            _start_kueue(plane, client, binaries, spec)
        apply_all(client, prerequisite_objects(spec))
        yield LocalCluster(plane, client, kueue)
