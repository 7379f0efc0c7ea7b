"""Kueue objects (``kueue.x-k8s.io/v1beta2``): ResourceFlavors from the pools, ClusterQueues,
LocalQueues and WorkloadPriorityClasses (pure).

A ClusterQueue gets one resource group covering every resource its quotas name: Kueue lets a
resource appear in only one group, and a pod set takes all of a group's resources from one flavor,
so every flavor lists every covered resource (0 where the pool has none). Flavors keep the order of
the stack's quotas, the order Kueue tries them in.
"""

from __future__ import annotations

from typing import Any

from components.manifests.cluster import Pools, pod_tolerations, pool_selector
from components.spec.kueue import RESOURCE_NAMES, ClusterQueueSpec, KueueSpec

API_VERSION = "kueue.x-k8s.io/v1beta2"
RESOURCE_ORDER = list(RESOURCE_NAMES.values())


def _labels(environment: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/part-of": "kuberay-platform",
        "app.kubernetes.io/managed-by": "pulumi",
        "kuberay-platform.io/environment": environment,
    }


def resource_flavor(name: str, pools: Pools, environment: str) -> dict[str, Any]:
    pool = pools[name]
    spec: dict[str, Any] = {}
    if selector := pool_selector(pool):
        spec["nodeLabels"] = selector
    if pool.tolerations:
        # Added to admitted pods; they carry them already (the same pool spec).
        spec["tolerations"] = pod_tolerations(pool.tolerations)
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": {"name": name, "labels": _labels(environment)},
        "spec": spec,
    }


def cluster_queue(cq: ClusterQueueSpec, environment: str) -> dict[str, Any]:
    covered = sorted({name for quota in cq.quotas.values() for name in quota.resources()}, key=RESOURCE_ORDER.index)
    flavors = []
    for pool, quota in cq.quotas.items():
        given = quota.resources()
        resources = []
        for name in covered:
            entry: dict[str, Any] = {"name": name, "nominalQuota": given[name].nominal if name in given else "0"}
            if name in given and given[name].borrowing_limit is not None:
                entry["borrowingLimit"] = given[name].borrowing_limit
            if name in given and given[name].lending_limit is not None:
                entry["lendingLimit"] = given[name].lending_limit
            resources.append(entry)
        flavors.append({"name": pool, "resources": resources})
    spec: dict[str, Any] = {
        "queueingStrategy": cq.queueing_strategy,
        "namespaceSelector": (
            {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": cq.namespaces}]}
            if cq.namespaces is not None
            else {}
        ),
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
        "preemption": {
            "reclaimWithinCohort": cq.preemption.reclaim_within_cohort,
            "withinClusterQueue": cq.preemption.within_cluster_queue,
            "borrowWithinCohort": {"policy": cq.preemption.borrow_within_cohort},
        },
    }
    if cq.cohort:
        spec["cohortName"] = cq.cohort
    if cq.fair_sharing_weight is not None:
        spec["fairSharing"] = {"weight": cq.fair_sharing_weight}
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": {"name": cq.name, "labels": _labels(environment)},
        "spec": spec,
    }


def kueue_objects(kueue: KueueSpec, pools: Pools, environment: str) -> list[dict[str, Any]]:
    """In creation order: flavors and priority classes, then ClusterQueues, then LocalQueues."""
    flavor_names = list(dict.fromkeys(pool for cq in kueue.cluster_queues for pool in cq.quotas if pool in pools))
    objects = [resource_flavor(name, pools, environment) for name in flavor_names]
    objects += [
        {
            "apiVersion": API_VERSION,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": pc.name, "labels": _labels(environment)},
            "value": pc.value,
            "description": pc.description,
        }
        for pc in kueue.priority_classes
    ]
    objects += [cluster_queue(cq, environment) for cq in kueue.cluster_queues]
    objects += [
        {
            "apiVersion": API_VERSION,
            "kind": "LocalQueue",
            "metadata": {"name": lq.name, "namespace": lq.namespace, "labels": _labels(environment)},
            "spec": {"clusterQueue": lq.cluster_queue},
        }
        for lq in kueue.local_queues
    ]
    return objects
