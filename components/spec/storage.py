"""GCS fault-tolerance storage the platform provides to its Ray clusters (``platform.gcsStorage``).

Each entry is named and referenced by workloads (``gcsFaultTolerance: {backend: redis, storage:
<name>}``): an in-cluster standalone Redis the stack creates, or an external managed Redis it only
points at. RocksDB needs no entry (``backend: rocksdb`` on the workload: a PVC per cluster).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import Field, model_validator

from components.spec.base import ImageTag, K8sName, Model, Quantity, Resources

# The Redis the durability test runs (Debian bookworm's redis-server): the image is pinned to the
# same release, so the tested configuration is the deployed one.
REDIS_VERSION = "7.0.15"
CONFIG_KEY_PATTERN = r"^[A-Za-z][A-Za-z0-9_.-]*$"
SAVE_RULE = re.compile(r"^[1-9][0-9]* [1-9][0-9]*$")


class SecretKeyRef(Model):
    name: K8sName
    key: str = "password"


class ConfigOrSecret(Model):
    """A credential: exactly one of ``config``, a Pulumi config secret of this project (``pulumi config
    set --secret kuberay-platform:<key> ...``) from which the stack creates a Secret, or ``secret``, an
    existing Secret of that name and key (an external prerequisite). Never the value itself."""

    config: Annotated[str, Field(pattern=CONFIG_KEY_PATTERN)] | None = None
    secret: SecretKeyRef | None = None

    @model_validator(mode="after")
    def _one(self) -> ConfigOrSecret:
        if (self.config is None) == (self.secret is None):
            raise ValueError("set exactly one of config (a Pulumi config secret key) or secret (an existing Secret)")
        return self


class RedisPassword(ConfigOrSecret):
    """The Redis password: from ``config``, the stack creates the password Secret in the Redis
    namespace and in every client namespace; a ``secret`` must exist in all of them."""


class RedisImage(Model):
    repository: str = "redis"
    tag: ImageTag = REDIS_VERSION
    digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _pinned(self) -> RedisImage:
        if self.tag in ("latest", "7", "7.0", "alpine") and self.digest is None:
            raise ValueError(f"tag {self.tag!r} moves: pin an exact release tag (e.g. {REDIS_VERSION}) or a digest")
        return self

    def reference(self) -> str:
        return f"{self.repository}:{self.tag}" + (f"@{self.digest}" if self.digest else "")


class InClusterRedis(Model):
    """A standalone Redis the stack runs: StatefulSet with a PVC, AOF (``appendfsync``) plus RDB
    snapshots (``snapshotSchedule``), ``requirepass`` from ``password``, an authenticated readiness
    probe, a PodDisruptionBudget, a NetworkPolicy admitting only the Ray heads of its clients (and
    KubeRay's cleanup Job), a headless Service. Protected and retained in prod."""

    type: Literal["redis"]
    namespace: K8sName
    password: RedisPassword
    image: RedisImage = RedisImage()
    storage_size: Quantity = "10Gi"
    storage_class: str | None = None
    """The PVC's StorageClass (default: the cluster's). Block storage; not an object-store FUSE
    mount, which cannot append (KubeRay's persistent-redis sample)."""
    resources: Resources = Resources(cpu="1", memory="2Gi")
    """Requests equal limits. ``maxmemory`` is 80% of the memory limit, leaving room for the AOF
    rewrite's fork; with ``noeviction`` a full Redis refuses writes rather than losing GCS state."""
    appendfsync: Literal["everysec", "always"] = "everysec"
    """``everysec``: at most about a second of acknowledged writes lost on a crash."""
    snapshot_schedule: list[str] = ["3600 1", "300 100", "60 10000"]
    """RDB ``save <seconds> <changes>`` rules: a snapshot after that many seconds if that many keys
    changed. The backup to copy off the volume (see the runbook)."""

    @model_validator(mode="after")
    def _save_rules(self) -> InClusterRedis:
        bad = [r for r in self.snapshot_schedule if not SAVE_RULE.match(r)]
        if bad:
            raise ValueError(f"snapshotSchedule: {bad[0]!r} is not '<seconds> <changes>' (e.g. '300 100')")
        if not self.snapshot_schedule:
            raise ValueError("snapshotSchedule: at least one rule (RDB snapshots are the backups)")
        return self


class ExternalRedis(Model):
    """A managed Redis (ElastiCache, Memorystore, ...) the stack does not run: standalone or a
    primary endpoint, not Redis Cluster mode."""

    type: Literal["external"]
    address: Annotated[str, Field(pattern=r"^[A-Za-z0-9.-]+:[0-9]{1,5}$")]
    """``host:port``."""
    tls: bool = False
    """Connect with TLS (``rediss://``). Ray verifies the server certificate against the system CAs
    unless ``caSecret`` names a Secret with the CA (mounted into the head, ``RAY_REDIS_CA_CERT``)."""
    ca_secret: SecretKeyRef | None = None
    username: SecretKeyRef | None = None
    """A Secret key holding the ACL user name, when the Redis uses ACL users (Ray >= 2.41)."""
    password_secret: SecretKeyRef
    """An existing Secret in every client namespace (an external prerequisite)."""

    @model_validator(mode="after")
    def _tls(self) -> ExternalRedis:
        if self.ca_secret is not None and not self.tls:
            raise ValueError("caSecret: applies with tls: true")
        return self


GcsStorage = Annotated[InClusterRedis | ExternalRedis, Field(discriminator="type")]


def password_secret_name(storage: str) -> str:
    """The Secret the stack creates (in the Redis namespace and each client's) from a config secret."""
    return f"{storage}-redis-password"


def password_secret(storage: str, redis: InClusterRedis) -> tuple[str, str]:
    """(name, key) of the password Secret a Redis and its clients read: the existing Secret named in
    ``password.secret``, or the one the stack creates from ``password.config``."""
    if redis.password.secret is not None:
        return redis.password.secret.name, redis.password.secret.key
    return password_secret_name(storage), "password"


def password_namespaces(redis: InClusterRedis, client_namespaces: Iterable[str]) -> list[str]:
    """Where a Redis's password Secret must exist: its own namespace and every client namespace (a
    ``secretKeyRef`` reads only the pod's own namespace)."""
    return sorted({redis.namespace, *client_namespaces})
