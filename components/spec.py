"""The platform intent for one environment: typed, validated, and the only home of defaults.

A stack file (``stacks/Pulumi.<stack>.yaml``) holds one structured key, ``kuberay-platform:platform``,
which is parsed into :class:`PlatformSpec`. Unknown keys are rejected; every default below says its
unit and why it is what it is. Nothing here imports Pulumi: the offline engine, the policy rules and
the tests use these models directly.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from components.errors import ConfigError

# --- Pinned upstream versions (DESIGN.md section 4) -------------------------------------------

CONFIG_KEY = "platform"
"""The stack config key (``kuberay-platform:platform``) that holds the whole spec."""

KUBERAY_VERSION = "1.7.0"
KUBERAY_CHART_REPO = "https://ray-project.github.io/kuberay-helm/"
RAY_VERSION = "2.60.0"

FEATURE_GATES: dict[str, bool] = {
    # Beta in KubeRay 1.7.0: on unless overridden.
    "RayClusterStatusConditions": True,
    "RayJobDeletionPolicy": True,
    "RayMultiHostIndexing": True,
    "RayServiceIncrementalUpgrade": True,
    # Alpha in KubeRay 1.7.0: off unless a workload uses the field that needs it, or overridden.
    "RayCronJob": False,
    "SidecarSubmitterRestart": False,
    "RayClusterNetworkPolicy": False,
    "GCSFaultToleranceEmbeddedStorage": False,
    "RayClusterMTLS": False,
    "RayClusterHistoryServer": False,
    "KubernetesWAS": False,
}
"""Every operator feature gate of KubeRay 1.7.0 with its upstream default. Helm replaces lists,
so the chart always receives all of them."""

FeatureGate = Literal[
    "RayClusterStatusConditions",
    "RayJobDeletionPolicy",
    "RayMultiHostIndexing",
    "RayServiceIncrementalUpgrade",
    "RayCronJob",
    "SidecarSubmitterRestart",
    "RayClusterNetworkPolicy",
    "GCSFaultToleranceEmbeddedStorage",
    "RayClusterMTLS",
    "RayClusterHistoryServer",
    "KubernetesWAS",
]

# --- Scalar types -----------------------------------------------------------------------------

PATTERN_HINTS: dict[str, str] = {}
"""pattern -> what a user should write, for error messages."""


def _pattern(regex: str, hint: str) -> Any:
    PATTERN_HINTS[regex] = hint
    return Field(pattern=regex)


K8sName = Annotated[
    str, _pattern(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", "a DNS-1123 label: a-z, 0-9 and '-', at most 63")
]
Quantity = Annotated[
    str,
    _pattern(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$", "a Kubernetes quantity such as 500m, 4, 16Gi"),
]
Duration = Annotated[str, _pattern(r"^[0-9]+(ms|s|m|h)$", "a duration such as 30s or 5m")]
SemVer = Annotated[str, _pattern(r"^\d+\.\d+\.\d+$", "a version such as 2.60.0")]
MinorVersion = Annotated[str, _pattern(r"^1\.\d+$", 'a Kubernetes minor version such as "1.33" (quoted)')]
ImageTag = Annotated[str, _pattern(r"^[\w][\w.-]{0,127}$", "an image tag such as v1.7.0")]
Environment = Literal["dev", "staging", "prod"]


class Model(BaseModel):
    """Base of every spec model: camelCase keys as in Kubernetes, unknown keys rejected."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
    )


# --- Operator ---------------------------------------------------------------------------------


class ImageRef(Model):
    repository: str
    tag: ImageTag


class Resources(Model):
    """Container requests and limits. Ray containers get requests equal to limits (Guaranteed QoS),
    as KubeRay recommends, so the scheduler and Ray agree on what a pod really has."""

    cpu: Quantity
    memory: Quantity


class OperatorResources(Model):
    requests: Resources
    limits: Resources


class ScaleProfile(Model):
    reconcile_concurrency: int = Field(ge=1)
    kube_client_qps: float = Field(gt=0)
    kube_client_burst: int = Field(ge=1)
    resources: OperatorResources


SCALE_PROFILES: dict[str, ScaleProfile] = {
    # Chart defaults: one reconcile at a time, 100 QPS / 200 burst. The chart notes that about 500
    # Ray pods need roughly 500 MB of operator memory, so 512Mi covers a small platform.
    "small": ScaleProfile(
        reconcile_concurrency=1,
        kube_client_qps=100.0,
        kube_client_burst=200,
        resources=OperatorResources(
            requests=Resources(cpu="100m", memory="512Mi"),
            limits=Resources(cpu="500m", memory="512Mi"),
        ),
    ),
    # KubeRay v1.5 scale test: 100 RayClusters with 10,000 pods created in 3m20s with
    # reconcileConcurrency 20, kubeClient.qps 100, kubeClient.burst 200 (seeds ch. 8.10). Memory
    # follows the chart's ~1 MB per Ray pod; CPU is raised so 20 reconcilers are not throttled.
    "large": ScaleProfile(
        reconcile_concurrency=20,
        kube_client_qps=100.0,
        kube_client_burst=200,
        resources=OperatorResources(
            requests=Resources(cpu="1", memory="10Gi"),
            limits=Resources(cpu="4", memory="10Gi"),
        ),
    ),
}


class ServiceMonitorSpec(Model):
    enabled: bool = False
    """Off by default: it needs the prometheus-operator CRDs in the cluster."""
    interval: Duration = "30s"
    """Prometheus scrape interval (the chart's default)."""
    labels: dict[str, str] = {}
    """Extra labels, e.g. ``release: prometheus`` so a Prometheus selector picks it up."""


class OperatorSpec(Model):
    namespace: K8sName = "kuberay-system"
    chart_version: Literal["1.7.0"] = "1.7.0"
    """Pinned: the CRDs in ``../shared/crds/kuberay`` and every value below are for this version."""
    chart_repository: str = KUBERAY_CHART_REPO
    image: ImageRef = ImageRef(repository="quay.io/kuberay/operator", tag=f"v{KUBERAY_VERSION}")
    replicas: int = Field(default=1, ge=1, le=3)
    """Operator pods; more than one only adds a standby (leader election is on)."""
    watch_namespaces: list[K8sName] | None = None
    """Multi-tenant mode: when set, the operator gets namespaced RBAC and watches only these."""
    scale: Literal["small", "large"] = "small"
    """``small``: chart defaults, up to ~500 Ray pods. ``large``: ~100 RayClusters / 10,000 pods."""
    reconcile_concurrency: int | None = Field(default=None, ge=1, le=100)
    """Overrides the scale profile's concurrent reconciles."""
    kube_client_qps: float | None = Field(default=None, gt=0)
    kube_client_burst: int | None = Field(default=None, ge=1)
    resources: OperatorResources | None = None
    """Overrides the scale profile's operator requests/limits."""
    feature_gates: dict[FeatureGate, bool] = {}
    """Explicit overrides; alpha gates are otherwise derived from what the workloads use."""
    service_monitor: ServiceMonitorSpec = ServiceMonitorSpec()
    extra_values: dict[str, Any] = {}
    """Escape hatch: raw chart values merged last. Every key must exist in the chart's values."""

    @property
    def profile(self) -> ScaleProfile:
        return SCALE_PROFILES[self.scale]


# --- Workloads --------------------------------------------------------------------------------


class RayImage(Model):
    repository: str = "rayproject/ray"
    python: Literal["py310", "py311", "py312"] = "py311"
    """Python flavour of the official image; the tag is ``<rayVersion>-<python>``."""

    def reference(self, ray_version: str) -> str:
        return f"{self.repository}:{ray_version}-{self.python}"


class HeadSpec(Model):
    resources: Resources = Resources(cpu="2", memory="8Gi")
    """The head runs GCS, the dashboard and the autoscaler, never tasks: 2 CPU / 8Gi is Ray's
    production guidance for a head that schedules no work."""
    node_selector: dict[str, str] = {}


class WorkerGroupSpec(Model):
    name: K8sName
    min_replicas: int = Field(default=0, ge=0)
    """Training scales from zero; serving keeps a floor."""
    max_replicas: int = Field(ge=1)
    replicas: int | None = Field(default=None, ge=0)
    """Initial replicas; defaults to ``minReplicas``."""
    resources: Resources = Resources(cpu="4", memory="16Gi")
    node_selector: dict[str, str] = {}

    @model_validator(mode="after")
    def _bounds(self) -> WorkerGroupSpec:
        if self.max_replicas < self.min_replicas:
            raise ValueError(f"maxReplicas: must be >= minReplicas (got {self.max_replicas} < {self.min_replicas})")
        if self.replicas is not None and not self.min_replicas <= self.replicas <= self.max_replicas:
            raise ValueError(
                f"replicas: must be between minReplicas and maxReplicas "
                f"(got {self.replicas}, range {self.min_replicas}..{self.max_replicas})"
            )
        return self

    @property
    def initial_replicas(self) -> int:
        return self.min_replicas if self.replicas is None else self.replicas


class AutoscalerSpec(Model):
    version: Literal["v1", "v2"] = "v2"
    """Autoscaler v2 is the production choice (seeds ch. 8.4)."""
    idle_timeout_seconds: int = Field(default=60, ge=0)
    """Seconds an idle worker lives before scale-down (Ray's default)."""
    upscaling_mode: Literal["Default", "Aggressive", "Conservative"] = "Default"


class SecretKeyRef(Model):
    name: K8sName
    key: str = "password"


class GcsFaultToleranceSpec(Model):
    """GCS fault tolerance: ``rocksdb`` (embedded, on a PVC the operator provisions; alpha gate
    GCSFaultToleranceEmbeddedStorage) or ``redis`` (a standalone Redis; password from a Secret)."""

    backend: Literal["redis", "rocksdb"]
    storage_size: Quantity = "1Gi"
    """rocksdb only: size of the operator-provisioned PVC."""
    retain_storage: bool = True
    """rocksdb only: keep the PVC when the cluster is deleted (``deletionPolicy: Retain``)."""
    redis_address: str | None = None
    """redis only: ``host:port`` of a standalone Redis (KubeRay does not support Redis Cluster)."""
    redis_password_secret: SecretKeyRef | None = None
    external_storage_namespace: str | None = None
    """redis only: key prefix; must differ between clusters sharing one Redis."""

    @model_validator(mode="after")
    def _backend_fields(self) -> GcsFaultToleranceSpec:
        if self.backend == "redis" and not self.redis_address:
            raise ValueError("redisAddress: required for backend redis (host:port of a standalone Redis)")
        if self.backend == "rocksdb" and (self.redis_address or self.redis_password_secret):
            raise ValueError("backend: redisAddress/redisPasswordSecret apply to backend redis, not rocksdb")
        return self


class RayClusterSpec(Model):
    name: K8sName
    namespace: K8sName
    ray_version: SemVer = RAY_VERSION
    image: RayImage = RayImage()
    head: HeadSpec = HeadSpec()
    worker_groups: list[WorkerGroupSpec] = Field(min_length=1)
    autoscaler: AutoscalerSpec = AutoscalerSpec()
    auth: Literal["token", "disabled"] = "token"
    """Token auth (Ray 2.52+): the operator creates the token Secret. Set explicitly either way."""
    gcs_fault_tolerance: GcsFaultToleranceSpec | None = None
    network_policy: Literal["DenyAll", "DenyAllIngress", "DenyAllEgress"] | None = None
    """Operator-managed NetworkPolicy (alpha gate RayClusterNetworkPolicy); DNS egress is yours."""
    mtls: bool = False
    """Operator-issued mTLS between Ray pods (alpha gate RayClusterMTLS; needs cert-manager)."""

    @model_validator(mode="after")
    def _unique_groups(self) -> RayClusterSpec:
        names = [g.name for g in self.worker_groups]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"workerGroups: names must be unique (repeated: {', '.join(dupes)})")
        return self


class WorkloadsSpec(Model):
    ray_clusters: list[RayClusterSpec] = []


# --- The whole platform -----------------------------------------------------------------------


class PlatformSpec(Model):
    environment: Environment
    kubernetes_version: MinorVersion = "1.33"
    """The cluster's minor version; emitted objects are validated against its schemas."""
    operator: OperatorSpec = OperatorSpec()
    workloads: WorkloadsSpec = WorkloadsSpec()


def cross_check(spec: PlatformSpec) -> list[tuple[str, str]]:
    """Rules that span sections of the spec, as (key path, message) pairs."""
    problems: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    watched = spec.operator.watch_namespaces
    for i, rc in enumerate(spec.workloads.ray_clusters):
        path = f"workloads.rayClusters[{i}]"
        if (rc.namespace, rc.name) in seen:
            problems.append((f"{path}.name", f"duplicate RayCluster {rc.namespace}/{rc.name}"))
        seen.add((rc.namespace, rc.name))
        if watched is not None and rc.namespace not in watched:
            problems.append(
                (
                    f"{path}.namespace",
                    f"{rc.namespace!r} is not watched by the operator; add it to "
                    f"operator.watchNamespaces (now {watched})",
                )
            )
    return problems


# --- Parsing with user-facing errors ----------------------------------------------------------


def parse_platform(data: Any, source: str) -> PlatformSpec:
    """Validate ``data`` (the value of ``kuberay-platform:platform``) read from ``source``.

    Raises :class:`ConfigError` with one line per problem:
    ``<source>: platform.<key path>: <what is expected>``.
    """
    if not isinstance(data, Mapping):
        raise ConfigError([f"{source}: {CONFIG_KEY}: expected a mapping, got {type(data).__name__}"])
    try:
        spec = PlatformSpec.model_validate(data)
    except ValidationError as exc:
        raise ConfigError([f"{source}: {line}" for line in describe_errors(exc, PlatformSpec)]) from None
    problems = cross_check(spec)
    if problems:
        raise ConfigError([f"{source}: {CONFIG_KEY}.{path}: {msg}" for path, msg in problems])
    return spec


def describe_errors(exc: ValidationError, root: type[BaseModel]) -> list[str]:
    lines = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        path = format_path((CONFIG_KEY, *loc))
        kind = err["type"]
        if loc and loc[-1] == "[key]":  # a map key that is not one of the allowed names
            lines.append(f"{path}: unknown key; {err['msg'].replace('Input should be', 'expected')}")
        elif kind == "string_pattern_mismatch":
            hint = PATTERN_HINTS.get(str((err.get("ctx") or {}).get("pattern")), err["msg"])
            lines.append(f"{path}: expected {hint} (got {_short(err.get('input'))})")
        elif kind == "extra_forbidden":
            allowed = _allowed_keys(root, loc[:-1])
            hint = ""
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
            lines.append(f"{path}: unknown key{hint} (expected one of: {', '.join(allowed)})")
        elif kind == "missing":
            lines.append(f"{path}: required key is missing")
        elif kind == "value_error":
            msg = err["msg"].removeprefix("Value error, ")
            field = re.match(r"^(\w+): (.*)$", msg)
            if field:  # validators name the key they judge: "maxReplicas: must be ..."
                path, msg = f"{path}.{field.group(1)}", field.group(2)
            lines.append(f"{path}: {msg}")
        else:
            lines.append(f"{path}: {err['msg']} (got {_short(err.get('input'))})")
    return lines


def format_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[key]" or re.match(r"^(function-after|function-before|literal|union|tagged-union)\[", str(part)):
            continue  # pydantic's internal validator steps, not keys the user wrote
        else:
            out += f".{part}" if out else str(part)
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _allowed_keys(root: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The aliases accepted by the model found at ``loc`` (walking fields, lists and dicts)."""
    model: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return []
        field = next(
            (f for n, f in model.model_fields.items() if part in (n, f.alias)),
            None,
        )
        if field is None:
            return []
        model = _model_in(field.annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(f.alias or n for n, f in model.model_fields.items())
    return []


def _model_in(annotation: Any) -> Any:
    """The BaseModel class inside an annotation such as ``list[X] | None``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None
