"""The KubeRay operator: its namespace and the pinned kuberay-operator Helm chart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.spec import OperatorSpec

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


def retain_crds_on_delete(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
    """Keep the chart's CRDs in the cluster when the operator is destroyed or replaced.

    Deleting a CRD deletes every RayCluster, RayJob and RayService of that kind cluster-wide, so
    ``pulumi destroy`` of the operator must leave them. Upgrades still reach them: Chart v4
    applies CRDs as ordinary resources with server-side apply.
    """
    if args.type_ != CRD_TYPE:
        return None
    opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(retain_on_delete=True))
    return pulumi.ResourceTransformResult(props=args.props, opts=opts)


@dataclass(frozen=True)
class KubeRayOperatorArgs:
    spec: OperatorSpec
    namespace: dict[str, Any]
    """The operator namespace object (with Pod Security Admission labels)."""
    values: dict[str, Any]
    """Chart values, built by ``components.manifests.operator_values``."""


class KubeRayOperator(pulumi.ComponentResource):
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: KubeRayOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:KubeRayOperator", name, None, opts)
        ns = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=args.namespace["metadata"],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.chart = k8s.helm.v4.Chart(
            f"{name}-chart",
            k8s.helm.v4.ChartArgs(
                name="kuberay-operator",
                chart="kuberay-operator",
                version=args.spec.chart_version,
                repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo=args.spec.chart_repository),
                namespace=ns.metadata.name,
                values=args.values,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[ns], transforms=[retain_crds_on_delete]),
        )
        self.namespace = ns.metadata.name
        self.register_outputs({"namespace": self.namespace, "chartVersion": args.spec.chart_version})
