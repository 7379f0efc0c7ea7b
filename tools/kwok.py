"""Fake nodes for the local control plane: kwok (sigs.k8s.io/kwok v0.8.0) manages Node objects that
carry its annotation and moves the pods kube-scheduler binds to them to Running and Ready. No kubelet,
no container runtime: nothing inside these pods runs.

The node set mirrors a stack's pools, with the labels, taints and extended resources the platform's
pods select and tolerate (``components.manifests.cluster.pool_selector``): CPU nodes, GPU nodes of
the named product with ``nvidia.com/gpu``, and two slices of TPU hosts per TPU pool with the GKE TPU
labels, ``google.com/tpu`` and one node pool label per slice. kwok v0.8.0 has no built-in stages: the
node, pod and volume Stage files come from its module (``go mod download``), and a ``kwok-volume``
StorageClass (its volume stages provision claims of that class) is the default class.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components.manifests.cluster import pool_selector
from components.spec.workloads import CpuPool, GpuPool, TpuPool

MANAGED = "kwok.x-k8s.io/node"
POOL_LABEL = "kuberay-platform.io/e2e-pool"
SLICE_LABEL = "cloud.google.com/gke-nodepool"
STORAGE_CLASS = "kwok-volume"
STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat/node-heartbeat.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
    "kustomize/stage/volume/fast/pvc-provision.yaml",
    "kustomize/stage/volume/fast/pv-bind.yaml",
    "kustomize/stage/volume/fast/pvc-delete.yaml",
    "kustomize/stage/volume/fast/pv-delete.yaml",
)
CPU_NODES = 3
GPU_NODES = 4
TPU_SLICES = 2


def stage_files(module_dir: Path) -> list[Path]:
    return [module_dir / stage for stage in STAGES]


def _node(
    name: str, labels: Mapping[str, str], taints: list[dict[str, str]], extra: Mapping[str, str]
) -> dict[str, Any]:
    capacity = {"cpu": "64", "memory": "512Gi", "pods": "110", "ephemeral-storage": "1Ti", **extra}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {MANAGED: "fake"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **labels,
            },
        },
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def _taints(pool: CpuPool | GpuPool | TpuPool) -> list[dict[str, str]]:
    """What the pool's pods tolerate is what its nodes are tainted with."""
    return [
        {"key": t.key, "value": t.value or "", "effect": t.effect}
        for t in pool.tolerations
        if t.effect in ("NoSchedule", "NoExecute")
    ]


def nodes(pools: Mapping[str, CpuPool | GpuPool | TpuPool]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, pool in sorted(pools.items()):
        labels = {POOL_LABEL: name, **pool_selector(pool)}
        if isinstance(pool, CpuPool):
            out += [_node(f"{name}-{i}", labels, _taints(pool), {}) for i in range(CPU_NODES)]
        elif isinstance(pool, GpuPool):
            gpus = str(max(8, pool.gpus_per_pod))
            out += [_node(f"{name}-{i}", labels, _taints(pool), {"nvidia.com/gpu": gpus}) for i in range(GPU_NODES)]
        else:
            chips = str(min(pool.chips, pool.chips_per_host))
            for s in range(TPU_SLICES):
                slice_labels = {**labels, SLICE_LABEL: f"{name}-slice-{s}"}
                out += [
                    _node(f"{name}-slice-{s}-{h}", slice_labels, _taints(pool), {"google.com/tpu": chips})
                    for h in range(pool.hosts)
                ]
    return out


def storage_class() -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": STORAGE_CLASS,
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "kwok.x-k8s.io/volume",
        "volumeBindingMode": "Immediate",
        "reclaimPolicy": "Delete",
        "allowVolumeExpansion": True,
    }


def argv(binary: Path, kubeconfig: Path, module_dir: Path, server_port: int) -> list[str]:
    return [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={MANAGED}=fake",
        f"--server-address=127.0.0.1:{server_port}",
        "--node-ip=127.0.0.1",
        *(f"--config={path}" for path in stage_files(module_dir)),
    ]
