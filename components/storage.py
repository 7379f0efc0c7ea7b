"""GcsStorage: one in-cluster Redis for GCS fault tolerance, with its password Secrets.

The password comes from a Pulumi config secret (``pulumi config set --secret kuberay-platform:<key>``)
and becomes a Secret in the Redis namespace and in every client namespace (a ``secretKeyRef`` reads
only its own namespace); or the stack names an existing Secret, which must then exist in all of
them. In prod the StatefulSet and the password Secret in the Redis namespace are protected and retained
on delete, and the PVC outlives the StatefulSet (``persistentVolumeClaimRetentionPolicy: Retain``).
The copies in client namespaces come and go with the workloads that use them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.manifests.redis import RedisManifests, address
from components.stack_config import config_secret

GCS_STORAGE_TYPE = "kuberay-platform:index:GcsStorage"

_RESOURCES: dict[str, Callable[..., pulumi.CustomResource]] = {
    "ConfigMap": k8s.core.v1.ConfigMap,
    "Service": k8s.core.v1.Service,
    "StatefulSet": k8s.apps.v1.StatefulSet,
    "PodDisruptionBudget": k8s.policy.v1.PodDisruptionBudget,
    "NetworkPolicy": k8s.networking.v1.NetworkPolicy,
}
STATEFUL = {"Secret", "StatefulSet"}
"""Kinds that hold durable state or the credential Redis runs with: protected and retained in prod
(in the Redis namespace)."""


@dataclass(frozen=True)
class GcsStorageArgs:
    redis: RedisManifests
    protect: bool
    """Protect and retain the StatefulSet and Secrets (prod)."""
    after: list[pulumi.Resource] = field(default_factory=list)
    """The namespaces the objects live in."""


def password(key: str) -> pulumi.Output[str]:
    """The Redis password from the stack's config secret; a clear one-line error when it is missing."""
    return config_secret(key, "the Redis password")


class GcsStorage(pulumi.ComponentResource):
    def __init__(self, name: str, args: GcsStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(GCS_STORAGE_TYPE, name, None, opts)
        redis = args.redis

        def options(kind: str, depends_on: list[pulumi.Resource], namespace: str) -> pulumi.ResourceOptions:
            # Durable: the StatefulSet (its PVC outlives it anyway) and the password Secret Redis itself
            # reads; the clients' copies follow the workloads that use them.
            durable = args.protect and kind in STATEFUL and namespace == redis.namespace
            return pulumi.ResourceOptions(
                parent=self, depends_on=depends_on, protect=durable, retain_on_delete=durable or None
            )

        self.secrets: list[k8s.core.v1.Secret] = []
        if redis.password_config is not None:
            value = password(redis.password_config)
            secret_name, secret_key = redis.secret
            for ns in redis.secret_namespaces:
                self.secrets.append(
                    k8s.core.v1.Secret(
                        f"{name}-password-{ns}",
                        metadata={
                            "name": secret_name,
                            "namespace": ns,
                            "labels": {
                                "app.kubernetes.io/component": "gcs-storage",
                                "app.kubernetes.io/part-of": "kuberay-platform",
                                "app.kubernetes.io/managed-by": "pulumi",
                            },
                        },
                        type="Opaque",
                        string_data={secret_key: value},
                        opts=options("Secret", args.after, ns),
                    )
                )
        self.resources: list[pulumi.CustomResource] = []
        for obj in redis.objects:
            body: dict[str, Any] = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
            create = _RESOURCES[obj["kind"]]
            self.resources.append(
                create(
                    f"{name}-{obj['kind'].lower()}",
                    **body,
                    opts=options(obj["kind"], [*args.after, *self.secrets], redis.namespace),
                )
            )
        self.address = address(redis.name, redis.namespace)
        self.register_outputs({"address": self.address})
