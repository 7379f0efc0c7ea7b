"""NFS exports as PersistentVolumes (pure): a workload's ``volumes[].nfs`` becomes a PersistentVolume
(cluster-scoped, ``Retain``: deleting it never touches the export) pre-bound to a PVC in the
workload's namespace, which every Ray pod mounts. Pod Security ``restricted`` refuses inline ``nfs``
volumes but allows PVCs; kubelet mounts the export the same way either way."""

from __future__ import annotations

from typing import Any

from components.manifests.cluster import nfs_claim_name
from components.manifests.common import metadata
from components.spec.workloads import ClusterBase

NOMINAL_CAPACITY = "1Ti"
"""PersistentVolumes need a capacity and claims a request; NFS enforces neither. The PV has no
class (``storageClassName`` unset means none for a PV); the claim says ``""`` explicitly, or the
DefaultStorageClass admission gives it the default class and it never binds to the PV."""


def nfs_volumes(workloads: list[ClusterBase], environment: str) -> list[dict[str, Any]]:
    """A PersistentVolume and its PVC per NFS volume of each workload (PVs first)."""
    volumes: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []
    for w in workloads:
        for v in w.volumes:
            if v.nfs is None:
                continue
            claim = nfs_claim_name(w, v)
            pv = f"{w.namespace}-{claim}"
            modes = ["ReadOnlyMany"] if v.nfs.read_only else ["ReadWriteMany"]
            volumes.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolume",
                    "metadata": metadata(pv, None, environment, "shared-volumes"),
                    "spec": {
                        "capacity": {"storage": NOMINAL_CAPACITY},
                        "accessModes": modes,
                        "persistentVolumeReclaimPolicy": "Retain",
                        "nfs": {
                            "server": v.nfs.server,
                            "path": v.nfs.path,
                            **({"readOnly": True} if v.nfs.read_only else {}),
                        },
                        "claimRef": {"namespace": w.namespace, "name": claim},
                    },
                }
            )
            claims.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": metadata(claim, w.namespace, environment, "shared-volumes"),
                    "spec": {
                        "accessModes": modes,
                        "storageClassName": "",
                        "volumeName": pv,
                        "resources": {"requests": {"storage": NOMINAL_CAPACITY}},
                    },
                }
            )
    return [*volumes, *claims]
