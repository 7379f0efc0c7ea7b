"""Ray workloads (RayClusters, RayJobs, RayCronJobs, RayServices) and the namespaces they live in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class RayWorkloadsArgs:
    namespaces: list[dict[str, Any]]
    workloads: list[dict[str, Any]]
    """Ray objects built by ``components.manifests.workloads``."""


class RayWorkloads(pulumi.ComponentResource):
    def __init__(self, name: str, args: RayWorkloadsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:RayWorkloads", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        namespaces = [
            k8s.core.v1.Namespace(f"{name}-ns-{ns['metadata']['name']}", metadata=ns["metadata"], opts=child)
            for ns in args.namespaces
        ]
        after_namespaces = pulumi.ResourceOptions(parent=self, depends_on=namespaces)
        self.workloads = [
            k8s.apiextensions.CustomResource(
                f"{name}-{obj['kind'].lower()}-{obj['metadata']['namespace']}-{obj['metadata']['name']}",
                api_version=obj["apiVersion"],
                kind=obj["kind"],
                metadata=obj["metadata"],
                spec=obj["spec"],
                opts=after_namespaces,
            )
            for obj in args.workloads
        ]
        self.register_outputs({"workloads": workload_refs(args.workloads)})


def workload_refs(objects: list[dict[str, Any]]) -> list[str]:
    """``Kind namespace/name`` of each Ray object, for exports."""
    return [f"{o['kind']} {o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]
