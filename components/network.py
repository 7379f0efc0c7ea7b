"""NamespacePolicies: the platform's NetworkPolicies (``platform.networkPolicies``), created once the
namespaces exist and before any workload, so no Ray pod starts without its allowances (and none is
left running without them on destroy)."""

from __future__ import annotations

from components.objects import ObjectGroup


class NamespacePolicies(ObjectGroup):
    TYPE = "kuberay-platform:index:NamespacePolicies"
