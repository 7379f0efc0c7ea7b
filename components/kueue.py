"""Kueue: its installation from the chart (KueueInstall) and the stack's queues (KueueQueues).

KueueInstall comes first: its chart carries Kueue's CRDs and its webhooks, which intercept every
RayCluster, RayJob and RayService (and the RayJob submitter's batch Job) with ``failurePolicy:
Fail``, so Ray objects created before the manager is ready would be refused. Everything Ray waits
for it and, on destroy, goes before it (KubeRay's Redis cleanup Jobs pass Kueue's Job webhook too).

KueueQueues creates objects in the order Kueue resolves them: ResourceFlavors,
WorkloadPriorityClasses and MultiKueue worker clusters first, then the MultiKueueConfig naming the
clusters and the AdmissionCheck naming the config, then the ClusterQueues that name the flavors and
the check, then the LocalQueues that name the ClusterQueues (Kueue marks a queue inactive while
what it names is missing). Queued workloads wait for all of them; on destroy they go first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.charts import namespaced_chart
from components.manifests.kueue_install import KueueInstallManifests
from components.objects import KubernetesObject, in_namespace, object_key

KUEUE_QUEUES_TYPE = "kuberay-platform:index:KueueQueues"
STAGES = (
    ("ResourceFlavor", "WorkloadPriorityClass", "MultiKueueCluster"),
    ("MultiKueueConfig",),
    ("AdmissionCheck",),
    ("ClusterQueue",),
    ("LocalQueue",),
)


@dataclass(frozen=True)
class KueueQueuesArgs:
    objects: list[dict[str, Any]]
    after: list[pulumi.Resource] = field(default_factory=list)
    """The namespaces the LocalQueues live in."""


class KueueQueues(pulumi.ComponentResource):
    def __init__(self, name: str, args: KueueQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(KUEUE_QUEUES_TYPE, name, None, opts)
        self.resources: list[pulumi.CustomResource] = []
        self.objects: list[Mapping[str, Any]] = []  # the object of each resource, in the same order
        previous: list[pulumi.Resource] = list(args.after)
        for kinds in STAGES:
            stage = []
            for obj in (o for o in args.objects if o["kind"] in kinds):
                self.objects.append(obj)
                stage.append(
                    KubernetesObject(
                        f"{name}-{obj['kind'].lower()}-{object_key(obj)}",
                        obj,
                        pulumi.ResourceOptions(parent=self, depends_on=previous),
                    )
                )
            self.resources += stage
            previous = [*previous, *stage]
        self.register_outputs({})

    def needed_by(self, namespace: str, workload: str) -> list[pulumi.Resource]:
        """The cluster-scoped queues, flavors and priorities, and the LocalQueues of ``namespace``."""
        return in_namespace(self.resources, self.objects, namespace)


class KueueInstall(pulumi.ComponentResource):
    """Kueue's namespace and its pinned chart. Its CRDs are retained on destroy (``crd_transform``)."""

    def __init__(self, name: str, manifests: KueueInstallManifests, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:KueueInstall", name, None, opts)
        spec = manifests.spec
        ns, self.chart = namespaced_chart(
            name, "kueue", spec.chart, spec.chart_version, manifests.namespace, manifests.values, parent=self
        )
        self.register_outputs({"namespace": ns.metadata.name, "chartVersion": spec.chart_version})
