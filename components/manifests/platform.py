"""Everything the platform emits for one stack, derived from the spec in one pure step.

Components only hand these dicts to Pulumi; tests and the offline engine can build them without
Pulumi. Feature gates are derived here, from the workload objects themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.manifests.feature_gates import required_gates, resolve_gates
from components.manifests.namespace import namespace
from components.manifests.operator_values import operator_values
from components.manifests.raycluster import ray_cluster
from components.spec import PlatformSpec


@dataclass(frozen=True)
class PlatformManifests:
    spec: PlatformSpec
    operator_namespace: dict[str, Any]
    operator_values: dict[str, Any]
    workload_namespaces: list[dict[str, Any]]
    ray_clusters: list[dict[str, Any]]
    gates_needed: dict[str, list[str]] = field(default_factory=dict)

    @property
    def workloads(self) -> list[dict[str, Any]]:
        return list(self.ray_clusters)


def build_manifests(spec: PlatformSpec, source: str) -> PlatformManifests:
    """All objects for ``spec``; raises ConfigError (naming ``source``) on contradictions."""
    env, kube = spec.environment, spec.kubernetes_version
    clusters = [ray_cluster(rc, env) for rc in spec.workloads.ray_clusters]
    needed = required_gates(clusters)
    gates = resolve_gates(spec.operator.feature_gates, needed, source)
    workload_namespaces = sorted({rc.namespace for rc in spec.workloads.ray_clusters} - {spec.operator.namespace})
    return PlatformManifests(
        spec=spec,
        # The operator runs with a restricted securityContext (non-root, no privilege escalation,
        # all capabilities dropped, RuntimeDefault seccomp), so its namespace can enforce restricted.
        operator_namespace=namespace(spec.operator.namespace, env, "kuberay-operator", "restricted", kube),
        operator_values=operator_values(spec.operator, gates),
        # Ray images run as a non-root user but KubeRay-injected containers do not all declare a
        # restricted securityContext: enforce baseline, warn and audit restricted.
        workload_namespaces=[namespace(n, env, "ray-workloads", "baseline", kube) for n in workload_namespaces],
        ray_clusters=clusters,
        gates_needed=needed,
    )
