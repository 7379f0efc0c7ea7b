"""Labels and metadata shared by every object the platform emits."""

from __future__ import annotations

from typing import Any

PART_OF = "kuberay-platform"
ENV_LABEL = "kuberay-platform.io/environment"


def platform_labels(environment: str) -> dict[str, str]:
    """What every object the platform emits carries (cluster-wide Kueue and monitoring objects add
    their own on top)."""
    return {"app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/managed-by": "pulumi", ENV_LABEL: environment}


def labels(environment: str, component: str) -> dict[str, str]:
    return {**platform_labels(environment), "app.kubernetes.io/component": component}


def metadata(name: str, namespace: str | None, environment: str, component: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels(environment, component)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta
