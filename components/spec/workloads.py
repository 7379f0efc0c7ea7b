"""Ray workloads: hardware pools, RayClusters, RayJobs (and RayCronJobs) and RayServices.

Each workload is one embedded Ray cluster plus what its kind adds. Worker groups name a pool, so
every group holds one kind of hardware and its accelerator resources and ``rayStartParams`` are
derived together. Autoscaling profiles give training and serving their defaults; any field set on
a workload wins.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import Discriminator, Field, GetJsonSchemaHandler, Tag, model_validator
from pydantic.json_schema import JsonSchemaValue

from components.spec.base import (
    RAY_VERSION,
    K8sName,
    Model,
    PlainEnv,
    Quantity,
    RayName,
    Resources,
    SemVer,
    hinted_pattern,
)
from components.spec.storage import ConfigOrSecret
from components.upstream import KUEUE_MAX_WORKER_GROUPS


def check_replica_bounds(min_replicas: int, max_replicas: int) -> None:
    """The one message for ``minReplicas``/``maxReplicas`` pairs (worker groups, models, deployments)."""
    if max_replicas < min_replicas:
        raise ValueError(f"maxReplicas: must be >= minReplicas (got {max_replicas} < {min_replicas})")


# --- Hardware pools ---------------------------------------------------------------------------


class Toleration(Model):
    key: str
    operator: Literal["Exists", "Equal"] = "Exists"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = "NoSchedule"


class CpuPool(Model):
    """Nodes without accelerators."""

    type: Literal["cpu"]
    node_selector: dict[str, str] = {}
    tolerations: list[Toleration] = []


GPU_PRODUCT_LABELS = {
    "generic": "nvidia.com/gpu.product",
    "gke": "cloud.google.com/gke-accelerator",
    "eks": "karpenter.k8s.aws/instance-gpu-name",
}
GPU_PRODUCT_PATTERNS = {
    "generic": r"^(NVIDIA|Tesla|Quadro)-[A-Za-z0-9-]+$",
    "gke": r"^nvidia-[a-z0-9-]+$",
    "eks": r"^[a-z0-9][a-z0-9-]*$",
}
GPU_PRODUCT_EXAMPLES = {"generic": "NVIDIA-A100-SXM4-80GB", "gke": "nvidia-tesla-a100", "eks": "a100"}


class GpuPool(Model):
    """NVIDIA GPU nodes. Each pod gets ``gpusPerPod`` GPUs (``nvidia.com/gpu``); Ray's ``num-gpus``
    follows from it."""

    type: Literal["gpu"]
    gpus_per_pod: int = Field(default=1, ge=1, le=16)
    platform: Literal["generic", "gke", "eks"] = "generic"
    """Whose node labels pin the GPU model: ``generic`` NVIDIA GPU Feature Discovery's
    ``nvidia.com/gpu.product`` (``NVIDIA-A100-SXM4-80GB``; it exists only where GFD runs), ``gke``
    ``cloud.google.com/gke-accelerator`` (``nvidia-tesla-a100``, ``nvidia-a100-80gb``, ``nvidia-l4``),
    ``eks`` Karpenter's ``karpenter.k8s.aws/instance-gpu-name`` (``a100``, ``h100``, ``l4``). GKE's
    and Karpenter's are the labels their scale-from-zero provisioning knows."""
    product: str | None = None
    """The GPU model in the platform's label vocabulary (see ``platform``)."""
    product_label: str | None = None
    """Overrides the label ``platform`` picks."""
    node_selector: dict[str, str] = {}
    tolerations: list[Toleration] = [Toleration(key="nvidia.com/gpu")]
    """GPU nodes are usually tainted so CPU work stays off them; GPU pods tolerate the taint."""
    cuda: Literal["gpu", "cu121", "cu124", "cu125", "cu128"] = "gpu"
    """Ray image variant: ``<rayVersion>-<python>-gpu`` (Ray's default CUDA) or a pinned CUDA."""
    accelerator_type: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    """Ray's name for these GPUs (``A100``, ``H100``, ``L4``), advertised as the resource
    ``accelerator_type:<type>`` so the autoscaler can scale for work that asks for it (Ray Serve
    LLM's ``accelerator_type`` puts it in every placement bundle; Ray's KubeRay autoscaling config
    builder sees only resources the group declares). Default: read from ``product``
    (``NVIDIA-A100-SXM4-80GB`` and ``nvidia-tesla-a100`` give ``A100``)."""

    @property
    def selector_label(self) -> str:
        return self.product_label or GPU_PRODUCT_LABELS[self.platform]

    @model_validator(mode="after")
    def _product_in_platform_vocabulary(self) -> GpuPool:
        pattern = GPU_PRODUCT_PATTERNS[self.platform]
        if self.product is not None and self.product_label is None and not re.match(pattern, self.product):
            raise ValueError(
                f"product: {self.product!r} is not a {self.platform} value of {self.selector_label} "
                f"(e.g. {GPU_PRODUCT_EXAMPLES[self.platform]}); fix it or set platform"
            )
        return self

    @property
    def ray_accelerator_type(self) -> str | None:
        if self.accelerator_type is not None:
            return self.accelerator_type
        if self.product is None:
            return None
        model = re.sub(r"^(nvidia-)?(tesla-)?", "", self.product, flags=re.IGNORECASE).split("-")[0]
        return model.upper() or None


class TpuPool(Model):
    """A GKE TPU slice: ``topology`` chips, ``chipsPerHost`` per VM; a slice of more than one host
    is a multi-host worker group (``numOfHosts``)."""

    type: Literal["tpu"]
    accelerator: str = Field(min_length=1)
    """``cloud.google.com/gke-tpu-accelerator``, e.g. ``tpu-v6e-slice``."""
    topology: str = Field(pattern=r"^\d+(x\d+){1,2}$")
    """``cloud.google.com/gke-tpu-topology``, e.g. ``4x4`` (16 chips)."""
    chips_per_host: int = Field(default=4, ge=1, le=8)
    node_selector: dict[str, str] = {}
    tolerations: list[Toleration] = [Toleration(key="google.com/tpu")]

    @property
    def chips(self) -> int:
        return math.prod(int(d) for d in self.topology.split("x"))

    @property
    def hosts(self) -> int:
        return max(1, self.chips // self.chips_per_host)

    @model_validator(mode="after")
    def _whole_hosts(self) -> TpuPool:
        if self.chips > self.chips_per_host and self.chips % self.chips_per_host:
            raise ValueError(
                f"topology: {self.topology} has {self.chips} chips, "
                f"not a multiple of chipsPerHost {self.chips_per_host}"
            )
        return self


Pool = Annotated[CpuPool | GpuPool | TpuPool, Field(discriminator="type")]
DEFAULT_POOLS: dict[str, CpuPool | GpuPool | TpuPool] = {"cpu": CpuPool(type="cpu")}


# --- Autoscaling profiles ---------------------------------------------------------------------


class AutoscalingProfile(Model):
    min_replicas: int
    upscaling_mode: Literal["Default", "Aggressive", "Conservative"]
    idle_timeout_seconds: int


PROFILES: dict[str, AutoscalingProfile] = {
    # Training has a start and an end: scale from zero, add nodes cautiously, keep idle nodes a
    # while so a job's next stage does not wait for new pods (seeds ch. 8.4, 9.4).
    "training": AutoscalingProfile(min_replicas=0, upscaling_mode="Conservative", idle_timeout_seconds=300),
    # Serving needs a floor for latency and redundancy, reacts fast, and gives idle capacity back
    # quickly (seeds ch. 9.4: min 2, Aggressive, 60 s).
    "serving": AutoscalingProfile(min_replicas=2, upscaling_mode="Aggressive", idle_timeout_seconds=60),
}
Profile = Literal["training", "serving"]


class AutoscalerSpec(Model):
    """Overrides of the profile; unset fields come from it."""

    enabled: bool | None = None
    """In-tree autoscaling. Default: on for RayClusters and RayServices; off for RayJobs, whose
    cluster runs at a fixed size (``replicas``, else ``maxReplicas``) for the job's lifetime."""
    version: Literal["v1", "v2"] = "v2"
    """Autoscaler v2 is the production choice (seeds ch. 8.4)."""
    idle_timeout_seconds: int | None = Field(default=None, ge=0)
    upscaling_mode: Literal["Default", "Aggressive", "Conservative"] | None = None


# --- Cluster building blocks ------------------------------------------------------------------


RAY_IMAGE = "rayproject/ray"
RAY_LLM_IMAGE = "rayproject/ray-llm"
"""Ray Serve LLM needs vLLM: the official ray-llm image has it (tags ``<ray>-<py>-cuXXX`` only)."""
RAY_LLM_DEFAULT_CUDA = "cu128"


class RayImage(Model):
    repository: str | None = None
    """Default: ``rayproject/ray``, or ``rayproject/ray-llm`` for services with LLM apps."""
    python: Literal["py310", "py311", "py312"] = "py311"
    """Python flavour of the official image; the tag is ``<rayVersion>-<python>[-gpu|-cuXXX]``."""
    tag: str | None = Field(default=None, pattern=r"^[\w][\w.-]{0,127}$")
    """A custom image's tag (dependencies baked in); it should start with ``rayVersion``."""
    digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    """Pins the exact image bytes (``repository:tag@sha256:...``)."""
    run_as_user: int = Field(default=1000, ge=1)
    """The image's non-root user id: Ray's images run as ``ray``, uid 1000. Pods run as it
    (``runAsNonRoot`` needs a number: the kubelet cannot check a user name)."""
    fs_group: int = Field(default=100, ge=0)
    """The group that owns mounted volumes (Ray's images: ``users``, gid 100)."""

    def reference(self, ray_version: str, variant: str | None = None, llm: bool = False) -> str:
        repository = self.repository or (RAY_LLM_IMAGE if llm else RAY_IMAGE)
        if llm and repository == RAY_LLM_IMAGE and variant in (None, "gpu"):
            variant = RAY_LLM_DEFAULT_CUDA
        tag = self.tag or f"{ray_version}-{self.python}" + (f"-{variant}" if variant else "")
        return f"{repository}:{tag}" + (f"@{self.digest}" if self.digest else "")


class IngressSpec(Model):
    """The head's dashboard through ``headGroupSpec.ingressOptions`` (KubeRay 1.7)."""

    host: str = Field(min_length=1)
    path: str = "/"
    path_type: Literal["Exact", "Prefix", "ImplementationSpecific"] = "Prefix"
    tls_secret: K8sName | None = None
    """An existing TLS Secret for ``host``; TLS is on when set (or with ``certificate``)."""
    certificate: bool = False
    """cert-manager issues the host's certificate (``platform.certManager``'s ingress issuer) into
    ``tlsSecret``, default ``<workload>-dashboard-tls``."""
    class_name: str | None = Field(default=None, min_length=1)
    """The ingress class (``kubernetes.io/ingress.class`` on the workload: KubeRay makes it the
    Ingress's ``ingressClassName``). ``nginx`` adds the dashboard's ingress-nginx annotations (long
    websocket timeouts, 512m uploads, 16k buffers)."""


class HeadSpec(Model):
    resources: Resources = Resources(cpu="2", memory="8Gi")
    """The head runs GCS, the dashboard and the autoscaler, never tasks: 2 CPU / 8Gi is Ray's
    production guidance for a head that schedules no work."""
    node_selector: dict[str, str] = {}
    ingress: IngressSpec | None = None


class WorkerGroupSpec(Model):
    name: K8sName
    pool: K8sName = "cpu"
    """The hardware pool (``workloads.pools``) the group runs on: one kind of hardware per group."""
    min_replicas: int | None = Field(default=None, ge=0)
    """Defaults to the workload's profile: 0 for training, 2 for serving. For a multi-host TPU
    pool a replica is a whole slice."""
    max_replicas: int = Field(ge=1)
    replicas: int | None = Field(default=None, ge=0)
    """Initial replicas; defaults to ``minReplicas``."""
    resources: Resources = Resources(cpu="4", memory="16Gi")
    """CPU and memory per pod; accelerators come from the pool."""
    idle_timeout_seconds: int | None = Field(default=None, ge=0)
    """Overrides the cluster's idle timeout for this group."""

    def floor(self, profile: Profile) -> int:
        return PROFILES[profile].min_replicas if self.min_replicas is None else self.min_replicas

    def initial(self, profile: Profile, autoscaled: bool = True) -> int:
        """Replicas at creation: the floor when the autoscaler grows the group, the full size when
        nothing would (a fixed-size job cluster)."""
        if self.replicas is not None:
            return self.replicas
        return self.floor(profile) if autoscaled else self.max_replicas

    @model_validator(mode="after")
    def _bounds(self) -> WorkerGroupSpec:
        if self.min_replicas is not None:
            check_replica_bounds(self.min_replicas, self.max_replicas)
        low = self.min_replicas or 0
        if self.replicas is not None and not low <= self.replicas <= self.max_replicas:
            raise ValueError(
                f"replicas: must be between minReplicas and maxReplicas "
                f"(got {self.replicas}, range {low}..{self.max_replicas})"
            )
        return self


class GcsFaultToleranceSpec(Model):
    """GCS fault tolerance: ``redis`` (a ``platform.gcsStorage`` entry: the stack's in-cluster Redis
    or an external one) or ``rocksdb`` (embedded, on a PVC the operator provisions per cluster;
    alpha gate GCSFaultToleranceEmbeddedStorage). The backend of an existing cluster is immutable
    upstream: changing it replaces the object (see the preview's replacements)."""

    backend: Literal["redis", "rocksdb"]
    storage: K8sName | None = None
    """redis only: the name of a ``platform.gcsStorage`` entry."""
    external_storage_namespace: str | None = None
    """redis only: key prefix. Leave it unset: KubeRay then uses the cluster's UID, unique per
    cluster. Not allowed on RayServices, whose old and new clusters must not share state."""
    deletion_timeout_seconds: int | None = Field(default=None, ge=1)
    """redis only: how long KubeRay waits for its Redis cleanup Job when the cluster is deleted before
    it removes the finalizer anyway (annotation ``ray.io/gcs-ft-deletion-timeout``; KubeRay: 300)."""
    storage_size: Quantity = "1Gi"
    """rocksdb only: size of the operator-provisioned PVC."""
    storage_class: str | None = None
    """rocksdb only: the PVC's StorageClass (default: the cluster's)."""
    access_modes: list[Literal["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"]] = ["ReadWriteOnce"]
    """rocksdb only."""
    retain_storage: bool = True
    """rocksdb only: keep the PVC when the cluster is deleted (``deletionPolicy: Retain``; required in prod)."""

    @model_validator(mode="after")
    def _backend_fields(self) -> GcsFaultToleranceSpec:
        if self.backend == "redis" and not self.storage:
            raise ValueError("storage: required for backend redis (the name of a platform.gcsStorage entry)")
        redis_only = ("storage", "external_storage_namespace", "deletion_timeout_seconds")
        if self.backend == "rocksdb" and any(getattr(self, f) for f in redis_only):
            raise ValueError(
                "backend: storage, externalStorageNamespace and deletionTimeoutSeconds apply to backend redis"
            )
        return self


class NfsVolume(Model):
    server: str = Field(min_length=1)
    path: str = Field(pattern=r"^/")
    read_only: bool = False


class PvcVolume(Model):
    claim_name: K8sName
    read_only: bool = False
    read_write_many: bool = False
    """The claim is ReadWriteMany (e.g. a Filestore, EFS or CephFS class). A shared volume is mounted
    on the head and every worker: with the usual ReadWriteOnce classes the second pod on another node
    fails with Multi-Attach. Required (or ``readOnly`` on a ReadOnlyMany claim) when the workload has
    more than one pod; the platform does not create the claim, so it cannot see its access mode."""


class SharedVolume(Model):
    """A volume every Ray container mounts: NFS for datasets, a PVC for checkpoints."""

    name: K8sName
    mount_path: str = Field(pattern=r"^/")
    nfs: NfsVolume | None = None
    pvc: PvcVolume | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SharedVolume:
        if (self.nfs is None) == (self.pvc is None):
            raise ValueError("nfs: set exactly one of nfs or pvc")
        return self


CIDR = Annotated[str, hinted_pattern(r"^[0-9a-fA-F:.]+/\d{1,3}$", "a CIDR such as 10.0.0.1/32")]
RemoteUri = Annotated[
    str,
    hinted_pattern(
        r"^[a-z][a-z0-9+.-]*://",
        "a remote URI (s3://, gs://, https://.../code.zip); for code baked into the image use codeDir",
    ),
]


class ModeShorthand(Model):
    """A model that also takes its ``mode`` alone as a string (``networkPolicy: DenyAllIngress`` is
    ``{mode: DenyAllIngress}``), in validation and in the stack file's JSON Schema."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value

    @classmethod
    def __get_pydantic_json_schema__(cls, core: Any, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        modes = list(get_args(cls.model_fields["mode"].annotation))
        return {"anyOf": [{"type": "string", "enum": modes}, handler(core)]}


class NetworkPolicySpec(ModeShorthand):
    """KubeRay 1.7.0's managed policies allow only traffic within the cluster (and the RayJob
    submitter to the dashboard); they add no DNS egress, no operator access and no API server egress
    (``buildHeadNetworkPolicy``/``buildBaseEgressRules`` in networkpolicy_controller.go say so). The
    platform adds what a working cluster needs: the operator to the dashboard (8265; RayJobs and
    RayServices are driven through it) and a RayService's serve port (8000, proxy health), DNS to
    kube-dns, the API server for the autoscaler, and what you list here. A plain string
    (``networkPolicy: DenyAllIngress``) is short for ``{mode: ...}``."""

    mode: Literal["DenyAll", "DenyAllIngress", "DenyAllEgress"]
    clients_from: list[K8sName] = []
    """Namespaces whose pods may reach the head's client (10001) and dashboard (8265) ports."""
    serve_from: list[K8sName] = []
    """RayServices: namespaces whose pods may reach Ray Serve (8000) on the workers (and the head
    unless it is excluded from serving): the gateway's or ingress controller's. Required with an
    ingress mode on a RayService, or nothing outside it can be served."""
    metrics_from: list[K8sName] = []
    """Namespaces whose pods may scrape the metrics ports (8080 on every pod; 44217 autoscaler and
    44227 dashboard metrics on the head): Prometheus's."""
    api_server_cidrs: list[CIDR] = []
    """Egress to the Kubernetes API server's endpoints (``kubectl get endpoints kubernetes``): the
    autoscaler on the head needs it; required with an egress mode and in-tree autoscaling."""
    egress_cidrs: list[CIDR] = []
    """Other destinations pods may reach under an egress mode: object store, model hub, Redis."""

    @property
    def restricts_egress(self) -> bool:
        return self.mode in ("DenyAll", "DenyAllEgress")

    @property
    def restricts_ingress(self) -> bool:
        return self.mode in ("DenyAll", "DenyAllIngress")


class AuthSpec(ModeShorthand):
    """``authOptions``: Ray token auth. ``auth: token`` / ``auth: disabled`` are short for ``{mode: ...}``.

    Without ``token`` KubeRay generates a random token per RayCluster (Secret ``<cluster>``, key
    ``auth_token``): a RayService's clients then get a new token with every upgrade's new cluster.
    ``token`` keeps one: ``{config: <key>}`` makes the stack create Secret ``<workload>-ray-token`` from
    ``pulumi config set --secret kuberay-platform:<key>``; ``{secret: {name}}`` names an existing Secret,
    whose key must be ``auth_token`` (the one KubeRay reads). ``kubernetesTokens`` lets clients
    authenticate with Kubernetes ServiceAccount tokens instead (``enableK8sTokenAuth``; RayClusters only,
    Ray 2.55+)."""

    mode: Literal["token", "disabled"] = "token"
    token: ConfigOrSecret | None = None
    kubernetes_tokens: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> AuthSpec:
        if self.mode == "disabled" and (self.token is not None or self.kubernetes_tokens):
            raise ValueError("token and kubernetesTokens need mode: token")
        if self.token is not None and self.kubernetes_tokens:
            raise ValueError("kubernetesTokens: KubeRay refuses it together with a token Secret; choose one")
        if self.token is not None and self.token.secret is not None and self.token.secret.key != AUTH_TOKEN_KEY:
            raise ValueError(
                f"token.secret.key: KubeRay reads the token from key {AUTH_TOKEN_KEY}; hold it there and set "
                f"key: {AUTH_TOKEN_KEY}"
            )
        return self


AUTH_TOKEN_KEY = "auth_token"
"""The Secret key KubeRay 1.7.0 reads the token from (``utils.RAY_AUTH_TOKEN_SECRET_KEY``)."""


class BatchSchedulingSpec(Model):
    """How the operator's batch scheduler (``operator.batchScheduler``) treats this workload; written as
    the labels KubeRay 1.7.0 reads (``controllers/ray/batchscheduler``)."""

    queue: str | None = Field(default=None, pattern=r"^[a-z0-9]([a-z0-9._-]{0,251}[a-z0-9])?$")
    """The scheduler's queue: Volcano ``volcano.sh/queue-name``, YuniKorn ``yunikorn.apache.org/queue``
    (e.g. ``root.research``), KAI ``kai.scheduler/queue`` (required there)."""
    priority_class: K8sName | None = None
    """Volcano only: a Kubernetes PriorityClass for the PodGroup (``ray.io/priority-class-name``)."""
    gang: bool = True
    """YuniKorn and scheduler-plugins: schedule the head and all workers together or not at all
    (``ray.io/gang-scheduling-enabled``). Volcano and KAI always gang-schedule."""


class ClusterBase(Model):
    """What every Ray workload has: its cluster."""

    name: RayName
    namespace: K8sName
    ray_version: SemVer = RAY_VERSION
    image: RayImage = RayImage()
    head: HeadSpec = HeadSpec()
    worker_groups: list[WorkerGroupSpec] = Field(min_length=1)
    profile: Profile = "training"
    autoscaler: AutoscalerSpec = AutoscalerSpec()
    auth: AuthSpec = AuthSpec()
    """Token auth (Ray 2.52+), on unless ``auth: disabled``; the token from KubeRay (a new one per
    cluster), a config secret or an existing Secret, or Kubernetes tokens (``components.spec.workloads.AuthSpec``)."""
    gcs_fault_tolerance: GcsFaultToleranceSpec | None = None
    network_policy: NetworkPolicySpec | None = None
    """Operator-managed NetworkPolicies (alpha gate RayClusterNetworkPolicy), completed with what
    KubeRay leaves out: operator access, DNS, the API server (see ``NetworkPolicySpec``)."""
    mtls: bool = False
    """Operator-issued mTLS between Ray pods (alpha gate RayClusterMTLS; needs cert-manager)."""
    volumes: list[SharedVolume] = []
    secret_env: list[K8sName] = []
    """Secrets whose keys become environment variables of every Ray container (``envFrom``), e.g.
    object-store credentials. Never inline."""
    env: PlainEnv = {}
    """Plain (non-secret) environment variables of every Ray container."""
    queue: K8sName | None = None
    """Kueue LocalQueue in the workload's namespace (label ``kueue.x-k8s.io/queue-name``): Kueue holds
    the workload suspended until its head and workers fit the ClusterQueue's quota."""
    priority_class: K8sName | None = None
    """A Kueue WorkloadPriorityClass (label ``kueue.x-k8s.io/priority-class``); needs ``queue``."""
    history_server: bool = False
    """Ship Ray's events and logs to the platform's history storage (``platform.historyServer``)."""
    batch_scheduling: BatchSchedulingSpec | None = None
    """Queue, priority and gang scheduling under the operator's batch scheduler (not with ``queue``)."""
    elastic: bool = False
    """A queued workload that grows and shrinks with the Ray autoscaler (annotation
    ``kueue.x-k8s.io/elastic-job: "true"``, Kueue gate ElasticJobsViaWorkloadSlices, on since 0.18):
    Kueue admits the initial size, then each scale-up as a new workload slice. Kueue refuses in-tree
    autoscaling on a queued workload without it."""

    @model_validator(mode="after")
    def _kueue_rules(self) -> ClusterBase:
        """What Kueue v0.19.2's Ray webhooks reject (pkg/controller/jobs/raycluster/common.go)."""
        if self.priority_class and not self.queue:
            raise ValueError("priorityClass: applies to a Kueue-queued workload; set queue too")
        if self.elastic and not self.queue:
            raise ValueError("elastic: applies to a Kueue-queued workload; set queue too")
        if self.elastic and not self.autoscaled:
            raise ValueError(
                "elastic: workload slices follow the Ray autoscaler; set autoscaler.enabled: true or drop elastic"
            )
        if self.queue and self.autoscaled and not self.elastic:
            raise ValueError(
                "elastic: Kueue refuses in-tree autoscaling on a queued workload unless it is elastic; set "
                "elastic: true, or autoscaler.enabled: false for a fixed size"
            )
        if self.queue and len(self.worker_groups) > KUEUE_MAX_WORKER_GROUPS:
            raise ValueError(
                f"workerGroups: Kueue admits at most {KUEUE_MAX_WORKER_GROUPS} worker groups (plus the head) on a "
                f"queued workload (got {len(self.worker_groups)})"
            )
        if self.queue and any(g.name == "head" for g in self.worker_groups):
            raise ValueError('workerGroups: Kueue reserves the name "head" for the head group; rename the group')
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> ClusterBase:
        for label, names in (
            ("workerGroups", [g.name for g in self.worker_groups]),
            ("volumes", [v.name for v in self.volumes]),
        ):
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"{label}: names must be unique (repeated: {', '.join(dupes)})")
        return self

    @model_validator(mode="after")
    def _shared_claims_attach_everywhere(self) -> ClusterBase:
        for i, volume in enumerate(self.volumes):
            if volume.pvc is not None and not (volume.pvc.read_write_many or volume.pvc.read_only):
                raise ValueError(
                    f"volumes[{i}].pvc.readWriteMany: claim {volume.pvc.claim_name!r} is mounted on the head and every "
                    "worker; a ReadWriteOnce claim fails with Multi-Attach on the second node. Use a ReadWriteMany "
                    "class and set readWriteMany: true, mount it readOnly, or use nfs"
                )
        return self

    @model_validator(mode="after")
    def _network_policy_works(self) -> ClusterBase:
        policy = self.network_policy
        if policy is not None and policy.restricts_ingress and self.serves and not policy.serve_from:
            raise ValueError(
                f"networkPolicy.serveFrom: required with mode {policy.mode} on a RayService (only pods of the "
                "cluster could reach Ray Serve); name the gateway's or ingress controller's namespace"
            )
        if policy is None or not policy.restricts_egress:
            return self
        if self.autoscaled and not policy.api_server_cidrs:
            raise ValueError(
                f"networkPolicy.apiServerCidrs: required with mode {policy.mode} and in-tree autoscaling (the "
                "autoscaler on the head calls the API server); list its endpoints' CIDRs, or use DenyAllIngress"
            )
        if (
            self.gcs_fault_tolerance is not None
            and self.gcs_fault_tolerance.backend == "redis"
            and not policy.egress_cidrs
        ):
            raise ValueError(
                f"networkPolicy.egressCidrs: the head must reach Redis for GCS fault tolerance under mode "
                f"{policy.mode}; list the Redis address's CIDR, or use DenyAllIngress"
            )
        return self

    kind: ClassVar[str] = "RayCluster"
    """The Ray kind the workload is (a scheduled RayJob's RayJobs are RayJobs to Kueue)."""
    autoscaled_by_default: ClassVar[bool] = True
    serves: ClassVar[bool] = False
    """A RayService: its workers answer Ray Serve traffic on 8000."""

    @property
    def autoscaled(self) -> bool:
        """Whether the in-tree autoscaler runs for this workload."""
        return self.autoscaled_by_default if self.autoscaler.enabled is None else self.autoscaler.enabled

    def autoscaling(self) -> AutoscalingProfile:
        """The profile with this workload's overrides applied."""
        base = PROFILES[self.profile]
        return AutoscalingProfile(
            min_replicas=base.min_replicas,
            upscaling_mode=self.autoscaler.upscaling_mode or base.upscaling_mode,
            idle_timeout_seconds=(
                base.idle_timeout_seconds
                if self.autoscaler.idle_timeout_seconds is None
                else self.autoscaler.idle_timeout_seconds
            ),
        )


class RayClusterSpec(ClusterBase):
    """A long-lived RayCluster (interactive work, shared clusters)."""


# --- RayJob -----------------------------------------------------------------------------------


class RuntimeEnv(Model):
    """What a job's runtime environment may carry. No ``pip``/``uv``/``conda``: dependencies belong
    in the image (seeds ch. 9.3), so run-time installs cannot be expressed."""

    working_dir: RemoteUri | None = None
    """A remote package (``s3://``, ``gs://``, ``https://.../code.zip``). Not a local path: the job
    submitter (a separate pod in K8sJobMode) zips a local ``working_dir`` from its own filesystem and
    uploads it through the head; for code baked into the image use ``codeDir``."""
    code_dir: str | None = Field(default=None, pattern=r"^/")
    """Where the image holds the job's code (e.g. ``/app``): put on ``PYTHONPATH`` for the driver and
    every Ray worker, so ``python -m <module>`` and tasks import it without packaging anything."""
    env_vars: PlainEnv = {}


class DeletionRule(Model):
    policy: Literal["DeleteCluster", "DeleteWorkers", "DeleteSelf", "DeleteNone"]
    job_status: Literal["SUCCEEDED", "FAILED"] | None = None
    job_deployment_status: Literal["Failed"] | None = None
    """Deployment-level failure (submitter failed, deadline hit) where the job has no status."""
    ttl_seconds: int = Field(ge=0)

    @model_validator(mode="after")
    def _one_condition(self) -> DeletionRule:
        if (self.job_status is None) == (self.job_deployment_status is None):
            raise ValueError("jobStatus: set exactly one of jobStatus or jobDeploymentStatus")
        return self


DELETION_RULES: list[DeletionRule] = [
    # Seeds ch. 9.5: on failure free the workers after 30 s but keep the head (logs) for an hour;
    # on success delete the cluster after a minute. A job that fails before it has a status
    # (submitter failure, deadline) must not keep its cluster either.
    DeletionRule(policy="DeleteWorkers", job_status="FAILED", ttl_seconds=30),
    DeletionRule(policy="DeleteCluster", job_status="FAILED", ttl_seconds=3600),
    DeletionRule(policy="DeleteCluster", job_status="SUCCEEDED", ttl_seconds=60),
    DeletionRule(policy="DeleteCluster", job_deployment_status="Failed", ttl_seconds=3600),
]
"""KubeRay refuses ``DeleteWorkers`` when the autoscaler runs (it would bring workers back), so an
autoscaled job gets these without it."""

_CRON = re.compile(r"^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\S+\s+){4}\S+)$")


class RayJobSpec(ClusterBase):
    kind: ClassVar[str] = "RayJob"
    autoscaled_by_default: ClassVar[bool] = False
    entrypoint: str = Field(min_length=1)
    runtime_env: RuntimeEnv = RuntimeEnv()
    submission_mode: Literal["K8sJobMode", "SidecarMode"] = "K8sJobMode"
    """K8sJobMode submits from a Kubernetes Job (isolation); SidecarMode from a sidecar of the
    head, for when the operator cannot reach the head reliably (seeds ch. 9.5)."""
    cleanup: Literal["deletionRules", "shutdownAfterJobFinishes"] | None = None
    """How the cluster goes away: ``deletionRules`` (the seeds' staged rules; default) or
    ``shutdownAfterJobFinishes`` with ``ttlSecondsAfterFinished`` (required when queued in Kueue).
    Never both."""
    deletion_rules: list[DeletionRule] | None = None
    """Defaults to ``DELETION_RULES`` (without ``DeleteWorkers`` when autoscaled)."""
    ttl_seconds_after_finished: int = Field(default=300, ge=0)
    """For ``shutdownAfterJobFinishes``: seconds the finished cluster stays for inspection."""
    active_deadline_seconds: int | None = Field(default=None, ge=1)
    backoff_limit: int = Field(default=0, ge=0)
    """Retries of the whole job (a new cluster each time); 0 as in KubeRay."""
    schedule: str | None = None
    """A cron schedule: the job becomes a RayCronJob (alpha gate RayCronJob, switched on for it)."""
    time_zone: str | None = None
    keep_succeeded_seconds: int = Field(default=86400, ge=0)
    """Scheduled jobs: how long each succeeded RayJob stays before it deletes itself (``DeleteSelf``).
    KubeRay 1.7.0's RayCronJob has no history limit (``RayCronJobSpec``: jobTemplate, schedule,
    timeZone, suspend), so without it one RayJob a run piles up. A day: time to read its status."""
    keep_failed_seconds: int = Field(default=604800, ge=0)
    """Scheduled jobs: the same for failed RayJobs; a week, to investigate."""

    @property
    def resolved_deletion_rules(self) -> list[DeletionRule]:
        rules = (
            self.deletion_rules
            if self.deletion_rules is not None
            else [r for r in DELETION_RULES if not (self.autoscaled and r.policy == "DeleteWorkers")]
        )
        if self.schedule is None or any(r.policy == "DeleteSelf" for r in rules):
            return rules
        return rules + self._delete_self(rules)

    def _delete_self(self, rules: list[DeletionRule]) -> list[DeletionRule]:
        """A scheduled job's RayJobs delete themselves once kept long enough; KubeRay requires each
        condition's TTLs to grow Workers <= Cluster <= Self (``validateTTLConsistency``)."""

        def after(job_status: str | None, deployment_status: str | None, keep: int) -> int:
            same = [
                r.ttl_seconds
                for r in rules
                if (r.job_status, r.job_deployment_status) == (job_status, deployment_status)
            ]
            return max([keep, *same])

        return [
            DeletionRule(
                policy="DeleteSelf",
                job_status="SUCCEEDED",
                ttl_seconds=after("SUCCEEDED", None, self.keep_succeeded_seconds),
            ),
            DeletionRule(
                policy="DeleteSelf", job_status="FAILED", ttl_seconds=after("FAILED", None, self.keep_failed_seconds)
            ),
            DeletionRule(
                policy="DeleteSelf",
                job_deployment_status="Failed",
                ttl_seconds=after(None, "Failed", self.keep_failed_seconds),
            ),
        ]

    @property
    def resolved_cleanup(self) -> str:
        if self.cleanup is not None:
            return self.cleanup
        return "shutdownAfterJobFinishes" if self.queue else "deletionRules"

    @model_validator(mode="after")
    def _job_rules(self) -> RayJobSpec:
        if self.queue and self.cleanup == "deletionRules":
            raise ValueError(
                "cleanup: a Kueue-queued RayJob needs shutdownAfterJobFinishes (Kueue frees quota with the "
                "cluster); use cleanup: shutdownAfterJobFinishes or remove queue"
            )
        if self.schedule is not None and not _CRON.match(self.schedule.strip()):
            raise ValueError(f"schedule: expected a cron expression such as '0 3 * * *' (got {self.schedule!r})")
        if self.time_zone is not None and self.schedule is None:
            raise ValueError("timeZone: only applies with a schedule")
        if self.autoscaled and any(r.policy == "DeleteWorkers" for r in self.deletion_rules or []):
            raise ValueError(
                "deletionRules: KubeRay refuses DeleteWorkers while the autoscaler runs; drop the rule or set "
                "autoscaler.enabled: false"
            )
        return self


# --- RayService -------------------------------------------------------------------------------


class DeploymentAutoscaling(Model):
    min_replicas: int = Field(default=1, ge=0)
    max_replicas: int = Field(default=1, ge=1)
    target_ongoing_requests: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _bounds(self) -> DeploymentAutoscaling:
        check_replica_bounds(self.min_replicas, self.max_replicas)
        return self


class ServeDeployment(Model):
    """Overrides for one deployment of an application (Ray Serve ``deployments:``)."""

    name: str = Field(min_length=1)
    num_replicas: int | None = Field(default=None, ge=1)
    max_ongoing_requests: int | None = Field(default=None, ge=1)
    autoscaling: DeploymentAutoscaling | None = None
    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)


class ServeApp(Model):
    type: Literal["serve"] = "serve"
    name: str = Field(min_length=1)
    import_path: str = Field(pattern=r"^[A-Za-z_][\w.]*[.:][A-Za-z_]\w*$")
    route_prefix: str = Field(default="/", pattern=r"^/")
    args: dict[str, Any] = {}
    deployments: list[ServeDeployment] = []
    env_vars: PlainEnv = {}


class LlmModel(Model):
    """One model of a Ray Serve LLM app (``ray.serve.llm``, vLLM engine)."""

    model_id: str = Field(min_length=1)
    """The name clients ask for (OpenAI ``model``)."""
    model_source: str | None = None
    """Where weights come from: a Hugging Face id or a path on a shared volume."""
    tensor_parallel_size: int = Field(default=1, ge=1)
    """GPUs one replica shards each layer over; within one pod."""
    pipeline_parallel_size: int = Field(default=1, ge=1)
    """Pods one replica spans (one stage per pod); >1 makes the service multi-host."""
    min_replicas: int = Field(default=1, ge=1)
    max_replicas: int = Field(default=1, ge=1)
    accelerator_type: str | None = None
    """Ray accelerator type to pin replicas to, e.g. ``A100``."""
    engine_kwargs: dict[str, Any] = {}
    """Extra vLLM engine arguments (max_model_len, ...)."""

    @property
    def gpus_per_replica(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @model_validator(mode="after")
    def _replica_bounds(self) -> LlmModel:
        check_replica_bounds(self.min_replicas, self.max_replicas)
        return self


class LlmApp(Model):
    type: Literal["llm"]
    name: str = Field(min_length=1)
    route_prefix: str = Field(default="/", pattern=r"^/")
    models: list[LlmModel] = Field(min_length=1)


def _app_kind(value: Any) -> str:
    """The application's ``type`` (``serve`` when absent); an unknown type fails as such."""
    raw = value.get("type", "serve") if isinstance(value, dict) else getattr(value, "type", "serve")
    return str(raw)


Application = Annotated[Annotated[ServeApp, Tag("serve")] | Annotated[LlmApp, Tag("llm")], Discriminator(_app_kind)]


ISTIO_INTERNAL = {"networking.istio.io/service-type": "ClusterIP"}


class UpgradeSpec(Model):
    strategy: Literal["auto", "NewCluster", "NewClusterWithIncrementalUpgrade"] = "auto"
    """``auto``: incremental for services holding accelerators (one surge step instead of a whole
    second cluster), blue-green (``NewCluster``) otherwise. ``None`` (downtime) is not offered."""
    gateway_class_name: str | None = None
    """Gateway API class the incremental upgrade routes through (e.g. ``istio``); required for it."""
    step_size_percent: int = Field(default=20, ge=1, le=100)
    """Traffic moved per step (seeds: 20% steps)."""
    interval_seconds: int = Field(default=60, ge=1)
    max_surge_percent: int = Field(default=20, ge=1, le=100)
    """Capacity the new cluster adds per step: a 5-GPU service peaks at 6 GPUs with 20%."""
    exposure: Literal["internal", "external"] = "internal"
    """Where the Gateway that incremental upgrades route through is reachable. KubeRay creates
    ``<service>-gateway`` with only the class and an HTTP listener on port 80 (``createGateway``),
    which gateway controllers usually publish through a LoadBalancer, in front of Ray Serve's proxy,
    which has no auth. ``internal``: the platform creates that Gateway first, identical in what
    KubeRay compares (class, listener) so KubeRay keeps it (``IsGatewayEqual``), with
    ``gatewayAnnotations`` that keep it inside the cluster. ``external`` needs ``authenticatedBy``."""
    gateway_annotations: dict[str, str] | None = None
    """Annotations of that Gateway that keep it internal; for class ``istio`` the default is
    ``networking.istio.io/service-type: ClusterIP`` (Istio's gateway deployment reads it)."""
    authenticated_by: str | None = Field(default=None, min_length=3)
    """With ``exposure: external``: what authenticates clients in front of Ray Serve (e.g. ``istio
    RequestAuthentication + AuthorizationPolicy (JWT)``), recorded on the RayService."""

    @property
    def internal_gateway_annotations(self) -> dict[str, str] | None:
        if self.gateway_annotations is not None:
            return self.gateway_annotations
        return dict(ISTIO_INTERNAL) if self.gateway_class_name == "istio" else None

    @model_validator(mode="after")
    def _exposure_is_decided(self) -> UpgradeSpec:
        if self.exposure == "external" and not self.authenticated_by:
            raise ValueError(
                "authenticatedBy: required with exposure: external (Ray Serve's proxy has no auth); name what "
                "authenticates clients in front of it, or use exposure: internal"
            )
        if self.exposure == "internal" and self.gateway_class_name and self.internal_gateway_annotations is None:
            raise ValueError(
                f"gatewayAnnotations: say how GatewayClass {self.gateway_class_name!r} keeps a Gateway internal "
                "(its annotations for an internal load balancer or a ClusterIP Service), or use exposure: external"
            )
        return self

    @model_validator(mode="after")
    def _step_within_surge(self) -> UpgradeSpec:
        if self.step_size_percent > self.max_surge_percent:
            raise ValueError(
                f"stepSizePercent: must not exceed maxSurgePercent (got {self.step_size_percent} > "
                f"{self.max_surge_percent}): traffic cannot move faster than capacity is added"
            )
        return self


class RayServiceSpec(ClusterBase):
    kind: ClassVar[str] = "RayService"
    serves: ClassVar[bool] = True
    profile: Profile = "serving"
    applications: list[Application] = Field(min_length=1)
    upgrade: UpgradeSpec = UpgradeSpec()
    termination_grace_period_seconds: int | None = Field(default=None, ge=0)
    """Worker drain time; defaults to 600 s for LLM services (seeds ch. 8.10: 300-600 s)."""

    @property
    def is_llm(self) -> bool:
        return any(isinstance(app, LlmApp) for app in self.applications)

    @model_validator(mode="after")
    def _apps(self) -> RayServiceSpec:
        if self.gcs_fault_tolerance is not None and self.gcs_fault_tolerance.external_storage_namespace:
            raise ValueError(
                "gcsFaultTolerance: externalStorageNamespace must stay unset on a RayService: during an upgrade "
                "the old and new clusters would share GCS state; KubeRay keys each by its cluster UID"
            )
        names = [a.name for a in self.applications]
        prefixes = [a.route_prefix for a in self.applications]
        for label, values in (("name", names), ("routePrefix", prefixes)):
            dupes = sorted({v for v in values if values.count(v) > 1})
            if dupes:
                raise ValueError(f"applications: {label}s must be unique (repeated: {', '.join(dupes)})")
        return self


# --- All workloads ----------------------------------------------------------------------------


class WorkloadsSpec(Model):
    pools: dict[K8sName, Pool] = DEFAULT_POOLS
    """Hardware pools by name; ``cpu`` exists unless you redefine the map."""
    ray_clusters: list[RayClusterSpec] = []
    ray_jobs: list[RayJobSpec] = []
    ray_services: list[RayServiceSpec] = []
    wait_for_ready: bool = True
    """``pulumi up`` waits until KubeRay reports each Ray object ready (RayCluster ``HeadPodReady``,
    RayService ``Ready``, a RayJob's deployment status; a queued one until Kueue admitted or held it).
    ``false``: an object counts as deployed once the API server accepted it, for clusters where the
    KubeRay operator is rolled out by another pipeline after this stack, and for the local control
    plane (``make e2e``), where KubeRay 1.7.0 cannot be built."""

    def all(self) -> list[tuple[str, ClusterBase]]:
        """(spec key path, workload) of every workload."""
        out: list[tuple[str, ClusterBase]] = []
        for key, items in (
            ("rayClusters", self.ray_clusters),
            ("rayJobs", self.ray_jobs),
            ("rayServices", self.ray_services),
        ):
            out += [(f"workloads.{key}[{i}]", w) for i, w in enumerate(items)]
        return out
