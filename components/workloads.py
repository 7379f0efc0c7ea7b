"""Ray workloads (RayCluster for now) and the namespaces they live in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class RayWorkloadsArgs:
    namespaces: list[dict[str, Any]]
    ray_clusters: list[dict[str, Any]]


class RayWorkloads(pulumi.ComponentResource):
    def __init__(self, name: str, args: RayWorkloadsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:RayWorkloads", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        namespaces = [
            k8s.core.v1.Namespace(f"{name}-ns-{ns['metadata']['name']}", metadata=ns["metadata"], opts=child)
            for ns in args.namespaces
        ]
        after_namespaces = pulumi.ResourceOptions(parent=self, depends_on=namespaces)
        self.ray_clusters = [
            k8s.apiextensions.CustomResource(
                f"{name}-{obj['metadata']['namespace']}-{obj['metadata']['name']}",
                api_version=obj["apiVersion"],
                kind=obj["kind"],
                metadata=obj["metadata"],
                spec=obj["spec"],
                opts=after_namespaces,
            )
            for obj in args.ray_clusters
        ]
        self.register_outputs(
            {"rayClusters": [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in args.ray_clusters]}
        )
