"""Namespaces with Pod Security Admission labels."""

from __future__ import annotations

from typing import Any, Literal

from components.manifests.common import metadata

PodSecurityLevel = Literal["privileged", "baseline", "restricted"]


def namespace(
    name: str, environment: str, component: str, enforce: PodSecurityLevel, kubernetes_version: str
) -> dict[str, Any]:
    """A Namespace that enforces ``enforce`` and warns/audits against ``restricted``.

    The enforce version is pinned to the cluster's minor version so a control-plane upgrade does
    not silently tighten the rules under running workloads.
    """
    meta = metadata(name, None, environment, component)
    version = f"v{kubernetes_version}"
    meta["labels"].update(
        {
            "pod-security.kubernetes.io/enforce": enforce,
            "pod-security.kubernetes.io/enforce-version": version,
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/warn-version": version,
            "pod-security.kubernetes.io/audit": "restricted",
            "pod-security.kubernetes.io/audit-version": version,
        }
    )
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
