"""Upstream facts the spec, the manifest builders and the policy rules share, as plain constants.

No pydantic here: ``make lint`` and the policy pack judge manifests without building the spec's
models (a second of every lint's start-up). ``components.spec`` re-exports what its users expect
there.
"""

from __future__ import annotations

DEFAULT_KUBERNETES_VERSION = "1.33"
"""The oldest minor version KubeRay 1.7.0 and Kueue v0.19.2 support well; ``make lint`` uses it too."""

FEATURE_GATES: dict[str, bool] = {
    # Beta in KubeRay 1.7.0: on unless overridden.
    "RayClusterStatusConditions": True,
    "RayJobDeletionPolicy": True,
    "RayMultiHostIndexing": True,
    "RayServiceIncrementalUpgrade": True,
    # Alpha in KubeRay 1.7.0: off unless a workload uses the field that needs it, or overridden.
    "RayCronJob": False,
    "SidecarSubmitterRestart": False,
    "RayClusterNetworkPolicy": False,
    "GCSFaultToleranceEmbeddedStorage": False,
    "RayClusterMTLS": False,
    "RayClusterHistoryServer": False,
    "KubernetesWAS": False,
}
"""Every operator feature gate of KubeRay 1.7.0 with its upstream default. Helm replaces lists,
so the chart always receives all of them."""

KUEUE_MAX_WORKER_GROUPS = 17
"""Kueue's limit of 18 pod sets per workload, one of them the head."""

LLM_IMPORT_PATH = "ray.serve.llm:build_openai_app"
"""Ray Serve LLM's application builder: a serve app with this import path is an LLM deployment."""
