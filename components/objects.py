"""Kubernetes objects of any kind through the Kubernetes provider."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import pulumi


class KubernetesObject(pulumi.CustomResource):
    """Any Kubernetes object through the Kubernetes provider (type ``kubernetes:<apiVersion>:<kind>``),
    top-level fields included: ``apiextensions.CustomResource`` passes only ``spec``, and a
    WorkloadPriorityClass has ``value`` and ``description`` beside its metadata."""

    def __init__(self, name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        # The provider plugin of the installed SDK, as the SDK's own resources ask for it.
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=metadata.version("pulumi-kubernetes")))
        super().__init__(f"kubernetes:{obj['apiVersion']}:{obj['kind']}", name, dict(obj), opts)
