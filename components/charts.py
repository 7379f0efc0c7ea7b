"""Helm charts the platform installs (KubeRay operator, Kueue, kube-prometheus-stack): where each
comes from, and what happens to its CRDs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.spec.chart import ChartSource

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


def crd_transform() -> pulumi.ResourceTransform:
    """A chart's transform for its CRDs (KubeRay's, Kueue's): kept in the cluster when the chart is
    destroyed or replaced, and adopted again on the next ``pulumi up``.

    Deleting a CRD deletes every object of that kind cluster-wide (every RayCluster, RayJob and
    RayService; every ClusterQueue and Workload), so ``pulumi destroy`` must leave them. Upgrades
    still reach them: Chart v4 applies CRDs as ordinary resources with server-side apply. A later
    ``pulumi up`` (or a new stack on a cluster that already has KubeRay) finds them existing: the
    pinned provider (pulumi-kubernetes 4.25.0, ``toolchain/kubernetes``) creates with a server-side
    apply PATCH, which upserts, and ``pulumi.com/patchForce`` takes over the fields the earlier
    stack's field manager owned (``await.Creation`` applies without force otherwise). From 4.29 the
    provider creates with a plain POST that fails with "already exists" unless the provider sets
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


def chart_source_args(source: ChartSource, chart: str, version: str) -> dict[str, Any]:
    """``helm.v4.Chart`` arguments for a chart's source: repository, OCI reference or local archive."""
    if source.archive_path is not None:  # a local archive is one version already; Helm takes no version for it
        return {"chart": str(source.archive_path)}
    if source.oci:
        return {"chart": source.oci, "version": version}
    return {
        "chart": chart,
        "version": version,
        "repository_opts": k8s.helm.v4.RepositoryOptsArgs(repo=source.repository),
    }


def namespaced_chart(
    name: str,
    release: str,
    source: ChartSource,
    version: str,
    namespace: dict[str, Any],
    values: dict[str, Any],
    parent: pulumi.Resource,
    after: list[pulumi.Resource] | None = None,
    inside: Callable[[k8s.core.v1.Namespace], list[pulumi.Resource]] | None = None,
) -> tuple[k8s.core.v1.Namespace, k8s.helm.v4.Chart]:
    """A chart's namespace (``<name>-namespace``, from the namespace object) and the chart released
    into it (``<name>-chart``), after the namespace, ``after`` and what ``inside`` creates in the
    namespace for the chart (e.g. a Secret its pods read), its CRDs kept on destroy."""
    ns = k8s.core.v1.Namespace(
        f"{name}-namespace", metadata=namespace["metadata"], opts=pulumi.ResourceOptions(parent=parent)
    )
    after = [*(after or []), *(inside(ns) if inside is not None else [])]
    chart = k8s.helm.v4.Chart(
        f"{name}-chart",
        k8s.helm.v4.ChartArgs(
            name=release, **chart_source_args(source, release, version), namespace=ns.metadata.name, values=values
        ),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[ns, *after], transforms=[crd_transform()]),
    )
    return ns, chart
