"""Labels and metadata shared by every object the platform emits."""

from __future__ import annotations

from typing import Any

PART_OF = "kuberay-platform"
ENV_LABEL = "kuberay-platform.io/environment"


def labels(environment: str, component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/component": component,
        ENV_LABEL: environment,
    }


def metadata(name: str, namespace: str | None, environment: str, component: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels(environment, component)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta
