"""Ray workloads (RayClusters, RayJobs, RayCronJobs, RayServices) and the namespaces they live in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.manifests.gateway import gateway_name
from components.manifests.lifecycle import lifecycle
from components.objects import Namespaced, ObjectGroup

RAY_WORKLOADS_TYPE = "kuberay-platform:index:RayWorkloads"


@dataclass(frozen=True)
class RayWorkloadsArgs:
    workloads: list[dict[str, Any]]
    """Ray objects built by ``components.manifests.workloads`` (lifecycle annotations included)."""
    gateways: list[dict[str, Any]] = field(default_factory=list)
    """Internal Gateways of incrementally upgraded RayServices: each exists before its RayService,
    or KubeRay would create (and expose) its own."""
    after: list[pulumi.Resource] = field(default_factory=list)
    """What every Ray object waits for (and outlives on destroy): the operator, whose chart
    installs the CRDs and whose controllers remove the objects' finalizers, and the namespaces."""
    namespaced: list[Namespaced] = field(default_factory=list)
    """What a Ray object waits for only in its own namespace: NetworkPolicies, a team's quota, token
    Secrets, claims, a team's operator. Depending on the whole component would tie every object to
    each of its children: dependencies growing with the square of the fleet, in the program and in
    the state."""


def _options(obj: dict[str, Any], parent: pulumi.Resource, after: list[pulumi.Resource]) -> pulumi.ResourceOptions:
    """Replacement, ignored fields and timeouts from ``components.manifests.lifecycle``."""
    plan = lifecycle(obj)
    minutes = f"{plan.timeout_minutes}m" if plan.timeout_minutes else None
    return pulumi.ResourceOptions(
        parent=parent,
        depends_on=after,
        replace_on_changes=plan.replace_on_changes,
        delete_before_replace=plan.delete_before_replace,
        ignore_changes=plan.ignore_changes,
        custom_timeouts=pulumi.CustomTimeouts(create=minutes, update=minutes) if minutes else None,
    )


class RayWorkloads(pulumi.ComponentResource):
    """The Ray objects, each after ``args.after``: deleting them while the operator still runs
    lets it remove their finalizers (RayJob, RayService), so a namespace never hangs in Terminating."""

    def __init__(self, name: str, args: RayWorkloadsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(RAY_WORKLOADS_TYPE, name, None, opts)
        gateways: dict[tuple[str, str], pulumi.Resource] = {}

        def after_in(namespace: str, workload: str) -> list[pulumi.Resource]:
            return [*args.after, *(r for group in args.namespaced for r in group.needed_by(namespace, workload))]

        for gw in args.gateways:
            key = (gw["metadata"]["namespace"], gw["metadata"]["name"])
            gateways[key] = k8s.apiextensions.CustomResource(
                f"{name}-gateway-{key[0]}-{key[1]}",
                api_version=gw["apiVersion"],
                kind=gw["kind"],
                metadata=gw["metadata"],
                spec=gw["spec"],
                opts=pulumi.ResourceOptions(parent=self, depends_on=after_in(key[0], "")),
            )
        self.workloads = []
        for obj in args.workloads:
            meta = obj["metadata"]
            own_gateway = gateways.get((meta["namespace"], gateway_name(meta["name"])))
            after = after_in(meta["namespace"], meta["name"])
            after = [*after, own_gateway] if obj["kind"] == "RayService" and own_gateway else after
            self.workloads.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-{obj['kind'].lower()}-{meta['namespace']}-{meta['name']}",
                    api_version=obj["apiVersion"],
                    kind=obj["kind"],
                    metadata=meta,
                    spec=obj["spec"],
                    opts=_options(obj, self, after),
                )
            )
        self.register_outputs({"workloads": workload_refs(args.workloads)})


def workload_refs(objects: list[dict[str, Any]]) -> list[str]:
    """``Kind namespace/name`` of each Ray object, for exports."""
    return [f"{o['kind']} {o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]


class SharedVolumes(ObjectGroup):
    """The PersistentVolumes and PVCs the workloads' NFS exports are mounted through
    (``components.manifests.volumes``), created before the workloads."""

    TYPE = "kuberay-platform:index:SharedVolumes"
