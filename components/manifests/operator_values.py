"""Helm values for the kuberay-operator chart, built from the operator spec.

Every key set here exists in the chart's own values file (``kuberay-operator-values.yaml`` at
1.7.0); the offline preview checks that, extra values included.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from components.spec import OperatorSpec
from components.spec.monitoring import MonitoringSpec


def operator_values(
    spec: OperatorSpec, feature_gates: list[dict[str, Any]], monitoring: MonitoringSpec | None = None
) -> dict[str, Any]:
    """With ``monitoring`` the chart's own ServiceMonitor stays off: the platform emits the operator's
    ServiceMonitor itself (``components.manifests.monitoring.operator_service_monitor``). A chart
    rendering one makes ``helm.v4.Chart`` ask the API server whether the kind is namespaced, which
    fails wherever no cluster answers (render mode, offline previews)."""
    profile = spec.profile
    resources = spec.resources or profile.resources
    values: dict[str, Any] = {
        "image": {"repository": spec.image.repository, "tag": spec.image.tag},
        "replicas": spec.replicas,
        "featureGates": feature_gates,
        "reconcileConcurrency": spec.reconcile_concurrency or profile.reconcile_concurrency,
        "kubeClient": {
            "qps": float(spec.kube_client_qps or profile.kube_client_qps),
            "burst": spec.kube_client_burst or profile.kube_client_burst,
        },
        "metrics": {
            "enabled": True,
            "serviceMonitor": {
                "enabled": spec.service_monitor.enabled,
                "interval": spec.service_monitor.interval,
                "additionalLabels": dict(spec.service_monitor.labels),
            },
        },
        "resources": resources.model_dump(),
        "leaderElectionEnabled": True,
    }
    if monitoring is not None:
        values["metrics"]["serviceMonitor"]["enabled"] = False
    if spec.batch_scheduler is not None:
        # Only the name: with the deprecated ``enabled`` as well the operator exits at start
        # (ValidateBatchSchedulerConfig, KubeRay 1.7.0).
        values["batchScheduler"] = {"name": spec.batch_scheduler}
    if spec.watch_namespaces is not None:
        # Namespaced RBAC (Role/RoleBinding per watched namespace) instead of a ClusterRole.
        values["singleNamespaceInstall"] = True
        values["crNamespacedRbacEnable"] = True
        values["watchNamespace"] = list(spec.watch_namespaces)
    return deep_merge(values, spec.extra_values)


def team_operator_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """A team's own operator: the platform operator's values (feature gates, scale, scheduler) in the
    chart's single-namespace mode watching only its release namespace (a Role, not a ClusterRole), and
    no ServiceMonitor of the chart's."""
    out = copy.deepcopy(dict(values))
    for key in ("watchNamespace", "crNamespacedRbacEnable"):
        out.pop(key, None)
    out["singleNamespaceInstall"] = True
    out["metrics"] = deep_merge(out.get("metrics", {}), {"serviceMonitor": {"enabled": False}})
    return out


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge: maps merge key by key, anything else (lists included) is replaced."""
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
