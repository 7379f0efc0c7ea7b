"""Teams: each team namespace's LimitRange, ResourceQuota, Role and RoleBinding, created after the
namespaces and before any workload (a pod created before its LimitRange under a CPU or memory quota
is refused when it sets no requests)."""

from __future__ import annotations

from components.objects import ObjectGroup


class Teams(ObjectGroup):
    TYPE = "kuberay-platform:index:Teams"
