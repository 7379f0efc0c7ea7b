"""Which KubeRay operator feature gates the emitted objects need, and the list the chart receives.

Alpha gates are switched on exactly when some object uses the field that needs them, so a stack
never runs an alpha code path it does not use; an explicit override in the spec wins. Derivation
reads Kubernetes objects (not the spec), so it also serves lint over any YAML.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.errors import ConfigError
from components.manifests.ray_objects import cluster_spec, dig, is_ray_object, job_spec, object_ref
from components.upstream import FEATURE_GATES

# gate -> what uses it (for messages)
FIELD_GATES: dict[str, str] = {
    "RayJobDeletionPolicy": "deletionStrategy",
    "RayServiceIncrementalUpgrade": "upgradeStrategy NewClusterWithIncrementalUpgrade",
    "GCSFaultToleranceEmbeddedStorage": "gcsFaultToleranceOptions.backend: rocksdb",
    "RayClusterNetworkPolicy": "networkPolicy",
    "RayClusterMTLS": "tlsOptions.enabled: true",
    "RayClusterHistoryServer": "historyServerOptions",
    "RayCronJob": "kind RayCronJob",
}


def gates_used_by(obj: Mapping[str, Any]) -> set[str]:
    """The feature gates one Kubernetes object needs to be honoured by the operator."""
    if not is_ray_object(obj):
        return set()
    used: set[str] = set()
    if obj.get("kind") == "RayCronJob":
        used.add("RayCronJob")
    job = job_spec(obj)
    if job is not None and job.get("deletionStrategy") is not None:
        used.add("RayJobDeletionPolicy")
    upgrade = dig(obj, "spec", "upgradeStrategy", "type")
    if obj.get("kind") == "RayService" and upgrade == "NewClusterWithIncrementalUpgrade":
        used.add("RayServiceIncrementalUpgrade")
    found = cluster_spec(obj)
    if found is None:
        return used
    _, spec = found
    if dig(spec, "gcsFaultToleranceOptions", "backend") == "rocksdb":
        used.add("GCSFaultToleranceEmbeddedStorage")
    if spec.get("networkPolicy") is not None:
        used.add("RayClusterNetworkPolicy")
    if dig(spec, "tlsOptions", "enabled") is True:
        used.add("RayClusterMTLS")
    if spec.get("historyServerOptions") is not None:
        used.add("RayClusterHistoryServer")
    return used


def required_gates(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """gate -> the objects (``Kind/namespace/name``) that need it."""
    needed: dict[str, list[str]] = {}
    for obj in objects:
        for gate in sorted(gates_used_by(obj)):
            needed.setdefault(gate, []).append(object_ref(obj))
    return needed


def resolve_gates(overrides: Mapping[Any, bool], needed: Mapping[str, list[str]], source: str) -> list[dict[str, Any]]:
    """The full ``featureGates`` list for the chart (Helm replaces lists, so all gates are sent).

    Raises ConfigError when an override switches off a gate that a workload needs.
    """
    problems = [
        f"{source}: platform.operator.featureGates.{gate}: false, but {', '.join(needed[gate])} "
        f"uses {FIELD_GATES.get(gate, gate)}; remove the override or the field"
        for gate, on in overrides.items()
        if not on and gate in needed
    ]
    if problems:
        raise ConfigError(problems)
    return [
        {"name": gate, "enabled": overrides.get(gate, default or gate in needed)}
        for gate, default in FEATURE_GATES.items()
    ]
