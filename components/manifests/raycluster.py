"""RayCluster objects built from the workload spec (pure: spec in, Kubernetes dict out)."""

from __future__ import annotations

from typing import Any

from components.manifests.common import metadata
from components.spec import GcsFaultToleranceSpec, RayClusterSpec, Resources, WorkerGroupSpec

# Port names are the ones KubeRay looks up (ray-operator utils: gcs-server, dashboard, client, metrics).
HEAD_PORTS = [
    {"containerPort": 6379, "name": "gcs-server"},
    {"containerPort": 8265, "name": "dashboard"},
    {"containerPort": 10001, "name": "client"},
    {"containerPort": 8080, "name": "metrics"},
]
AUTOSCALER_RESOURCES = Resources(cpu="500m", memory="512Mi")
"""The autoscaler sidecar's requests and limits (KubeRay's samples use the same)."""


def container_resources(res: Resources) -> dict[str, Any]:
    """Requests equal to limits: Guaranteed QoS, and Ray's view of the pod matches the node's."""
    amounts = {"cpu": res.cpu, "memory": res.memory}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _pod_template(container: dict[str, Any], node_selector: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container]}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    return {"spec": spec}


def _worker_group(group: WorkerGroupSpec, image: str) -> dict[str, Any]:
    container = {"name": "ray-worker", "image": image, "resources": container_resources(group.resources)}
    return {
        "groupName": group.name,
        "replicas": group.initial_replicas,
        "minReplicas": group.min_replicas,
        "maxReplicas": group.max_replicas,
        "rayStartParams": {},
        "template": _pod_template(container, group.node_selector),
    }


def _gcs_options(ft: GcsFaultToleranceSpec, cluster: str) -> dict[str, Any]:
    if ft.backend == "rocksdb":
        return {
            "backend": "rocksdb",
            "storage": {
                "size": ft.storage_size,
                "deletionPolicy": "Retain" if ft.retain_storage else "DeleteWithCluster",
            },
        }
    options: dict[str, Any] = {
        "backend": "redis",
        "redisAddress": ft.redis_address,
        "externalStorageNamespace": ft.external_storage_namespace or cluster,
    }
    if ft.redis_password_secret is not None:
        ref = ft.redis_password_secret
        options["redisPassword"] = {"valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}}}
    return options


def ray_cluster(spec: RayClusterSpec, environment: str) -> dict[str, Any]:
    image = spec.image.reference(spec.ray_version)
    head_container = {
        "name": "ray-head",
        "image": image,
        "ports": [dict(p) for p in HEAD_PORTS],
        "resources": container_resources(spec.head.resources),
    }
    body: dict[str, Any] = {
        "rayVersion": spec.ray_version,
        "enableInTreeAutoscaling": True,
        "autoscalerOptions": {
            "version": spec.autoscaler.version,
            "idleTimeoutSeconds": spec.autoscaler.idle_timeout_seconds,
            "upscalingMode": spec.autoscaler.upscaling_mode,
            "resources": container_resources(AUTOSCALER_RESOURCES),
        },
        "authOptions": {"mode": spec.auth},
        "headGroupSpec": {
            # The head schedules no work: it runs GCS, the dashboard and the autoscaler.
            "rayStartParams": {"num-cpus": "0", "dashboard-host": "0.0.0.0"},
            "template": _pod_template(head_container, spec.head.node_selector),
        },
        "workerGroupSpecs": [_worker_group(g, image) for g in spec.worker_groups],
    }
    if spec.gcs_fault_tolerance is not None:
        body["gcsFaultToleranceOptions"] = _gcs_options(spec.gcs_fault_tolerance, spec.name)
    if spec.network_policy is not None:
        body["networkPolicy"] = {"mode": spec.network_policy}
    if spec.mtls:
        body["tlsOptions"] = {"enabled": True}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": metadata(spec.name, spec.namespace, environment, "ray-cluster"),
        "spec": body,
    }
