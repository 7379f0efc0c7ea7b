"""Kueue admission rules for Ray workloads (Kueue v0.19.2).

- ``kueue-rayjob``: a RayJob (or a RayCronJob's job template) queued through ``kueue.x-k8s.io/queue-name`` needs
  ``shutdownAfterJobFinishes: true`` (Kueue releases quota only when the cluster goes) and cannot use
  ``clusterSelector`` (Kueue must own the cluster it admits). Kueue's webhook rejects both.
- ``kueue-elastic-job``: Kueue refuses in-tree autoscaling on a queued workload unless it is elastic
  (annotation ``kueue.x-k8s.io/elastic-job: "true"``, gate ElasticJobsViaWorkloadSlices): it admits
  a fixed size, and only workload slices follow the autoscaler (seeds ch. 8.3). A MultiKueue-managed
  elastic RayCluster cannot autoscale in-tree.
- ``kueue-batch-scheduler``: a Kueue-queued workload carries no labels of KubeRay's batch schedulers
  (Volcano, YuniKorn, scheduler-plugins, KAI): both would gate the same pods, each waiting for the
  other.
- ``kueue-worker-group-limit``: a Kueue-managed Ray workload has at most 17 worker groups (Kueue's
  pod-set limit, with head and submitter pod sets).

Severity: mandatory everywhere (Kueue would reject or never admit the workload).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import (
    ELASTIC_JOB_ANNOTATION,
    MULTIKUEUE_MANAGER,
    as_list,
    as_map,
    cluster_spec,
    dig,
    is_elastic,
    job_spec,
    job_spec_path,
    queue_name,
    queued_metadata,
)
from components.upstream import KUEUE_MAX_WORKER_GROUPS
from policies.rules.base import MANDATORY, ResourceRule, RuleContext


def _queued(props: Mapping[str, Any]) -> bool:
    return queue_name(props) is not None


def check_rayjob(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    job = job_spec(props)
    if job is None or not _queued(props):
        return
    base = job_spec_path(props)
    if job.get("shutdownAfterJobFinishes") is not True:
        yield (
            f"{base}.shutdownAfterJobFinishes: must be true for a Kueue-queued RayJob (quota is freed with the cluster)"
        )
    if job.get("clusterSelector"):
        yield f"{base}.clusterSelector: a Kueue-queued RayJob must create its own cluster; remove clusterSelector"


def check_elastic(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None or not _queued(props) or found[1].get("enableInTreeAutoscaling") is not True:
        return
    base = found[0]
    if not is_elastic(props):
        yield (
            f"{base}.enableInTreeAutoscaling: Kueue refuses in-tree autoscaling on a queued workload unless it is "
            f'elastic; annotate it {ELASTIC_JOB_ANNOTATION}: "true", or turn autoscaling off'
        )
    elif props.get("kind") == "RayCluster" and dig(props, "spec", "managedBy") == MULTIKUEUE_MANAGER:
        yield (
            f"{base}.enableInTreeAutoscaling: Kueue refuses in-tree autoscaling on a MultiKueue-managed elastic "
            "RayCluster; turn autoscaling off"
        )


def check_worker_groups(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None or not _queued(props):
        return
    base, spec = found
    count = len(as_list(spec.get("workerGroupSpecs")))
    if count > KUEUE_MAX_WORKER_GROUPS:
        yield f"{base}.workerGroupSpecs has {count} groups; Kueue admits at most {KUEUE_MAX_WORKER_GROUPS}"


BATCH_SCHEDULER_LABELS = (
    "volcano.sh/queue-name",
    "ray.io/priority-class-name",
    "yunikorn.apache.org/app-id",
    "yunikorn.apache.org/queue",
    "ray.io/gang-scheduling-enabled",
    "kai.scheduler/queue",
)
"""Labels KubeRay 1.7.0's batch-scheduler integrations read (``controllers/ray/batchscheduler``)."""


def check_batch_scheduler(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if not _queued(props):
        return
    labels = as_map(queued_metadata(props).get("labels"))
    for label in BATCH_SCHEDULER_LABELS:
        if label in labels:
            yield (
                f"metadata.labels.{label}: a Kueue-queued workload cannot also go through a batch scheduler; "
                "queue it through one of them"
            )


RAYJOB = ResourceRule(
    name="kueue-rayjob",
    description="Kueue-queued RayJobs set shutdownAfterJobFinishes: true and no clusterSelector.",
    levels=MANDATORY,
    check=check_rayjob,
)
ELASTIC = ResourceRule(
    name="kueue-elastic-job",
    description="Queued Ray workloads autoscale in-tree only as elastic jobs.",
    levels=MANDATORY,
    check=check_elastic,
)
BATCH_SCHEDULER = ResourceRule(
    name="kueue-batch-scheduler",
    description="Kueue-queued Ray workloads carry no batch-scheduler labels (Volcano, YuniKorn, KAI).",
    levels=MANDATORY,
    check=check_batch_scheduler,
)
WORKER_GROUPS = ResourceRule(
    name="kueue-worker-group-limit",
    description="Kueue-managed Ray workloads have at most 17 worker groups.",
    levels=MANDATORY,
    check=check_worker_groups,
)
