"""NamespacePolicies: the platform's NetworkPolicies (``platform.networkPolicies``), created once the
namespaces exist and before any workload, so no Ray pod starts without its allowances (and none is
left running without them on destroy)."""

from __future__ import annotations

import pulumi

from components.manifests.cluster import WORKLOAD_LABEL
from components.objects import ObjectGroup


class NamespacePolicies(ObjectGroup):
    TYPE = "kuberay-platform:index:NamespacePolicies"

    def needed_by(self, namespace: str, workload: str) -> list[pulumi.Resource]:
        """The namespace's policies, except those of its other workloads (one each)."""
        return [
            r
            for r, obj in zip(self.resources, self.objects, strict=True)
            if obj["metadata"].get("namespace") == namespace
            and obj["spec"]["podSelector"].get("matchLabels", {}).get(WORKLOAD_LABEL, workload) == workload
        ]
