"""Kueue objects (``kueue.x-k8s.io/v1beta2``): ResourceFlavors from the pools, ClusterQueues,
LocalQueues and WorkloadPriorityClasses (pure).

A ClusterQueue gets one resource group covering every resource its quotas name: Kueue lets a
resource appear in only one group, and a pod set takes all of a group's resources from one flavor,
so every flavor lists every covered resource (0 where the pool has none). Flavors are listed in the
order Kueue tries them (``flavor_order``).
"""

from __future__ import annotations

from typing import Any

from components.manifests.cluster import Pools, pod_tolerations, pool_selector
from components.manifests.common import platform_labels
from components.manifests.ray_objects import MULTIKUEUE_MANAGER
from components.spec.kueue import RESOURCE_NAMES, ClusterQueueSpec, KueueSpec

API_VERSION = "kueue.x-k8s.io/v1beta2"
RESOURCE_ORDER = list(RESOURCE_NAMES.values())


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
        "metadata": {"name": name, "labels": platform_labels(environment)},
        "spec": spec,
    }


MULTIKUEUE = "multikueue"
"""The name of the MultiKueueConfig and of the AdmissionCheck that uses it."""


def multikueue_objects(kueue: KueueSpec, environment: str) -> list[dict[str, Any]]:
    """Worker clusters, their config and the admission check dispatched ClusterQueues carry."""
    mk = kueue.multi_kueue
    if mk is None:
        return []
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": API_VERSION,
            "kind": "MultiKueueCluster",
            "metadata": {"name": c.name, "labels": platform_labels(environment)},
            "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": c.kubeconfig_secret}}},
        }
        for c in mk.clusters
    ]
    objects.append(
        {
            "apiVersion": API_VERSION,
            "kind": "MultiKueueConfig",
            "metadata": {"name": MULTIKUEUE, "labels": platform_labels(environment)},
            "spec": {"clusters": [c.name for c in mk.clusters]},
        }
    )
    objects.append(
        {
            "apiVersion": API_VERSION,
            "kind": "AdmissionCheck",
            "metadata": {"name": MULTIKUEUE, "labels": platform_labels(environment)},
            "spec": {
                "controllerName": MULTIKUEUE_MANAGER,
                "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": MULTIKUEUE},
            },
        }
    )
    return objects


POOL_KIND_ORDER = {"CpuPool": 0, "GpuPool": 1, "TpuPool": 2}


def flavor_order(cq: ClusterQueueSpec, pools: Pools) -> list[str]:
    """``flavorOrder``, else CPU pools, then GPU, then TPU, each by name."""
    if cq.flavor_order is not None:
        return list(cq.flavor_order)
    return sorted(cq.quotas, key=lambda p: (POOL_KIND_ORDER.get(type(pools.get(p)).__name__, 3), p))


def cluster_queue(cq: ClusterQueueSpec, pools: Pools, environment: str, dispatched: bool = False) -> dict[str, Any]:
    covered = sorted({name for quota in cq.quotas.values() for name in quota.resources()}, key=RESOURCE_ORDER.index)
    flavors = []
    for pool in flavor_order(cq, pools):
        given = cq.quotas[pool].resources()
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
        # A Quantity: Kueue's webhook re-encodes the ClusterQueue, so the API server keeps "2" for a 2
        # sent as a number, a perpetual diff (found on the local control plane). Send the text.
        spec["fairSharing"] = {"weight": str(cq.fair_sharing_weight)}
    if dispatched:  # one MultiKueue check for the whole queue (Kueue deactivates a per-flavor one)
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": MULTIKUEUE}]}
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": {"name": cq.name, "labels": platform_labels(environment)},
        "spec": spec,
    }


def kueue_objects(kueue: KueueSpec, pools: Pools, environment: str) -> list[dict[str, Any]]:
    """In creation order: flavors, priority classes and worker clusters, the MultiKueue config and its
    admission check, then ClusterQueues, then LocalQueues."""
    flavor_names = sorted({pool for cq in kueue.cluster_queues for pool in cq.quotas if pool in pools})
    objects = [resource_flavor(name, pools, environment) for name in flavor_names]
    objects += [
        {
            "apiVersion": API_VERSION,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": pc.name, "labels": platform_labels(environment)},
            "value": pc.value,
            "description": pc.description,
        }
        for pc in kueue.priority_classes
    ]
    objects += multikueue_objects(kueue, environment)
    dispatched = set(kueue.multi_kueue.cluster_queues) if kueue.multi_kueue else set()
    objects += [cluster_queue(cq, pools, environment, cq.name in dispatched) for cq in kueue.cluster_queues]
    objects += [
        {
            "apiVersion": API_VERSION,
            "kind": "LocalQueue",
            "metadata": {"name": lq.name, "namespace": lq.namespace, "labels": platform_labels(environment)},
            "spec": {"clusterQueue": lq.cluster_queue},
        }
        for lq in kueue.local_queues
    ]
    return objects
