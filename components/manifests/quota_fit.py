"""Will Kueue ever admit a queued workload? Its pod sets against its ClusterQueue's quota (pure).

Kueue v0.19.2 turns a Ray object into pod sets (``pkg/controller/jobs/raycluster/common.go``,
``rayjob_controller.go``): the head (count 1; the autoscaler sidecar added when in-tree autoscaling
is on, ``autoscalerOptions.resources`` or 500m/512Mi), one per worker group (``replicas`` times
``numOfHosts``; min/maxReplicas are ignored) and, for a RayJob in K8sJobMode, the submitter (its
``submitterPodTemplate`` or 500m CPU / 200Mi; in SidecarMode the same container joins the head).
An elastic workload (``kueue.x-k8s.io/elastic-job``) grows by workload slices up to its groups'
``maxReplicas``, so its largest size is what must fit.

Each pod set takes all its resources from one flavor of the ClusterQueue's resource group, the
first (in order) whose node labels agree with the pod's node selector and that still has room.
Room is the nominal quota plus what the queue may borrow: its ``borrowingLimit``, or without one
what the rest of its cohort lends (their nominal, or ``lendingLimit``). A workload larger than that
is never admitted: it waits, suspended, forever.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.manifests.quantity import format_bytes, parse_quantity
from components.manifests.ray_objects import (
    as_list,
    as_map,
    cluster_spec,
    dig,
    is_elastic,
    job_spec,
    number,
    pod_groups,
    queue_name,
    queued_metadata,
)

AUTOSCALER_DEFAULT = {"cpu": 0.5, "memory": 512 * 2**20}
"""Kueue's accounting of the autoscaler sidecar without ``autoscalerOptions.resources``."""
SUBMITTER_DEFAULT = {"cpu": 0.5, "memory": 200 * 2**20}
"""Kueue's accounting of the default submitter container (requests 500m / 200Mi)."""
UNLIMITED = math.inf


@dataclass(frozen=True)
class PodSet:
    name: str
    """``head``, a worker group's name, or ``submitter``."""
    count: int
    requests: dict[str, float]
    """Per pod: resource name -> amount (CPU in cores, memory in bytes)."""
    node_selector: dict[str, str] = field(default_factory=dict)

    def total(self, resource: str) -> float:
        return self.requests.get(resource, 0.0) * self.count

    def describe(self) -> str:
        pods = f"{self.count} pod{'s' if self.count != 1 else ''}"
        if self.name in ("head", "submitter"):
            return f"the {'job submitter' if self.name == 'submitter' else 'head'} ({pods})"
        return f"worker group {self.name} ({pods})"


def _order(resource: str) -> tuple[int, str]:
    """Accelerators first: the scarce resource is the one to name."""
    return ({"cpu": 1, "memory": 2}.get(resource, 0), resource)


@dataclass(frozen=True)
class Room:
    nominal: float
    borrowable: float
    """What the queue may borrow on top (``math.inf``: the whole cohort's lendable quota, unbounded
    by a limit; only reached through the cohort's sum)."""

    @property
    def total(self) -> float:
        return self.nominal + self.borrowable


@dataclass(frozen=True)
class Flavor:
    name: str
    node_labels: dict[str, str]
    room: dict[str, Room]
    """Covered resource -> room (0 where the queue gives this flavor none of it)."""


@dataclass(frozen=True)
class Admission:
    """Where each pod set of a workload would go, or why it cannot."""

    cluster_queue: str
    placements: list[tuple[PodSet, str]]
    """(pod set, flavor)."""
    problem: str | None = None


def _container_requests(container: Mapping[str, Any]) -> dict[str, float]:
    """Requests, with a limit standing in for a missing request (as the API server defaults them)."""
    res = as_map(container.get("resources"))
    limits, requests = as_map(res.get("limits")), as_map(res.get("requests"))
    out: dict[str, float] = {}
    for key in {*limits, *requests}:
        amount = parse_quantity(requests.get(key, limits.get(key)))
        if amount:
            out[str(key)] = amount
    return out


def _add(total: dict[str, float], more: Mapping[str, float]) -> None:
    for key, value in more.items():
        total[key] = total.get(key, 0.0) + value


def pod_sets(obj: Mapping[str, Any]) -> list[PodSet]:
    """Kueue's pod sets of a Ray object at its largest (elastic: every group at ``maxReplicas``)."""
    found = cluster_spec(obj)
    if found is None:
        return []
    cluster = found[1]
    elastic = is_elastic(obj)
    job = job_spec(obj)
    mode = str(job.get("submissionMode") or "K8sJobMode") if job is not None else None
    out: list[PodSet] = []
    for group in pod_groups(obj):
        requests: dict[str, float] = {}
        for container in group.containers:
            _add(requests, _container_requests(container))
        selector = {str(k): str(v) for k, v in as_map(group.pod_spec.get("nodeSelector")).items()}
        if group.role == "head":
            if cluster.get("enableInTreeAutoscaling") is True:
                custom = as_map(dig(cluster, "autoscalerOptions", "resources"))
                _add(requests, _container_requests({"resources": custom}) if custom else AUTOSCALER_DEFAULT)
            if mode == "SidecarMode":
                _add(requests, SUBMITTER_DEFAULT)
            out.append(PodSet("head", 1, requests, selector))
            continue
        replicas = number(group.group.get("replicas"))
        count = 1 if replicas is None else int(replicas)
        if elastic:
            count = max(count, int(number(group.group.get("maxReplicas")) or 0))
        hosts = int(number(group.group.get("numOfHosts")) or 1)
        out.append(PodSet(group.name, count * max(hosts, 1), requests, selector))
    if mode == "K8sJobMode":
        template = as_map(dig(job, "submitterPodTemplate", "spec"))
        requests = {}
        for container in as_list(template.get("containers")):
            _add(requests, _container_requests(as_map(container)))
        selector = {str(k): str(v) for k, v in as_map(template.get("nodeSelector")).items()}
        out.append(PodSet("submitter", 1, requests if template else dict(SUBMITTER_DEFAULT), selector))
    return out


def _quota(entry: Mapping[str, Any], key: str) -> float | None:
    value = entry.get(key)
    return None if value is None else parse_quantity(value) or 0.0


def flavors(
    cq: Mapping[str, Any], cohort_peers: Sequence[Mapping[str, Any]], flavor_labels: Mapping[str, Any]
) -> list[Flavor]:
    """The flavors of a ClusterQueue object in Kueue's order, with the room each resource has."""
    lendable: dict[tuple[str, str], float] = {}
    for peer in cohort_peers:
        for group in as_list(dig(peer, "spec", "resourceGroups")):
            for flavor in as_list(as_map(group).get("flavors")):
                for entry in as_list(as_map(flavor).get("resources")):
                    entry = as_map(entry)
                    lend = _quota(entry, "lendingLimit")
                    nominal = _quota(entry, "nominalQuota") or 0.0
                    key = (str(as_map(flavor).get("name")), str(entry.get("name")))
                    lendable[key] = lendable.get(key, 0.0) + (nominal if lend is None else min(lend, nominal))
    in_cohort = bool(dig(cq, "spec", "cohortName"))
    out = []
    for group in as_list(dig(cq, "spec", "resourceGroups")):
        for flavor in as_list(as_map(group).get("flavors")):
            name = str(as_map(flavor).get("name"))
            room = {}
            for entry in as_list(as_map(flavor).get("resources")):
                entry = as_map(entry)
                resource = str(entry.get("name"))
                nominal = _quota(entry, "nominalQuota") or 0.0
                borrow = 0.0
                if in_cohort:
                    limit = _quota(entry, "borrowingLimit")
                    pool = lendable.get((name, resource), 0.0)
                    borrow = pool if limit is None else min(limit, pool)
                room[resource] = Room(nominal, borrow)
            labels = {str(k): str(v) for k, v in as_map(dig(flavor_labels.get(name), "spec", "nodeLabels")).items()}
            out.append(Flavor(name, labels, room))
    return out


def _matches(flavor: Flavor, selector: Mapping[str, str]) -> bool:
    """Kueue compares only the keys a flavor's node labels and the pod's node selector share."""
    return all(selector[k] == v for k, v in flavor.node_labels.items() if k in selector)


def _show(resource: str, amount: float) -> str:
    return format_bytes(amount) if resource == "memory" else f"{amount:g}"


def admit(workload: Mapping[str, Any], cq: Mapping[str, Any], queue_flavors: list[Flavor]) -> Admission:
    """Assign each pod set of ``workload`` a flavor as Kueue would with the queue otherwise empty."""
    name = str(dig(cq, "metadata", "name"))
    used: dict[tuple[str, str], float] = {}
    placements: list[tuple[PodSet, str]] = []
    for ps in pod_sets(workload):
        asked = {r: ps.total(r) for r in sorted(ps.requests, key=_order) if ps.total(r) > 0}
        candidates = [f for f in queue_flavors if _matches(f, ps.node_selector)]
        if not candidates:
            return Admission(
                name,
                placements,
                f"no flavor of ClusterQueue {name} matches the node selector of {ps.describe()}: {ps.node_selector}",
            )
        uncovered = sorted(r for r in asked if r not in candidates[0].room)
        if uncovered:
            return Admission(
                name,
                placements,
                f"ClusterQueue {name} has no quota for {', '.join(uncovered)}, which {ps.describe()} asks for; "
                "add it to the queue's quotas",
            )
        chosen = next(
            (
                f
                for f in candidates
                if all(used.get((f.name, r), 0.0) + amount <= f.room[r].total for r, amount in asked.items())
            ),
            None,
        )
        if chosen is None:
            # Name the shortfall in the flavor the pod set fits best (the most of its largest ask).
            best = max(candidates, key=lambda f: sum(min(f.room[r].total, a) / a for r, a in asked.items()))
            short = [
                (r, a, best.room[r].total - used.get((best.name, r), 0.0))
                for r, a in asked.items()
                if used.get((best.name, r), 0.0) + a > best.room[r].total
            ]
            resource, amount, free = short[0]
            room = best.room[resource]
            return Admission(
                name,
                placements,
                f"{ps.describe()} asks {resource} "
                f"{_show(resource, amount)} but flavor {best.name} of ClusterQueue {name} has "
                f"{_show(resource, max(free, 0.0))} left of {_show(resource, room.nominal)} nominal + "
                f"{_show(resource, room.borrowable)} borrowable",
            )
        for r, amount in asked.items():
            used[(chosen.name, r)] = used.get((chosen.name, r), 0.0) + amount
        placements.append((ps, chosen.name))
    return Admission(name, placements)


def queued_admissions(
    workloads: Sequence[Mapping[str, Any]], kueue_objects: Sequence[Mapping[str, Any]]
) -> list[tuple[Mapping[str, Any], Admission]]:
    """Every queued workload whose LocalQueue and ClusterQueue are among ``kueue_objects``."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for obj in kueue_objects:
        by_kind.setdefault(str(obj.get("kind")), []).append(obj)
    local = {
        (dig(q, "metadata", "namespace"), dig(q, "metadata", "name")): dig(q, "spec", "clusterQueue")
        for q in by_kind.get("LocalQueue", [])
    }
    queues = {dig(q, "metadata", "name"): q for q in by_kind.get("ClusterQueue", [])}
    labels = {dig(f, "metadata", "name"): f for f in by_kind.get("ResourceFlavor", [])}
    out = []
    for obj in workloads:
        queue = queue_name(obj)
        namespace = dig(queued_metadata(obj), "namespace") or dig(obj, "metadata", "namespace")
        cq = queues.get(local.get((namespace, queue))) if queue else None
        if cq is None:
            continue
        cohort = dig(cq, "spec", "cohortName")
        peers = [q for q in queues.values() if q is not cq and cohort and dig(q, "spec", "cohortName") == cohort]
        out.append((obj, admit(obj, cq, flavors(cq, peers, labels))))
    return out


@dataclass(frozen=True)
class QuotaRow:
    cluster_queue: str
    flavor: str
    resource: str
    room: Room
    largest: float
    """What the largest queued workload takes from this flavor."""
    total: float
    """What all of the stack's workloads queued here take at once."""

    def show(self, amount: float) -> str:
        return _show(self.resource, amount)


def quota_table(objects: Sequence[Mapping[str, Any]]) -> list[QuotaRow]:
    """Per ClusterQueue, flavor and resource: its room and what the stack's queued workloads ask."""
    kueue = [o for o in objects if str(o.get("apiVersion", "")).startswith("kueue.x-k8s.io/")]
    queues = [o for o in kueue if o.get("kind") == "ClusterQueue"]
    labels = {dig(f, "metadata", "name"): f for f in kueue if f.get("kind") == "ResourceFlavor"}
    asks: dict[str, list[dict[tuple[str, str], float]]] = {}
    for _, admission in queued_admissions(objects, kueue):
        per_flavor: dict[tuple[str, str], float] = {}
        for ps, placed in admission.placements:
            for resource in ps.requests:
                per_flavor[(placed, resource)] = per_flavor.get((placed, resource), 0.0) + ps.total(resource)
        asks.setdefault(admission.cluster_queue, []).append(per_flavor)
    rows = []
    for cq in queues:
        name = str(dig(cq, "metadata", "name"))
        cohort = dig(cq, "spec", "cohortName")
        peers = [q for q in queues if q is not cq and cohort and dig(q, "spec", "cohortName") == cohort]
        for flavor in flavors(cq, peers, labels):
            for resource, room in flavor.room.items():
                taken = [a.get((flavor.name, resource), 0.0) for a in asks.get(name, [])]
                if room.total or any(taken):
                    rows.append(QuotaRow(name, flavor.name, resource, room, max(taken, default=0.0), sum(taken)))
    return rows
