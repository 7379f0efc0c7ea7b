"""Kueue admission rules for Ray workloads (Kueue v0.19.2).

- ``kueue-rayjob``: a RayJob (or a RayCronJob's job template) queued through ``kueue.x-k8s.io/queue-name`` needs
  ``shutdownAfterJobFinishes: true`` (Kueue releases quota only when the cluster goes) and cannot use
  ``clusterSelector`` (Kueue must own the cluster it admits). Kueue's webhook rejects both.
- ``kueue-elastic-job``: ``kueue.x-k8s.io/elastic-job: "true"`` makes the workload elastic through
  workload slices, which only the in-tree autoscaler drives: ``enableInTreeAutoscaling: true``
  (seeds ch. 8.3; Kueue ElasticJobsViaWorkloadSlices).
- ``kueue-worker-group-limit``: a Kueue-managed Ray workload has at most 17 worker groups (Kueue's
  pod-set limit, with head and submitter pod sets).

Severity: mandatory everywhere (Kueue would reject or never admit the workload).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import (
    annotations_of,
    as_list,
    cluster_spec,
    job_spec,
    job_spec_path,
    queue_name,
)
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

ELASTIC_ANNOTATION = "kueue.x-k8s.io/elastic-job"
MAX_WORKER_GROUPS = 17


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
    if str(annotations_of(props).get(ELASTIC_ANNOTATION, "")).lower() != "true":
        return
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    if spec.get("enableInTreeAutoscaling") is not True:
        yield (
            f'{base}.enableInTreeAutoscaling: must be true for {ELASTIC_ANNOTATION}: "true" '
            "(workload slices grow through the Ray autoscaler)"
        )


def check_worker_groups(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None or not _queued(props):
        return
    base, spec = found
    count = len(as_list(spec.get("workerGroupSpecs")))
    if count > MAX_WORKER_GROUPS:
        yield f"{base}.workerGroupSpecs has {count} groups; Kueue admits at most {MAX_WORKER_GROUPS}"


RAYJOB = ResourceRule(
    name="kueue-rayjob",
    description="Kueue-queued RayJobs set shutdownAfterJobFinishes: true and no clusterSelector.",
    levels=MANDATORY,
    check=check_rayjob,
)
ELASTIC = ResourceRule(
    name="kueue-elastic-job",
    description="Elastic Kueue Ray workloads enable in-tree autoscaling.",
    levels=MANDATORY,
    check=check_elastic,
)
WORKER_GROUPS = ResourceRule(
    name="kueue-worker-group-limit",
    description="Kueue-managed Ray workloads have at most 17 worker groups.",
    levels=MANDATORY,
    check=check_worker_groups,
)
