"""The namespaces the platform owns, created before anything that lives in them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

NAMESPACE_DELETE_TIMEOUT = "20m"
"""Deleting a namespace waits for everything in it, Ray objects' finalizers included."""


@dataclass(frozen=True)
class PlatformNamespacesArgs:
    namespaces: list[dict[str, Any]]
    protect: bool
    """Prod: ``pulumi destroy`` (or dropping a namespace's last workload) must not delete the
    user's Secrets, checkpoint PVCs and retained GCS storage with the namespace."""
    legacy_parent: pulumi.Input[str] | None = None
    """URN of the component that created these namespaces before (an alias keeps them)."""
    legacy_prefix: str | None = None


class PlatformNamespaces(pulumi.ComponentResource):
    def __init__(self, name: str, args: PlatformNamespacesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:Namespaces", name, None, opts)
        self.resources: list[k8s.core.v1.Namespace] = []
        for ns in args.namespaces:
            ns_name = ns["metadata"]["name"]
            aliases = (
                [pulumi.Alias(name=f"{args.legacy_prefix}-ns-{ns_name}", parent=args.legacy_parent)]
                if args.legacy_parent is not None
                else []
            )
            self.resources.append(
                k8s.core.v1.Namespace(
                    f"{name}-{ns_name}",
                    metadata=ns["metadata"],
                    opts=pulumi.ResourceOptions(
                        parent=self,
                        protect=args.protect,
                        aliases=aliases,
                        custom_timeouts=pulumi.CustomTimeouts(delete=NAMESPACE_DELETE_TIMEOUT),
                    ),
                )
            )
        self.register_outputs({"namespaces": [ns["metadata"]["name"] for ns in args.namespaces]})
