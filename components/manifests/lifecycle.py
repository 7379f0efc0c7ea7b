"""How Pulumi must handle each Ray object on a real cluster: waiting, replacing, sharing fields.

Pure data (no Pulumi): the annotations land in the emitted objects, the options are applied by
``components.workloads``. Each choice rests on upstream behaviour, cited where it is made:

- **Waiting** (``pulumi.com/waitFor``): the Kubernetes provider treats custom resources as ready as
  soon as they are created (no ray.io awaiter in ``provider/pkg/await/awaiters.go``), so a green
  ``pulumi up`` would say nothing about KubeRay accepting them. KubeRay 1.7.0 sets the RayCluster
  condition ``HeadPodReady`` and the RayService condition ``Ready`` (``NonZeroServeEndpoints``); a
  RayJob has no conditions but a ``status.jobDeploymentStatus`` once the operator reconciled it
  (``rayjob_controller.go``). A RayCronJob has no status until its first run: not awaited.
  A Kueue-queued workload may wait for quota indefinitely, suspended: a queued RayCluster is awaited
  until ``status.state`` is set (``ready`` once running, ``suspended`` while Kueue holds it,
  ``raycluster_controller.go`` calculateStatus); a queued RayJob reaches ``Suspended`` as its
  deployment status; a queued RayService is not awaited. A workload MultiKueue dispatches
  (``spec.managedBy: kueue.x-k8s.io/multikueue``) is skipped by the local operator, so its status
  only arrives from the worker cluster: not awaited.
- **Replacing**: KubeRay ignores a RayJob's spec after submission ("Disregard changes in
  RayClusterSpec of RayJob", ``getOrCreateRayClusterInstance``; the submitter Job is created once),
  so any change replaces the RayJob. ``gcsFaultToleranceOptions.backend`` and ``managedBy`` are
  immutable (CEL ``self == oldSelf`` in the CRDs): a change replaces the object instead of an
  update the API server rejects. Names are fixed, so the old object goes first.
- **Sharing ``replicas`` with the Ray autoscaler**: it patches ``spec.workerGroupSpecs[*].replicas``
  of a standalone RayCluster (``ray/autoscaler/_private/kuberay/node_provider.py``), and
  ``workerGroupSpecs`` has no ``x-kubernetes-list-type`` (atomic), so the autoscaler's manager takes
  the whole list and Pulumi's next server-side apply conflicts (``ssaUpdate`` does not force). The
  autoscaler owns ``replicas``: Pulumi ignores changes to it (sending the value from state, which the
  project's ``options.refresh: always`` brings up to date first) and forces its apply of the rest
  (``pulumi.com/patchForce``). Whether a refresh reads the autoscaler's replicas back into state is
  for the real control plane to prove (issue 14). RayServices and RayJobs are unaffected: the autoscaler patches the
  operator-owned child RayCluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.manifests.ray_objects import MULTIKUEUE_MANAGER, as_map, cluster_spec, dig, queue_name

WAIT_FOR = "pulumi.com/waitFor"
PATCH_FORCE = "pulumi.com/patchForce"
AUTOSCALED_REPLICAS = "spec.workerGroupSpecs[*].replicas"

_WAIT = {
    "RayCluster": "condition=HeadPodReady",
    "RayService": "condition=Ready",
    "RayJob": "jsonpath={.status.jobDeploymentStatus}",
}
_TIMEOUT_MINUTES = {"RayCluster": 15, "RayService": 45, "RayJob": 15}
"""A RayService is ready once its model is loaded: large weights take long to download."""


@dataclass(frozen=True)
class Lifecycle:
    annotations: dict[str, str] = field(default_factory=dict)
    replace_on_changes: list[str] = field(default_factory=list)
    delete_before_replace: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    timeout_minutes: int | None = None


def immutable_paths(obj: Mapping[str, Any]) -> list[str]:
    """Pulumi property paths of the fields the CRD makes immutable (its ``self == oldSelf`` rules)."""
    owner = "spec.jobTemplate" if obj.get("kind") == "RayCronJob" else "spec"
    paths = {f"{owner}.managedBy"}
    found = cluster_spec(obj)
    if found is not None:
        base, _ = found
        paths |= {f"{base}.managedBy", f"{base}.gcsFaultToleranceOptions.backend"}
    return sorted(paths)


def lifecycle(obj: Mapping[str, Any], wait_for_ready: bool = True) -> Lifecycle:
    """What Pulumi does with ``obj``; ``wait_for_ready=False`` (``workloads.waitForReady``) waits for nothing."""
    kind = str(obj.get("kind"))
    annotations: dict[str, str] = {}
    wait = _WAIT.get(kind)
    if queue_name(obj) is not None:
        wait = {"RayCluster": "jsonpath={.status.state}", "RayJob": wait}.get(kind)
    if dig(obj, "spec", "managedBy") == MULTIKUEUE_MANAGER or not wait_for_ready:
        wait = None
    if wait:
        annotations[WAIT_FOR] = wait
    replace = immutable_paths(obj)
    ignore: list[str] = []
    if kind == "RayJob":
        replace = ["spec"]
    if kind == "RayCluster" and as_map(obj.get("spec")).get("enableInTreeAutoscaling"):
        annotations[PATCH_FORCE] = "true"
        ignore = [AUTOSCALED_REPLICAS]
    return Lifecycle(
        annotations=annotations,
        replace_on_changes=replace,
        delete_before_replace=True,
        ignore_changes=ignore,
        timeout_minutes=_TIMEOUT_MINUTES.get(kind),
    )


def with_lifecycle_annotations(obj: dict[str, Any], wait_for_ready: bool = True) -> dict[str, Any]:
    """The object with its lifecycle annotations added (they belong in the emitted manifest)."""
    extra = lifecycle(obj, wait_for_ready).annotations
    if extra:
        meta = obj.setdefault("metadata", {})
        meta["annotations"] = {**as_map(meta.get("annotations")), **extra}
    return obj
