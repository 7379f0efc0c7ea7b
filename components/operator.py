"""The KubeRay operator: its namespace and the pinned kuberay-operator Helm chart."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.spec import OperatorSpec

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


def crd_transform() -> pulumi.ResourceTransform:
    """The chart's transform for its CRDs: kept in the cluster when the operator is destroyed or
    replaced, and adopted again on the next ``pulumi up``.

    Deleting a CRD deletes every RayCluster, RayJob and RayService of that kind cluster-wide, so
    ``pulumi destroy`` of the operator must leave them. Upgrades still reach them: Chart v4
    applies CRDs as ordinary resources with server-side apply. A later ``pulumi up`` (or a new
    stack on a cluster that already has KubeRay) finds them existing: the pinned provider
    (pulumi-kubernetes 4.25.0, ``toolchain/kubernetes``) creates with a server-side apply PATCH,
    which upserts, and ``pulumi.com/patchForce`` takes over the fields the earlier stack's field
    manager owned (``await.Creation`` applies without force otherwise). From 4.29 the provider
    creates with a plain POST that fails with "already exists" unless the provider sets
    ``upsertExistingObjects``: moving the pin past 4.28 needs an upserting provider for the CRDs.
    """

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ != CRD_TYPE:
            return None
        props = dict(args.props)
        metadata = props.get("metadata")
        if isinstance(metadata, dict):
            annotations = metadata.get("annotations")
            annotations = dict(annotations) if isinstance(annotations, dict) else {}
            props["metadata"] = {**metadata, "annotations": {**annotations, "pulumi.com/patchForce": "true"}}
        extra = pulumi.ResourceOptions(retain_on_delete=True)
        return pulumi.ResourceTransformResult(props=props, opts=pulumi.ResourceOptions.merge(args.opts, extra))

    return transform


def chart_source_args(spec: OperatorSpec) -> dict[str, Any]:
    """``helm.v4.Chart`` arguments for the chart's source: repository, OCI reference or local archive."""
    source = spec.chart
    if source.archive_path is not None:  # a local archive is one version already; Helm takes no version for it
        return {"chart": str(source.archive_path)}
    if source.oci:
        return {"chart": source.oci, "version": spec.chart_version}
    return {
        "chart": "kuberay-operator",
        "version": spec.chart_version,
        "repository_opts": k8s.helm.v4.RepositoryOptsArgs(repo=source.repository),
    }


@dataclass(frozen=True)
class KubeRayOperatorArgs:
    spec: OperatorSpec
    namespace: dict[str, Any]
    """The operator namespace object (with Pod Security Admission labels)."""
    values: dict[str, Any]
    """Chart values, built by ``components.manifests.operator_values``."""
    namespaces: list[pulumi.Resource] = field(default_factory=list)
    """Namespaces the chart renders into (watched namespaces get a Role and RoleBinding each,
    ``templates/multiple_namespaces_role.yaml``): they must exist first."""


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
                **chart_source_args(args.spec),
                namespace=ns.metadata.name,
                values=args.values,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[ns, *args.namespaces],
                transforms=[crd_transform()],
            ),
        )
        self.namespace = ns.metadata.name
        self.register_outputs({"namespace": self.namespace, "chartVersion": args.spec.chart_version})
