"""One reader for every object that embeds a Ray cluster.

A RayCluster's spec, a RayService's ``spec.rayClusterConfig``, a RayJob's ``spec.rayClusterSpec``
and a RayCronJob's ``spec.jobTemplate.rayClusterSpec`` are the same structure. Policy rules and
feature-gate derivation read them through these functions so that no kind is forgotten. Inputs
may be anything a user wrote: every accessor tolerates missing keys and wrong types.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RAY_GROUP = "ray.io"
RAY_KINDS = ("RayCluster", "RayService", "RayJob", "RayCronJob")

# kind -> path (under the object) to the embedded RayCluster spec
CLUSTER_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "RayCluster": ("spec",),
    "RayService": ("spec", "rayClusterConfig"),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayCronJob": ("spec", "jobTemplate", "rayClusterSpec"),
}


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """A list for any sequence (pulumi_policy hands rules Sequence proxies), else empty."""
    return list(value) if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else []


def dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def object_ref(obj: Mapping[str, Any]) -> str:
    """``Kind/namespace/name`` of any object, ``-`` for a missing namespace."""
    meta = as_map(obj.get("metadata"))
    return f"{obj.get('kind')}/{meta.get('namespace') or '-'}/{meta.get('name')}"


def is_ray_object(obj: Mapping[str, Any]) -> bool:
    api = obj.get("apiVersion")
    return isinstance(api, str) and api.split("/")[0] == RAY_GROUP and obj.get("kind") in RAY_KINDS


def cluster_spec(obj: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """The embedded RayCluster spec of a Ray object and its dotted path, or None."""
    if not is_ray_object(obj):
        return None
    path = CLUSTER_SPEC_PATHS[str(obj.get("kind"))]
    spec = dig(obj, *path)
    if not isinstance(spec, Mapping):
        return None
    return ".".join(path), spec


@dataclass(frozen=True)
class PodGroup:
    """The head or one worker group of a Ray cluster, as written."""

    path: str
    """Dotted path of the group within the object, e.g. ``spec.workerGroupSpecs[1]``."""
    role: str
    """``head`` or ``worker``."""
    name: str
    group: Mapping[str, Any]

    @property
    def ray_start_params(self) -> Mapping[str, Any]:
        return as_map(self.group.get("rayStartParams"))

    @property
    def pod_spec(self) -> Mapping[str, Any]:
        return as_map(dig(self.group, "template", "spec"))

    @property
    def containers(self) -> list[Mapping[str, Any]]:
        return [c for c in as_list(self.pod_spec.get("containers")) if isinstance(c, Mapping)]

    @property
    def ray_container(self) -> Mapping[str, Any]:
        """KubeRay treats the first container as the Ray container."""
        containers = self.containers
        return containers[0] if containers else {}


def pod_groups(obj: Mapping[str, Any]) -> Iterator[PodGroup]:
    """Head first, then each worker group, of any Ray object."""
    found = cluster_spec(obj)
    if found is None:
        return
    base, spec = found
    head = spec.get("headGroupSpec")
    if isinstance(head, Mapping):
        yield PodGroup(f"{base}.headGroupSpec", "head", "head", head)
    for i, group in enumerate(as_list(spec.get("workerGroupSpecs"))):
        if isinstance(group, Mapping):
            name = group.get("groupName")
            yield PodGroup(f"{base}.workerGroupSpecs[{i}]", "worker", name if isinstance(name, str) else f"#{i}", group)


def head_group(obj: Mapping[str, Any]) -> PodGroup | None:
    """The head of any Ray object, or None."""
    return next((g for g in pod_groups(obj) if g.role == "head"), None)


def container_resource(container: Mapping[str, Any], resource: str) -> Any:
    """The limit (else request) a container sets for ``resource``, or None."""
    res = as_map(container.get("resources"))
    for section in ("limits", "requests"):
        value = as_map(res.get(section)).get(resource)
        if value is not None:
            return value
    return None


ACCELERATOR_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu")
TPU_RESOURCE = "google.com/tpu"
_MIG = re.compile(r"nvidia\.com/mig-\d+g\.\d+gb$")


def is_gpu_resource(key: str) -> bool:
    """A resource KubeRay counts as GPUs (``IsGPUResourceKey``, KubeRay 1.7.0 utils/resources.go): a
    name ending in ``gpu`` or an NVIDIA MIG profile (``nvidia.com/mig-3g.40gb``); one MIG slice is
    one GPU to Ray."""
    return key.endswith("gpu") or bool(_MIG.search(key))


def is_accelerator_resource(key: str) -> bool:
    return key == TPU_RESOURCE or is_gpu_resource(key)


def number(value: Any) -> float | None:
    """A plain finite count (``"4"``, ``4``, ``4.0``) as a float; None for anything else."""
    if isinstance(value, bool):
        return None
    try:
        result = float(str(value).strip())
    except ValueError:
        return None
    return result if math.isfinite(result) else None


def accelerators(container: Mapping[str, Any]) -> dict[str, float]:
    """Accelerator resource (GPUs, MIG profiles, TPUs) -> count the container asks for (limit, else
    request)."""
    res = as_map(container.get("resources"))
    keys = {str(k) for section in ("limits", "requests") for k in as_map(res.get(section))}
    out = {}
    for key in sorted(keys):
        if is_accelerator_resource(key):
            amount = number(container_resource(container, key))
            if amount:
                out[key] = amount
    return out


def group_accelerators(group: PodGroup) -> dict[str, float]:
    """Accelerators one pod of a group asks for, summed over its containers."""
    total: dict[str, float] = {}
    for container in group.containers:
        for res, amount in accelerators(container).items():
            total[res] = total.get(res, 0) + amount
    return total


def metadata_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(obj.get("metadata"))


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(metadata_of(obj).get("labels"))


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(metadata_of(obj).get("annotations"))


QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
"""``"true"``: Kueue admits the workload in slices that follow its replicas (ElasticJobsViaWorkloadSlices)."""
ELASTIC_JOB_SCHEDULING_GATE = "kueue.x-k8s.io/elastic-job"
"""The scheduling gate Kueue keeps on an elastic workload's pod templates (``ElasticJobSchedulingGate``)."""
MULTIKUEUE_MANAGER = "kueue.x-k8s.io/multikueue"
"""``spec.managedBy`` of a workload MultiKueue dispatches to a worker cluster (the local operator skips it)."""


def queued_metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The metadata Kueue reads: a RayCronJob's job template's (each RayJob it creates is queued on
    its own), else the object's."""
    if obj.get("kind") == "RayCronJob":
        return as_map(dig(obj, "spec", "jobTemplate", "metadata")) or metadata_of(obj)
    return metadata_of(obj)


def queue_name(obj: Mapping[str, Any]) -> str | None:
    """The Kueue LocalQueue an object is labelled for (a RayCronJob labels its job template)."""
    value = as_map(queued_metadata(obj).get("labels")).get(QUEUE_LABEL)
    return value if isinstance(value, str) and value else None


def is_elastic(obj: Mapping[str, Any]) -> bool:
    """Kueue matches the annotation's value exactly."""
    return as_map(queued_metadata(obj).get("annotations")).get(ELASTIC_JOB_ANNOTATION) == "true"


def job_spec(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The RayJob spec of a RayJob or of a RayCronJob's job template."""
    if not is_ray_object(obj):
        return None
    if obj.get("kind") == "RayJob":
        return as_map(obj.get("spec"))
    if obj.get("kind") == "RayCronJob":
        return as_map(dig(obj, "spec", "jobTemplate"))
    return None


def job_spec_path(obj: Mapping[str, Any]) -> str:
    return "spec.jobTemplate" if obj.get("kind") == "RayCronJob" else "spec"
