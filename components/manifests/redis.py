"""The in-cluster GCS Redis: its configuration and Kubernetes objects (pure dicts).

KubeRay supports only a standalone Redis for GCS fault tolerance. Durability comes from AOF with
``appendfsync everysec`` (at most a second of acknowledged writes lost on a crash) plus RDB
snapshots on the ``save`` schedule, both on a PVC. ``maxmemory-policy noeviction``: GCS state must
never be evicted, a full Redis must refuse writes instead. The password is never in these objects:
the container reads it from the Secret into ``$REDIS_PASSWORD`` and passes it to ``--requirepass``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.manifests.common import labels as component_labels
from components.manifests.quantity import parse_quantity
from components.spec.storage import InClusterRedis, password_namespaces, password_secret

REDIS_PORT = 6379
DATA_DIR = "/data"
CONFIG_DIR = "/etc/redis"
PASSWORD_ENV = "REDIS_PASSWORD"
# The label the platform puts on the head pod template of every cluster that uses a storage; KubeRay
# copies template labels to the head pod, and the Redis cleanup Job's pod copies the head pod's.
STORAGE_LABEL = "kuberay-platform.io/gcs-storage"
# Pods that talk to Redis: the head's GCS, and on RayCluster deletion the cleanup Job KubeRay builds
# from the head pod (ray.io/node-type=redis-cleanup; raycluster_controller.go buildRedisCleanupJob).
REDIS_CLIENT_NODE_TYPES = ["head", "redis-cleanup"]


MAX_MEMORY_SHARE = 0.8
"""Of the memory limit: the rest is headroom for the AOF rewrite's fork and client buffers."""


def max_memory_bytes(spec: InClusterRedis) -> int:
    memory = parse_quantity(spec.resources.memory)
    if memory is None:
        raise ValueError(f"cannot read memory quantity {spec.resources.memory!r}")
    return int(memory * MAX_MEMORY_SHARE)


def redis_conf(spec: InClusterRedis) -> str:
    """The redis.conf the server runs with (``requirepass`` comes from the command line)."""
    lines = [
        "# kuberay-platform: GCS storage for Ray (standalone Redis).",
        f"port {REDIS_PORT}",
        "bind * -::*",
        "protected-mode yes",
        f"dir {DATA_DIR}",
        "appendonly yes",
        f"appendfsync {spec.appendfsync}",
        'appendfilename "appendonly.aof"',
        "aof-use-rdb-preamble yes",
        "auto-aof-rewrite-percentage 100",
        "auto-aof-rewrite-min-size 64mb",
        'dbfilename "dump.rdb"',
        *(f"save {rule}" for rule in spec.snapshot_schedule),
        "stop-writes-on-bgsave-error yes",
        f"maxmemory {max_memory_bytes(spec)}",
        "maxmemory-policy noeviction",
        "tcp-keepalive 60",
        "timeout 0",
        "loglevel notice",
        'logfile ""',
    ]
    return "\n".join(lines) + "\n"


def labels(name: str, environment: str) -> dict[str, str]:
    return {**selector(name), **component_labels(environment, "gcs-storage")}


def selector(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "redis", "app.kubernetes.io/instance": name}


def address(name: str, namespace: str) -> str:
    return f"{name}.{namespace}.svc.cluster.local:{REDIS_PORT}"


def _cli(command: str) -> list[str]:
    # An authenticated check: a Redis that accepts connections but not the password is not ready.
    return ["sh", "-c", f'redis-cli -a "${PASSWORD_ENV}" --no-auth-warning -p {REDIS_PORT} {command} | grep -q PONG']


def redis_objects(
    name: str,
    spec: InClusterRedis,
    environment: str,
    secret: tuple[str, str],
    clients: dict[str, list[str]],
) -> list[dict[str, Any]]:
    """ConfigMap, headless Service, StatefulSet (PVC template), PodDisruptionBudget and NetworkPolicy.

    ``secret``: (name, key) of the password Secret in the Redis namespace. ``clients``: namespace ->
    the client workloads there (documentation only: the NetworkPolicy selects their head pods by the
    storage label, since RayService and RayJob clusters get generated names)."""
    ns = spec.namespace
    meta = {"name": name, "namespace": ns, "labels": labels(name, environment)}
    config_name = f"{name}-redis-config"
    resources = {"cpu": spec.resources.cpu, "memory": spec.resources.memory}
    container = {
        "name": "redis",
        "image": spec.image.reference(),
        "command": ["sh", "-c", f'exec redis-server {CONFIG_DIR}/redis.conf --requirepass "${PASSWORD_ENV}"'],
        "env": [{"name": PASSWORD_ENV, "valueFrom": {"secretKeyRef": {"name": secret[0], "key": secret[1]}}}],
        "ports": [{"name": "redis", "containerPort": REDIS_PORT}],
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "readinessProbe": {"exec": {"command": _cli("ping")}, "periodSeconds": 5, "timeoutSeconds": 3},
        "livenessProbe": {
            "exec": {"command": _cli("ping")},
            "initialDelaySeconds": 30,
            "periodSeconds": 10,
            "timeoutSeconds": 5,
            "failureThreshold": 6,
        },
        "volumeMounts": [
            {"name": "data", "mountPath": DATA_DIR},
            {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "runAsUser": 999,
            "runAsGroup": 999,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    claim: dict[str, Any] = {
        "metadata": {"name": "data", "labels": selector(name)},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": spec.storage_size}}},
    }
    if spec.storage_class:
        claim["spec"]["storageClassName"] = spec.storage_class
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {
            "replicas": 1,  # KubeRay supports only a standalone Redis
            "serviceName": name,
            "selector": {"matchLabels": selector(name)},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "template": {
                "metadata": {"labels": labels(name, environment)},
                "spec": {
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    # SIGTERM makes Redis fsync the AOF and exit; give it time with a large dataset.
                    "terminationGracePeriodSeconds": 60,
                    "securityContext": {"fsGroup": 999, "fsGroupChangePolicy": "OnRootMismatch"},
                    "containers": [container],
                    "volumes": [
                        {"name": "config", "configMap": {"name": config_name}},
                        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
                    ],
                },
            },
            "volumeClaimTemplates": [claim],
        },
    }
    client_namespaces = sorted(clients)
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {**meta, "name": config_name},
            "data": {"redis.conf": redis_conf(spec)},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {
                "clusterIP": "None",
                "selector": selector(name),
                "ports": [{"name": "redis", "port": REDIS_PORT, "targetPort": "redis"}],
            },
        },
        statefulset,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": meta,
            # One replica: a drain must not evict it unannounced; move it deliberately (see the runbook).
            "spec": {"minAvailable": 1, "selector": {"matchLabels": selector(name)}},
        },
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta,
            "spec": {
                "podSelector": {"matchLabels": selector(name)},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchExpressions": [
                                        {
                                            "key": "kubernetes.io/metadata.name",
                                            "operator": "In",
                                            "values": client_namespaces,
                                        }
                                    ]
                                },
                                "podSelector": {
                                    "matchLabels": {STORAGE_LABEL: name},
                                    "matchExpressions": [
                                        {"key": "ray.io/node-type", "operator": "In", "values": REDIS_CLIENT_NODE_TYPES}
                                    ],
                                },
                            }
                        ],
                        "ports": [{"protocol": "TCP", "port": REDIS_PORT}],
                    }
                ],
            },
        },
    ]


@dataclass(frozen=True)
class RedisManifests:
    """One in-cluster Redis: its objects, and where the stack creates its password Secret."""

    name: str
    namespace: str
    objects: list[dict[str, Any]]
    password_config: str | None
    """The Pulumi config secret the password comes from; None when an existing Secret is named."""
    secret_namespaces: list[str]
    """The Redis namespace and every client namespace: each needs the password Secret (a
    secretKeyRef only reads its own namespace)."""
    secret: tuple[str, str]
    """(name, key) of the password Secret in each of those namespaces."""


def redis_manifests(name: str, spec: InClusterRedis, environment: str, clients: dict[str, list[str]]) -> RedisManifests:
    secret = password_secret(name, spec)
    return RedisManifests(
        name=name,
        namespace=spec.namespace,
        objects=redis_objects(name, spec, environment, secret, clients),
        password_config=spec.password.config,
        secret_namespaces=password_namespaces(spec, clients),
        secret=secret,
    )
