"""The embedded Ray cluster every workload kind carries (pure: spec in, Kubernetes dict out).

A RayCluster's ``spec``, a RayJob's ``rayClusterSpec`` and a RayService's ``rayClusterConfig`` are
all built here, so the head-does-no-work rule, pools, autoscaling profiles, GCS fault tolerance,
volumes and credentials come out the same for every kind.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.manifests import redis
from components.manifests.certificates import dashboard_tls_secret
from components.manifests.network_policy import network_policy
from components.spec import (
    ClusterBase,
    CpuPool,
    GcsFaultToleranceSpec,
    GpuPool,
    RayJobSpec,
    RayServiceSpec,
    Resources,
    TpuPool,
    WorkerGroupSpec,
)
from components.spec.storage import ExternalRedis, InClusterRedis, password_secret
from components.spec.workloads import SharedVolume, Toleration

Pools = Mapping[str, CpuPool | GpuPool | TpuPool]

# Port names are the ones KubeRay looks up (ray-operator utils: gcs-server, dashboard, client, metrics),
# and the metrics ports of Ray's autoscaler and dashboard, which KubeRay does not declare (its
# PodMonitor example scrapes them by these names).
HEAD_PORTS = [
    {"containerPort": 6379, "name": "gcs-server"},
    {"containerPort": 8265, "name": "dashboard"},
    {"containerPort": 10001, "name": "client"},
    {"containerPort": 8080, "name": "metrics"},
    {"containerPort": 44217, "name": "as-metrics"},
    {"containerPort": 44227, "name": "dash-metrics"},
]
WORKLOAD_LABEL = "kuberay-platform.io/workload"
RESTRICTED_CONTAINER: dict[str, Any] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
"""What Pod Security ``restricted`` asks of each container itself. KubeRay copies the Ray container's
securityContext into the init containers it injects (``wait-gcs-ready``); the autoscaler sidecar gets
``autoscalerOptions.securityContext``."""


def restricted_pod(w: ClusterBase) -> dict[str, Any]:
    """Pod Security ``restricted`` at pod level: every container, injected ones included, runs as the
    image's non-root user under the runtime's seccomp profile; volumes belong to its group."""
    return {
        "runAsNonRoot": True,
        "runAsUser": w.image.run_as_user,
        "fsGroup": w.image.fs_group,
        "fsGroupChangePolicy": "OnRootMismatch",
        "seccompProfile": {"type": "RuntimeDefault"},
    }


"""On every Ray pod template: which workload (RayCluster, RayJob, RayService) the pod serves, whatever
the name of the RayCluster behind it (RayServices and RayJobs generate theirs). Monitoring groups
Ray's metrics by it."""
SERVE_PORT = {"containerPort": 8000, "name": "serve"}
AUTOSCALER_RESOURCES = Resources(cpu="500m", memory="512Mi")
"""The autoscaler sidecar's requests and limits (KubeRay's samples use the same)."""


def accelerator_resources(accelerator_type: str) -> str:
    """``rayStartParams.resources`` advertising the accelerator type, in the one quoting both
    readers accept: KubeRay trims quotes and parses JSON (``getResourcesMap``) and passes the flag
    through a shell; Ray's autoscaling config builder drops the first and last character and
    backslashes before parsing (``_get_custom_resources``), and wants whole numbers."""
    return "'" + json.dumps({f"accelerator_type:{accelerator_type}": 1}) + "'"


@dataclass(frozen=True)
class WorkerOptions:
    """What a workload kind adds to its worker pods."""

    termination_grace_period_seconds: int | None = None
    serve_port: bool = False
    accelerator_groups_from_zero: bool = False
    """Incremental RayService upgrades: the pending cluster's accelerator groups start empty and
    grow one surge step at a time (KubeRay's incremental-upgrade guide: ``minReplicas: 0``); the
    serving floor is the Serve replicas' minimum, which keeps their nodes busy."""


def container_resources(res: Resources, extra: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Requests equal to limits: Guaranteed QoS, and Ray's view of the pod matches the node's."""
    amounts = {"cpu": res.cpu, "memory": res.memory, **(extra or {})}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def pod_tolerations(items: list[Toleration]) -> list[dict[str, Any]]:
    return [t.model_dump(by_alias=True, exclude_none=True) for t in items]


def nfs_claim_name(w: ClusterBase, volume: SharedVolume) -> str:
    """The PVC an NFS volume is mounted through (``components.manifests.volumes``)."""
    return f"{w.name}-{volume.name}"


def _volumes(w: ClusterBase) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pod volumes and mounts. NFS exports are mounted through a PVC bound to a PersistentVolume the
    platform creates: Pod Security ``restricted`` refuses inline ``nfs`` volumes."""
    pod, mounts = [], []
    for v in w.volumes:
        if v.nfs is not None:
            claim, read_only = nfs_claim_name(w, v), v.nfs.read_only
        else:
            assert v.pvc is not None
            claim, read_only = v.pvc.claim_name, v.pvc.read_only
        # ``readOnly`` only when true: Go's omitempty drops false, so a controller that rewrites the
        # template with its Go types (Kueue's Update of an admitted RayJob's atomic workerGroupSpecs)
        # would leave a false the stack sends as a perpetual diff (found on the local control plane).
        only = {"readOnly": True} if read_only else {}
        pod.append({"name": v.name, "persistentVolumeClaim": {"claimName": claim, **only}})
        mounts.append({"name": v.name, "mountPath": v.mount_path, **only})
    return pod, mounts


def _container(name: str, image: str, resources: dict[str, Any], w: ClusterBase) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": name,
        "image": image,
        "resources": resources,
        "securityContext": dict(RESTRICTED_CONTAINER),
    }
    if w.env:
        container["env"] = [{"name": k, "value": v} for k, v in sorted(w.env.items())]
    if w.secret_env:
        container["envFrom"] = [{"secretRef": {"name": s}} for s in w.secret_env]
    _, mounts = _volumes(w)
    if mounts:
        container["volumeMounts"] = mounts
    return container


def _pod_spec(
    container: dict[str, Any], w: ClusterBase, selector: Mapping[str, str], tolerations: list[Toleration]
) -> dict[str, Any]:
    spec: dict[str, Any] = {"securityContext": restricted_pod(w), "containers": [container]}
    if selector:
        spec["nodeSelector"] = dict(selector)
    if tolerations:
        spec["tolerations"] = pod_tolerations(tolerations)
    pod_volumes, _ = _volumes(w)
    if pod_volumes:
        spec["volumes"] = pod_volumes
    return spec


def gpu_variant(w: ClusterBase, pools: Pools) -> str | None:
    """The CUDA image variant when the workload has GPU groups (head and workers share one image
    so code and dependencies are identical everywhere)."""
    for g in w.worker_groups:
        pool = pools[g.pool]
        if isinstance(pool, GpuPool):
            return pool.cuda
    return None


def image(w: ClusterBase, pools: Pools) -> str:
    """The one image of the workload's cluster (ray-llm for LLM services)."""
    return w.image.reference(w.ray_version, gpu_variant(w, pools), llm=isinstance(w, RayServiceSpec) and w.is_llm)


def pool_selector(pool: CpuPool | GpuPool | TpuPool) -> dict[str, str]:
    """The node labels of a pool's nodes: what its worker pods select, and its Kueue ResourceFlavor's
    ``nodeLabels``."""
    selector = dict(pool.node_selector)
    if isinstance(pool, GpuPool) and pool.product:
        selector[pool.selector_label] = pool.product
    elif isinstance(pool, TpuPool):
        selector["cloud.google.com/gke-tpu-accelerator"] = pool.accelerator
        selector["cloud.google.com/gke-tpu-topology"] = pool.topology
    return selector


def _worker_group(g: WorkerGroupSpec, w: ClusterBase, pools: Pools, options: WorkerOptions) -> dict[str, Any]:
    pool = pools[g.pool]
    extra: dict[str, str] = {}
    params: dict[str, str] = {}
    selector = pool_selector(pool)
    group: dict[str, Any] = {}
    if isinstance(pool, GpuPool):
        extra["nvidia.com/gpu"] = str(pool.gpus_per_pod)
        params["num-gpus"] = str(pool.gpus_per_pod)  # what KubeRay would derive, stated explicitly
        if pool.ray_accelerator_type:
            params["resources"] = accelerator_resources(pool.ray_accelerator_type)
    elif isinstance(pool, TpuPool):
        extra["google.com/tpu"] = str(min(pool.chips, pool.chips_per_host))
        group["numOfHosts"] = pool.hosts
    container = _container("ray-worker", image(w, pools), container_resources(g.resources, extra), w)
    if options.serve_port:
        container["ports"] = [dict(SERVE_PORT)]
    pod = _pod_spec(container, w, selector, pool.tolerations)
    if options.termination_grace_period_seconds is not None:
        pod["terminationGracePeriodSeconds"] = options.termination_grace_period_seconds
    from_zero = options.accelerator_groups_from_zero and not isinstance(pool, CpuPool)
    group.update(
        {
            "groupName": g.name,
            "replicas": g.initial(w.profile, w.autoscaled),
            "minReplicas": 0 if from_zero else g.floor(w.profile),
            "maxReplicas": g.max_replicas,
            "rayStartParams": params,
            "template": {"spec": pod},
        }
    )
    if g.idle_timeout_seconds is not None:
        group["idleTimeoutSeconds"] = g.idle_timeout_seconds
    return group


REDIS_CA_DIR = "/etc/ray/redis-ca"
GcsStores = Mapping[str, InClusterRedis | ExternalRedis]


def _secret_ref(name: str, key: str) -> dict[str, Any]:
    return {"valueFrom": {"secretKeyRef": {"name": name, "key": key}}}


def _gcs_options(ft: GcsFaultToleranceSpec, stores: GcsStores) -> dict[str, Any]:
    if ft.backend == "rocksdb":
        storage: dict[str, Any] = {
            "size": ft.storage_size,
            "accessModes": list(ft.access_modes),
            "deletionPolicy": "Retain" if ft.retain_storage else "DeleteWithCluster",
        }
        if ft.storage_class:
            storage["storageClassName"] = ft.storage_class
        return {"backend": "rocksdb", "storage": storage}
    assert ft.storage is not None
    store = stores.get(ft.storage)
    if store is None:
        raise ValueError(f"gcsFaultTolerance.storage: unknown storage {ft.storage!r}")
    options: dict[str, Any] = {"backend": "redis"}
    # Passwords reach Ray only through secretKeyRef: KubeRay copies valueFrom into the head's
    # REDIS_PASSWORD env (common/pod.go configureRedisFT).
    if isinstance(store, InClusterRedis):
        options["redisAddress"] = redis.address(ft.storage, store.namespace)
        options["redisPassword"] = _secret_ref(*password_secret(ft.storage, store))
    else:
        options["redisAddress"] = ("rediss://" if store.tls else "") + store.address
        if store.username is not None:
            options["redisUsername"] = _secret_ref(store.username.name, store.username.key)
        options["redisPassword"] = _secret_ref(store.password_secret.name, store.password_secret.key)
    # Unset, KubeRay keys the state by the RayCluster's UID: unique per cluster, including the
    # pending and active clusters of a RayService upgrade.
    if ft.external_storage_namespace:
        options["externalStorageNamespace"] = ft.external_storage_namespace
    return options


def _gcs_head(head: dict[str, Any], ft: GcsFaultToleranceSpec, stores: GcsStores) -> None:
    """The head pod's part of Redis storage: the label the Redis NetworkPolicy admits (KubeRay's
    cleanup Job copies the head's labels), and an external Redis's CA for TLS."""
    if ft.backend != "redis" or ft.storage is None:
        return
    template = head["template"]
    template.setdefault("metadata", {}).setdefault("labels", {})[redis.STORAGE_LABEL] = ft.storage
    store = stores.get(ft.storage)
    if isinstance(store, ExternalRedis) and store.ca_secret is not None:
        ca = store.ca_secret
        pod = template["spec"]
        container = pod["containers"][0]
        container.setdefault("env", []).append({"name": "RAY_REDIS_CA_CERT", "value": f"{REDIS_CA_DIR}/{ca.key}"})
        container.setdefault("volumeMounts", []).append(
            {"name": "redis-ca", "mountPath": REDIS_CA_DIR, "readOnly": True}
        )
        pod.setdefault("volumes", []).append({"name": "redis-ca", "secret": {"secretName": ca.name}})


def has_gpus(w: ClusterBase, pools: Pools) -> bool:
    return any(isinstance(pools[g.pool], GpuPool) for g in w.worker_groups)


def auth_token_secret(w: ClusterBase) -> str | None:
    """The token Secret a workload's clusters share: an existing one, the one the stack creates from
    a config secret, or None (KubeRay generates one per cluster)."""
    token = w.auth.token
    if token is None:
        return None
    return token.secret.name if token.secret is not None else f"{w.name}-ray-token"


def auth_options(w: ClusterBase) -> dict[str, Any]:
    options: dict[str, Any] = {"mode": w.auth.mode}
    if (secret := auth_token_secret(w)) is not None:
        options["secretName"] = secret
    if w.auth.kubernetes_tokens:
        options["enableK8sTokenAuth"] = True
    return options


def cluster_body(
    w: ClusterBase,
    pools: Pools,
    options: WorkerOptions | None = None,
    operator_namespace: str | None = None,
    stores: GcsStores | None = None,
) -> dict[str, Any]:
    """The RayCluster spec of workload ``w`` (``operator_namespace``: where the operator runs, for
    the network policy's operator access; ``stores``: the platform's GCS storage by name)."""
    options = options or WorkerOptions()
    autoscaling = w.autoscaling()
    head_params = {"num-cpus": "0", "dashboard-host": "0.0.0.0"}  # the head schedules no work
    if has_gpus(w, pools):
        head_params["num-gpus"] = "0"
    head_container = _container("ray-head", image(w, pools), container_resources(w.head.resources), w)
    head_container["ports"] = [dict(p) for p in HEAD_PORTS]
    head: dict[str, Any] = {
        "rayStartParams": head_params,
        "template": {"spec": _pod_spec(head_container, w, w.head.node_selector, [])},
    }
    if w.head.ingress is not None:
        ing = w.head.ingress
        head["enableIngress"] = True
        head["ingressOptions"] = {"host": ing.host, "path": ing.path, "pathType": ing.path_type}
        if (secret := dashboard_tls_secret(w)) is not None:
            head["ingressOptions"]["tls"] = [{"hosts": [ing.host], "secretName": secret}]
    body: dict[str, Any] = {"rayVersion": w.ray_version, "enableInTreeAutoscaling": w.autoscaled}
    if w.autoscaled:
        body["autoscalerOptions"] = {
            "version": w.autoscaler.version,
            "idleTimeoutSeconds": autoscaling.idle_timeout_seconds,
            "upscalingMode": autoscaling.upscaling_mode,
            "resources": container_resources(AUTOSCALER_RESOURCES),
            "securityContext": dict(RESTRICTED_CONTAINER),
        }
    body |= {
        "authOptions": auth_options(w),
        "headGroupSpec": head,
        "workerGroupSpecs": [_worker_group(g, w, pools, options) for g in w.worker_groups],
    }
    if w.gcs_fault_tolerance is not None:
        body["gcsFaultToleranceOptions"] = _gcs_options(w.gcs_fault_tolerance, stores or {})
        _gcs_head(head, w.gcs_fault_tolerance, stores or {})
    if w.network_policy is not None:
        if operator_namespace is None:
            raise ValueError("a network policy needs the operator's namespace")
        kind = (
            "RayService" if isinstance(w, RayServiceSpec) else "RayJob" if isinstance(w, RayJobSpec) else "RayCluster"
        )
        body["networkPolicy"] = network_policy(kind, w.network_policy, operator_namespace)
    if w.mtls:
        body["tlsOptions"] = {"enabled": True}
    for template in [head["template"], *(g["template"] for g in body["workerGroupSpecs"])]:
        template.setdefault("metadata", {}).setdefault("labels", {})[WORKLOAD_LABEL] = w.name
    return body
