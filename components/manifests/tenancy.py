"""Team namespaces' objects (pure): ResourceQuota, LimitRange, Role and RoleBinding, and whether a
team's workloads fit its quota at their largest."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from components.manifests.capacity import Amounts, capacity
from components.manifests.common import platform_labels
from components.manifests.quantity import format_bytes, parse_quantity
from components.manifests.ray_objects import as_map, job_spec, number, pod_groups
from components.spec.tenancy import TeamSpec

RAY_RESOURCES = ["rayclusters", "rayjobs", "raycronjobs", "rayservices"]
SUBMITTER_LIMITS = Amounts(cpu=1.0, memory=2.0**30)
"""KubeRay 1.7.0's default submitter container in K8sJobMode (``common/job.go``): limits 1 CPU / 1Gi,
which a quota on limits counts."""
ROLE_NAME = "ray-team"


def _labels(team: str, environment: str) -> dict[str, str]:
    return {**platform_labels(environment), "kuberay-platform.io/team": team}


def quota_hard(team: TeamSpec) -> dict[str, str]:
    q = team.quota
    hard: dict[str, str] = {}
    for key, value in (
        ("requests.cpu", q.cpu),
        ("limits.cpu", q.cpu),
        ("requests.memory", q.memory),
        ("limits.memory", q.memory),
        ("requests.nvidia.com/gpu", q.gpu),
        ("requests.google.com/tpu", q.tpu),
        ("pods", q.pods),
        ("count/rayclusters.ray.io", q.ray_clusters),
        ("count/rayjobs.ray.io", q.ray_jobs),
        ("count/rayservices.ray.io", q.ray_services),
        ("persistentvolumeclaims", q.persistent_volume_claims),
        ("requests.storage", q.storage),
    ):
        if value is not None:
            hard[key] = str(value)
    return hard


WAIT_FOR = "pulumi.com/waitFor"


def quota_wait(hard: dict[str, str]) -> str:
    """Pulumi waits until the quota controller reports usage of every resource the quota limits.
    Until then the API server refuses every object the quota counts ("status unknown for quota"),
    and for a CRD's ``count/...`` that lasts until the controller's next discovery (up to 30 s):
    dev's team RayClusters, created right after their quotas, failed so on the local control plane."""
    # RFC 9535 bracket notation (the provider's JSONPath): resource names hold dots and slashes.
    paths = [f"jsonpath={{.status.used['{key}']}}" for key in sorted(hard)]
    return json.dumps(paths)


def team_objects(name: str, team: TeamSpec, environment: str) -> list[dict[str, Any]]:
    namespace = team.namespace or name
    labels = _labels(name, environment)
    default = {"cpu": team.default_container_resources.cpu, "memory": team.default_container_resources.memory}
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "team-defaults", "namespace": namespace, "labels": labels},
            "spec": {"limits": [{"type": "Container", "default": default, "defaultRequest": default}]},
        }
    ]
    hard = quota_hard(team)
    if hard:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {
                    "name": "team-quota",
                    "namespace": namespace,
                    "labels": labels,
                    "annotations": {WAIT_FOR: quota_wait(hard)},
                },
                "spec": {"hard": hard},
            }
        )
    objects.append(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": ROLE_NAME, "namespace": namespace, "labels": labels},
            "rules": [
                {"apiGroups": ["ray.io"], "resources": RAY_RESOURCES, "verbs": ["*"]},
                {"apiGroups": ["ray.io"], "resources": [f"{r}/status" for r in RAY_RESOURCES], "verbs": ["get"]},
                {
                    "apiGroups": [""],
                    "resources": ["pods", "pods/log", "services", "events", "configmaps"],
                    "verbs": ["get", "list", "watch"],
                },
                {"apiGroups": [""], "resources": ["pods/portforward"], "verbs": ["create"]},
                {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch"]},
            ],
        }
    )
    members = team.members
    if not members.empty:
        subjects = [{"kind": "Group", "name": g, "apiGroup": "rbac.authorization.k8s.io"} for g in members.groups]
        subjects += [{"kind": "User", "name": u, "apiGroup": "rbac.authorization.k8s.io"} for u in members.users]
        subjects += [
            {"kind": "ServiceAccount", "namespace": sa.split(":")[0], "name": sa.split(":")[1]}
            for sa in members.service_accounts
        ]
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": ROLE_NAME, "namespace": namespace, "labels": labels},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROLE_NAME},
                "subjects": subjects,
            }
        )
    return objects


def _pods_at_most(obj: Mapping[str, Any]) -> int:
    """Pods of a Ray object at its largest: head, every group at maxReplicas times hosts, and a
    RayJob's submitter in K8sJobMode."""
    pods = 0
    for group in pod_groups(obj):
        if group.role == "head":
            pods += 1
            continue
        hosts = int(number(group.group.get("numOfHosts")) or 1)
        pods += int(number(group.group.get("maxReplicas")) or number(group.group.get("replicas")) or 0) * hosts
    job = job_spec(obj)
    if job is not None and str(job.get("submissionMode") or "K8sJobMode") == "K8sJobMode":
        pods += 1
    if obj.get("kind") == "RayService":  # an upgrade runs a second cluster beside the first
        pods *= 2
    return pods


def quota_shortfalls(
    team: TeamSpec, workloads: Sequence[Mapping[str, Any]], other_pods: Sequence[Amounts] = ()
) -> list[tuple[str, str]]:
    """(quota key, message) for each quota the team's workloads exceed at their largest: every group at
    maxReplicas, a RayService through its upgrade peak, a RayJob's submitter; plus ``other_pods`` the
    platform runs there (the team's own operator). Other pods of the namespace (a GCS Redis, your
    own) are not counted: leave room for them."""
    largest = Amounts()
    for pod in other_pods:
        largest.add(pod)
    for obj in workloads:
        plan = capacity(obj)
        peak = plan.upgrade_peak or plan.scaled_out
        for res in ("cpu", "memory", "gpu", "tpu"):
            setattr(largest, res, getattr(largest, res) + max(getattr(plan.scaled_out, res), getattr(peak, res)))
        job = job_spec(obj)
        if job is not None and str(job.get("submissionMode") or "K8sJobMode") == "K8sJobMode":
            largest.add(SUBMITTER_LIMITS)
    pods = sum(_pods_at_most(o) for o in workloads) + len(other_pods)
    q = team.quota
    out: list[tuple[str, str]] = []
    for key, limit, asked, show in (
        ("cpu", q.cpu, largest.cpu, lambda v: f"{v:g}"),
        ("memory", q.memory, largest.memory, format_bytes),
        ("gpu", q.gpu, largest.gpu, lambda v: f"{v:g}"),
        ("tpu", q.tpu, largest.tpu, lambda v: f"{v:g}"),
        ("pods", q.pods, float(pods), lambda v: f"{v:g}"),
    ):
        if limit is None:
            continue
        allowed = parse_quantity(limit) if isinstance(limit, str) else float(limit)
        if allowed is not None and asked > allowed:
            out.append(
                (
                    key,
                    f"the team's workloads need {show(asked)} at their largest (every group at maxReplicas, services "
                    f"through an upgrade) but the quota allows {show(allowed)}; raise it or lower maxReplicas",
                )
            )
    clusters = sum(2 if as_map(o).get("kind") == "RayService" else 1 for o in workloads)
    if q.ray_clusters is not None and clusters > q.ray_clusters:
        out.append(
            (
                "rayClusters",
                f"the team's workloads run {clusters} RayClusters at once (a RayService two while it upgrades) but "
                f"the quota allows {q.ray_clusters}",
            )
        )
    return out
