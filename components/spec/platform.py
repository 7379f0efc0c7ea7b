"""The whole platform spec, its cross-section checks, and parsing with user-facing errors."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Field, Tag, ValidationError

from components.errors import ConfigError
from components.spec.base import (
    CONFIG_KEY,
    PATTERN_HINTS,
    SECRET_NAME,
    Environment,
    K8sName,
    MinorVersion,
    Model,
    Quantity,
    hinted_pattern,
)
from components.spec.certificates import CertManagerSpec
from components.spec.gitops import GitOpsSpec
from components.spec.kueue import RAY_FRAMEWORKS, ClusterQueueSpec, KueueSpec
from components.spec.monitoring import HistoryServerSpec, MonitoringSpec
from components.spec.network import PlatformNetworkSpec
from components.spec.operator import OperatorSpec
from components.spec.storage import (
    ExternalRedis,
    GcsStorage,
    InClusterRedis,
    SecretKeyRef,
    password_namespaces,
    password_secret_name,
)
from components.spec.tenancy import TeamSpec
from components.spec.workloads import (
    ClusterBase,
    GpuPool,
    LlmApp,
    RayJobSpec,
    RayServiceSpec,
    TpuPool,
    WorkloadsSpec,
)
from components.upstream import DEFAULT_KUBERNETES_VERSION


class SecretPrerequisite(Model):
    namespace: K8sName
    name: K8sName
    keys: list[str] = []
    """The keys the workloads read (for ``summary.md``'s ``kubectl create secret`` line)."""


class ClaimPrerequisite(Model):
    namespace: K8sName
    name: K8sName
    access_mode: Literal["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany", "ReadOnlyMany"] = "ReadWriteMany"
    size: Quantity | None = None


class NfsPrerequisite(Model):
    server: str = Field(min_length=1)
    path: str = Field(pattern=r"^/")
    """The export; it covers the paths below it."""


class LocalQueueRef(Model):
    namespace: K8sName
    name: K8sName


class PrerequisitesSpec(Model):
    """What the platform uses but does not install, declared by the stack once it is in the cluster.
    A workload that needs one that is not declared is a config error naming what to install."""

    secrets: list[SecretPrerequisite] = []
    """Secrets the workloads reference (``secretEnv``, TLS, Redis credentials) that the stack does not
    create: each must exist, in that namespace, before ``pulumi up``."""
    persistent_volume_claims: list[ClaimPrerequisite] = []
    """PVCs the workloads mount (``volumes[].pvc``) that the stack does not create."""
    nfs_exports: list[NfsPrerequisite] = []
    """NFS exports the workloads mount (``volumes[].nfs``)."""
    kueue: bool = False
    """Kueue v0.19 (CRDs, controller, the ``ray.io/*`` integrations): needed by ``kueue`` and ``queue``."""
    local_queues: list[LocalQueueRef] = []
    """LocalQueues that exist already (created outside the stack) and that workloads may name."""

    gateway_api: bool = False
    """Gateway API CRDs (v1.6.1 standard channel) and a controller for the GatewayClass incremental
    RayService upgrades name. Without the CRDs KubeRay's gateway reconcile fails before it creates
    the RayService's cluster and Services (``reconcileGateway`` runs first), and without a controller
    the traffic never moves (``IsGatewayReady``)."""
    cert_manager: bool = False
    """cert-manager (v1.x, CRDs and webhook) installed outside the stack: needed by ``mtls`` (KubeRay
    issues the cluster's certificates through it) and by ``certManager`` without ``install``."""
    prometheus_operator: bool = False
    """The prometheus-operator CRDs (ServiceMonitor, PodMonitor, PrometheusRule; v0.93) and a Prometheus
    that selects the stack's monitors and rules: needed by ``monitoring``."""
    tpu_webhook: bool = False
    """The Ray TPU webhook (ai-on-gke ``kuberay-tpu-webhook``; the GKE Ray add-on includes it). Multi-host
    TPU slices need ``TPU_WORKER_ID``, ``TPU_NAME`` and ``TPU_WORKER_HOSTNAMES`` in every host's pod:
    Ray 2.60 reads them (else the GCE metadata, which on GKE describes one VM) for the slice's head
    resource and JAX for multi-host init; KubeRay 1.7.0 sets none of them (only its replica/host index
    labels)."""


DestructiveChange = Annotated[
    str,
    hinted_pattern(
        r"^[A-Z][A-Za-z]+ ([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        "<Kind> <namespace>/<name>, or <Kind> <name> for a cluster-scoped object, as the preview names it",
    ),
]


class PlatformSpec(Model):
    environment: Environment
    kubernetes_version: MinorVersion = DEFAULT_KUBERNETES_VERSION
    """The cluster's minor version; emitted objects are validated against its schemas."""
    operator: OperatorSpec = OperatorSpec()
    namespaces: list[K8sName] = []
    """Namespaces the platform owns besides those of its workloads and the operator's watch list,
    e.g. a team's before its first workload (so its Secrets and PVCs have a home)."""
    prerequisites: PrerequisitesSpec = PrerequisitesSpec()
    protect_namespaces: bool | None = None
    """Protect the platform's namespaces from deletion (``pulumi destroy``, or dropping the last
    workload of one, must not delete the user's Secrets, PVCs and retained GCS storage with it).
    Default: on in prod, off elsewhere. Unprotect with ``pulumi state unprotect <urn>``."""
    kueue: KueueSpec = KueueSpec()
    """Kueue queues, quotas and priorities (``components.spec.kueue``)."""
    gcs_storage: dict[K8sName, GcsStorage] = {}
    """GCS fault-tolerance storage by name (``type: redis`` in-cluster, or ``type: external``),
    referenced by workloads' ``gcsFaultTolerance.storage``."""
    workloads: WorkloadsSpec = WorkloadsSpec()
    teams: dict[K8sName, TeamSpec] = {}
    """Team namespaces with a ResourceQuota, a LimitRange and a Role for the team's people
    (``components.spec.tenancy``); the team's workloads must fit its quota at their largest."""
    history_server: HistoryServerSpec | None = None
    """Ray History Server collectors for the workloads with ``historyServer: true``."""
    monitoring: MonitoringSpec | None = None
    """PodMonitors, the operator's ServiceMonitor, alert rules and dashboards (``components.spec.monitoring``)."""
    cert_manager: CertManagerSpec | None = None
    """cert-manager installed by the stack (or there already), its ClusterIssuers and the dashboard
    ingress certificates (``components.spec.certificates``)."""
    network_policies: PlatformNetworkSpec | None = None
    """Default-deny NetworkPolicies in every namespace that runs Ray, with what the platform needs
    allowed back in (``components.spec.network``)."""
    acknowledge_destructive_changes: list[DestructiveChange] = []
    """Stateful objects this change may delete, replace or rename, as the preview names them
    (``StatefulSet ray-serving/redis-gcs``, ``Namespace ray-research``): the ``stateful-resources-kept``
    policy, mandatory in prod, accepts them. Remove the entries once the change has landed."""
    gitops: GitOpsSpec | None = None
    """GitOps pull mode: the Pulumi Kubernetes Operator and one Stack object per environment it keeps
    in sync with this repository (``components.spec.gitops``), for a management cluster's stack."""

    @property
    def namespaces_protected(self) -> bool:
        return self.protect_namespaces if self.protect_namespaces is not None else self.environment == "prod"

    @property
    def gcs_state_protected(self) -> bool:
        """The in-cluster GCS Redis (its StatefulSet and password Secret) is protected and retained (prod)."""
        return self.environment == "prod"


def cross_check(spec: PlatformSpec) -> list[tuple[str, str]]:
    """Rules that span sections of the spec, as (key path, message) pairs."""
    problems: list[tuple[str, str]] = []
    seen: dict[tuple[str, str, str], str] = {}
    watched = spec.operator.watch_namespaces
    if watched is not None:  # a team's own operator watches its namespace
        watched = [*watched, *(t.namespace or n for n, t in spec.teams.items() if t.own_operator)]
    pools = spec.workloads.pools
    for path, workload in spec.workloads.all():
        kind = type(workload).__name__.removesuffix("Spec")
        key = (kind, workload.namespace, workload.name)
        if key in seen:
            problems.append(
                (f"{path}.name", f"{kind} {workload.namespace}/{workload.name} is already defined at {seen[key]}")
            )
        seen.setdefault(key, path)
        if watched is not None and workload.namespace not in watched:
            problems.append(
                (
                    f"{path}.namespace",
                    f"{workload.namespace!r} is not watched by the operator; add it to "
                    f"operator.watchNamespaces (now {watched})",
                )
            )
        for j, group in enumerate(workload.worker_groups):
            if group.pool not in pools:
                problems.append(
                    (
                        f"{path}.workerGroups[{j}].pool",
                        f"unknown pool {group.pool!r} (defined: {', '.join(sorted(pools))})",
                    )
                )
        for j, group in enumerate(workload.worker_groups):
            pool = pools.get(group.pool)
            if isinstance(pool, TpuPool) and pool.hosts > 1 and not spec.prerequisites.tpu_webhook:
                problems.append(
                    (
                        f"{path}.workerGroups[{j}].pool",
                        f"pool {group.pool!r} is a multi-host TPU slice ({pool.hosts} hosts): it needs the Ray TPU "
                        "webhook (TPU_WORKER_ID/TPU_WORKER_HOSTNAMES); install it (ai-on-gke kuberay-tpu-webhook, "
                        "or the GKE Ray add-on) and set platform.prerequisites.tpuWebhook: true",
                    )
                )
        if (
            isinstance(workload, RayServiceSpec)
            and upgrade_strategy(workload, pools) == "NewClusterWithIncrementalUpgrade"
            and not spec.prerequisites.gateway_api
        ):
            problems.append(
                (
                    f"{path}.upgrade",
                    "incremental upgrades route through Gateway API: install its CRDs and a controller for "
                    f"GatewayClass {workload.upgrade.gateway_class_name!r}, then set "
                    "platform.prerequisites.gatewayApi: true (or set upgrade.strategy: NewCluster)",
                )
            )
        if isinstance(workload, RayServiceSpec):
            problems += _service_checks(path, workload, pools)
        problems += _gcs_checks(spec, path, workload)
    problems += reference_checks(spec)
    problems += network_checks(spec)
    problems += certificate_checks(spec)
    problems += auth_checks(spec)
    problems += kueue_checks(spec)
    problems += batch_scheduler_checks(spec)
    problems += gitops_checks(spec)
    owners: dict[str, str] = {}
    for name, team in spec.teams.items():
        namespace = team.namespace or name
        if namespace in owners:
            problems.append(
                (f"teams.{name}.namespace", f"namespace {namespace} already belongs to team {owners[namespace]}")
            )
        owners.setdefault(namespace, name)
    for path, w in spec.workloads.all():
        if w.history_server and spec.history_server is None:
            problems.append(
                (
                    f"{path}.historyServer",
                    "needs platform.historyServer (the collector image and the storage it writes to)",
                )
            )
    if spec.monitoring is not None and spec.operator.service_monitor.enabled:
        problems.append(
            (
                "operator.serviceMonitor.enabled",
                "monitoring emits the operator's ServiceMonitor (with Prometheus's selector labels); drop this",
            )
        )
    installs = spec.monitoring is not None and spec.monitoring.install is not None
    if installs and spec.prerequisites.prometheus_operator:
        problems.append(
            (
                "monitoring.install",
                "kube-prometheus-stack is installed by the stack or already there "
                "(prerequisites.prometheusOperator), not both; drop one",
            )
        )
    elif spec.monitoring is not None and not installs and not spec.prerequisites.prometheus_operator:
        problems.append(
            (
                "prerequisites.prometheusOperator",
                "monitoring needs the prometheus-operator CRDs and a Prometheus: set monitoring.install: {} "
                "to install kube-prometheus-stack, or install one and set prerequisites.prometheusOperator: true",
            )
        )
    return problems


def auth_checks(spec: PlatformSpec) -> list[tuple[str, str]]:
    """What KubeRay 1.7.0 refuses of Kubernetes-token auth (utils/validation.go)."""
    problems: list[tuple[str, str]] = []
    for path, w in spec.workloads.all():
        if not w.auth.kubernetes_tokens:
            continue
        if w.kind != "RayCluster":
            problems.append(
                (
                    f"{path}.auth.kubernetesTokens",
                    f"KubeRay supports Kubernetes-token auth only for RayClusters, not {w.kind}s",
                )
            )
        if tuple(int(x) for x in w.ray_version.split(".")[:2]) < (2, 55):
            problems.append((f"{path}.auth.kubernetesTokens", f"needs Ray 2.55 or later (rayVersion {w.ray_version})"))
    return problems


def certificate_checks(spec: PlatformSpec) -> list[tuple[str, str]]:
    """cert-manager is installed or declared once; what needs it has it."""
    problems: list[tuple[str, str]] = []
    cm = spec.cert_manager
    installed = cm is not None and cm.install is not None
    if installed and spec.prerequisites.cert_manager:
        problems.append(
            (
                "certManager.install",
                "cert-manager is installed by the stack or already there (prerequisites.certManager), not both",
            )
        )
    if cm is not None and not installed and not spec.prerequisites.cert_manager:
        problems.append(
            (
                "prerequisites.certManager",
                "certManager needs cert-manager: set certManager.install: {} or install it and set "
                "prerequisites.certManager: true",
            )
        )
    available = installed or spec.prerequisites.cert_manager
    for path, w in spec.workloads.all():
        if w.mtls and not available:
            problems.append(
                (
                    f"{path}.mtls",
                    "KubeRay issues the cluster's mTLS certificates through cert-manager: set certManager.install: {} "
                    "or prerequisites.certManager: true",
                )
            )
        ingress = w.head.ingress
        if ingress is not None and ingress.certificate and (cm is None or cm.issuer_for_ingress is None):
            problems.append(
                (
                    f"{path}.head.ingress.certificate",
                    "needs an issuer: set certManager.ca: {} (a private CA) or certManager.acme (Let's Encrypt)",
                )
            )
        if ingress is not None and isinstance(w, RayJobSpec) and w.schedule is not None:
            problems.append((f"{path}.head.ingress", "a scheduled job's clusters come and go: expose no ingress"))
    return problems


def network_checks(spec: PlatformSpec) -> list[tuple[str, str]]:
    """Names the NetworkPolicies select by are unique; what a default-deny namespace must allow."""
    problems: list[tuple[str, str]] = []
    network = spec.network_policies
    seen: dict[tuple[str, str], str] = {}
    for path, w in spec.workloads.all():
        key = (w.namespace, w.name)
        if key in seen:
            problems.append(
                (f"{path}.name", f"{w.name} is already a workload in namespace {w.namespace} ({seen[key]}); rename one")
            )
        seen.setdefault(key, path)
    for name, team in spec.teams.items():
        namespace = team.namespace or name
        if team.own_operator:
            watched = spec.operator.watch_namespaces
            if watched is None or namespace in watched:
                problems.append(
                    (
                        f"teams.{name}.ownOperator",
                        f"two operators would reconcile {namespace}: list the platform operator's "
                        f"watchNamespaces without it",
                    )
                )
            if network is not None and not network.api_server_cidrs:
                problems.append(
                    (
                        "networkPolicies.apiServerCidrs",
                        f"team {name}'s own operator in the policed namespace {namespace} must reach the API server",
                    )
                )
        if team.trusted:
            continue
        namespace = team.namespace or name
        if network is None:
            problems.append(
                (
                    f"teams.{name}.trusted",
                    f"an untrusted team's namespace {namespace} must be policed: set networkPolicies",
                )
            )
        for path, w in spec.workloads.all():
            if w.namespace == namespace and not w.mtls:
                problems.append((f"{path}.mtls", f"runs in untrusted team {name}'s namespace: set mtls: true"))
    if network is None:
        return problems
    unknown = sorted(set(network.namespaces) - {w.namespace for _, w in spec.workloads.all()})
    for namespace in unknown:
        problems.append((f"networkPolicies.namespaces.{namespace}", "no workload runs there; drop it"))
    for path, w in spec.workloads.all():
        if w.autoscaled and not network.api_server_cidrs:
            problems.append(
                (
                    "networkPolicies.apiServerCidrs",
                    f"{path} autoscales: its head's autoscaler must reach the API server; list its endpoints "
                    "(kubectl get endpoints kubernetes)",
                )
            )
        if w.head.ingress is not None and not network.for_namespace(w.namespace).ingress_from:
            problems.append(
                (
                    "networkPolicies.ingressFrom",
                    f"{path} has a head ingress: name the ingress controller's namespace, which reaches the "
                    "dashboard (8265)",
                )
            )
        if isinstance(w, RayServiceSpec) and not network.for_namespace(w.namespace).serve_from:
            problems.append(
                (
                    "networkPolicies.serveFrom",
                    f"{path} serves, but no namespace may reach it on 8000; name the ingress or Gateway "
                    f"namespace (here or under namespaces.{w.namespace})",
                )
            )
    return problems


def gitops_checks(spec: PlatformSpec) -> list[tuple[str, str]]:
    """The Secrets the Stack objects read must be declared, like every Secret the stack does not create."""
    if spec.gitops is None:
        return []
    declared = {(s.namespace, s.name, key) for s in spec.prerequisites.secrets for key in s.keys}
    declared_any = {(s.namespace, s.name) for s in spec.prerequisites.secrets if not s.keys}
    problems = []
    refs = [("accessToken", spec.gitops.access_token), ("gitToken", spec.gitops.git_token)]
    refs += [(f"backendCredentials[{i}]", ref) for i, ref in enumerate(spec.gitops.backend_credentials)]
    for where, ref in refs:
        if ref is None:
            continue
        ns = spec.gitops.namespace
        if (ns, ref.name, ref.key) not in declared and (ns, ref.name) not in declared_any:
            problems.append(
                (
                    f"gitops.{where}",
                    f"Secret {ns}/{ref.name} (key {ref.key}) is not declared: add it to prerequisites.secrets",
                )
            )
    return problems


def kueue_checks(spec: PlatformSpec) -> list[tuple[str, str]]:
    kueue, pools = spec.kueue, spec.workloads.pools
    problems: list[tuple[str, str]] = []
    queued = [(path, w) for path, w in spec.workloads.all() if w.queue]
    install = kueue.install
    if install is not None and spec.prerequisites.kueue:
        problems.append(
            (
                "kueue.install",
                "Kueue is declared installed already (prerequisites.kueue: true); keep one of the two",
            )
        )
    if (kueue.enabled or queued) and install is None and not spec.prerequisites.kueue:
        problems.append(
            (
                "prerequisites.kueue",
                "Kueue queues or queued workloads need Kueue v0.19: set kueue.install: {} to install it with the "
                "stack, or install it with the Ray integrations (ray.io/rayjob, ray.io/raycluster, "
                "ray.io/rayservice) and set platform.prerequisites.kueue: true",
            )
        )
    if install is not None:
        for path, w in queued:
            framework = RAY_FRAMEWORKS[w.kind]
            if framework not in install.frameworks:
                problems.append(
                    (
                        f"{path}.queue",
                        f"Kueue's {framework} integration is off; add it to kueue.install.frameworks",
                    )
                )
            if w.namespace == install.namespace:
                problems.append(
                    (
                        f"{path}.namespace",
                        f"Kueue's webhooks skip its own namespace {install.namespace}; the workload would never be "
                        "queued. Move it to a team namespace",
                    )
                )
            if w.elastic and not install.gate("ElasticJobsViaWorkloadSlices"):
                problems.append(
                    (
                        f"{path}.elastic",
                        "needs Kueue's ElasticJobsViaWorkloadSlices gate, switched off in kueue.install.featureGates",
                    )
                )
    queues: dict[str, ClusterQueueSpec] = {}
    for i, cq in enumerate(kueue.cluster_queues):
        if cq.name in queues:
            problems.append((f"kueue.clusterQueues[{i}].name", f"ClusterQueue {cq.name!r} is defined twice"))
        queues.setdefault(cq.name, cq)
        for pool in cq.quotas:
            if pool not in pools:
                problems.append(
                    (
                        f"kueue.clusterQueues[{i}].quotas.{pool}",
                        f"unknown pool {pool!r} (defined: {', '.join(sorted(pools))}); each quota is per pool",
                    )
                )
    local = {(q.namespace, q.name) for q in kueue.local_queues}
    for i, lq in enumerate(kueue.local_queues):
        target = queues.get(lq.cluster_queue)
        if target is None:
            problems.append(
                (
                    f"kueue.localQueues[{i}].clusterQueue",
                    f"unknown ClusterQueue {lq.cluster_queue!r} (defined: {', '.join(sorted(queues)) or 'none'})",
                )
            )
        elif target.namespaces is not None and lq.namespace not in target.namespaces:
            problems.append(
                (
                    f"kueue.localQueues[{i}].namespace",
                    f"ClusterQueue {target.name!r} admits only namespaces {target.namespaces}; add "
                    f"{lq.namespace!r} there",
                )
            )
    mk = kueue.multi_kueue
    if mk is not None:
        for i, name in enumerate(mk.cluster_queues):
            if name not in queues:
                problems.append(
                    (
                        f"kueue.multiKueue.clusterQueues[{i}]",
                        f"unknown ClusterQueue {name!r} (defined: {', '.join(sorted(queues)) or 'none'})",
                    )
                )
        if install is not None and not install.gate("MultiKueue"):
            problems.append(
                ("kueue.multiKueue", "needs Kueue's MultiKueue gate, switched off in kueue.install.featureGates")
            )
        if install is not None and mk.kueue_namespace not in (None, install.namespace):
            problems.append(
                (
                    "kueue.multiKueue.kueueNamespace",
                    f"Kueue runs in {install.namespace} (kueue.install.namespace); drop kueueNamespace",
                )
            )
    for path, w in queued:
        if w.kind == "RayCluster" and w.elastic and kueue.dispatched(w.namespace, w.queue):
            problems.append(
                (
                    f"{path}.elastic",
                    "Kueue refuses in-tree autoscaling on an elastic RayCluster that MultiKueue dispatches; set "
                    "autoscaler.enabled: false and drop elastic, or queue it to a ClusterQueue that is not dispatched",
                )
            )
    declared = local | {(q.namespace, q.name) for q in spec.prerequisites.local_queues}
    classes = {c.name for c in kueue.priority_classes}
    for path, w in queued:
        if (w.namespace, w.queue) not in declared:
            problems.append(
                (
                    f"{path}.queue",
                    f"LocalQueue {w.namespace}/{w.queue} is neither created by the stack (kueue.localQueues) nor "
                    "declared (prerequisites.localQueues); Kueue would hold the workload forever",
                )
            )
        if w.priority_class and w.priority_class not in classes:
            problems.append(
                (
                    f"{path}.priorityClass",
                    f"unknown WorkloadPriorityClass {w.priority_class!r} (kueue.priorityClasses defines: "
                    f"{', '.join(sorted(classes)) or 'none'})",
                )
            )
    return problems


def batch_scheduler_checks(spec: PlatformSpec) -> list[tuple[str, str]]:
    """What KubeRay 1.7.0's batch-scheduler integrations need or refuse (``controllers/ray/batchscheduler``)."""
    scheduler = spec.operator.batch_scheduler
    problems: list[tuple[str, str]] = []
    for path, w in spec.workloads.all():
        options = w.batch_scheduling
        if scheduler is None:
            if options is not None:
                problems.append(
                    (
                        f"{path}.batchScheduling",
                        "needs a batch scheduler: set operator.batchScheduler (volcano, yunikorn, scheduler-plugins, "
                        "kai-scheduler)",
                    )
                )
            continue
        if w.queue:
            problems.append(
                (
                    f"{path}.queue",
                    f"Kueue and the operator's batch scheduler {scheduler} would both gate this workload; KubeRay "
                    "applies its batch scheduler to every workload, so queue through one of them: drop queue or "
                    "operator.batchScheduler",
                )
            )
        if options is not None and options.priority_class and scheduler != "volcano":
            problems.append((f"{path}.batchScheduling.priorityClass", f"only Volcano reads it, not {scheduler}"))
        if scheduler == "kai-scheduler" and (options is None or not options.queue):
            problems.append(
                (
                    f"{path}.batchScheduling.queue",
                    "required with kai-scheduler: KAI leaves pods without a kai.scheduler/queue label pending",
                )
            )
        if scheduler == "kai-scheduler" and isinstance(w, RayJobSpec) and w.submission_mode == "K8sJobMode":
            problems.append(
                (
                    f"{path}.submissionMode",
                    "KAI-Scheduler refuses RayJobs in K8sJobMode (the submitter pod comes after the gang); use "
                    "SidecarMode",
                )
            )
        if scheduler == "scheduler-plugins" and isinstance(w, RayJobSpec):
            problems.append(
                (
                    path,
                    "KubeRay 1.7.0's scheduler-plugins integration supports only RayClusters (its submission hook "
                    "fails every RayJob, which then never leaves Initializing); run it as a RayCluster or use "
                    "volcano or yunikorn",
                )
            )
    return problems


def created_secrets(spec: PlatformSpec) -> set[tuple[str, str]]:
    """(namespace, name) of every Secret the stack itself creates."""
    clients = storage_clients(spec)
    created: set[tuple[str, str]] = set()
    for name, redis in in_cluster_redis(spec).items():
        if redis.password.config:
            created |= {(ns, password_secret_name(name)) for ns in password_namespaces(redis, clients[name])}
    return created


def reference_checks(spec: PlatformSpec) -> list[tuple[str, str]]:
    """Every Secret, PVC and NFS export a workload or storage names is created by the stack or
    declared in ``platform.prerequisites``."""
    pre = spec.prerequisites
    secrets = {(s.namespace, s.name) for s in pre.secrets} | created_secrets(spec)
    claims = {(c.namespace, c.name): c for c in pre.persistent_volume_claims}
    problems: list[tuple[str, str]] = []

    def need_secret(path: str, namespace: str, name: str, key: str | None = None) -> None:
        if (namespace, name) not in secrets:
            keys = f", keys: [{key}]" if key else ""
            problems.append(
                (
                    path,
                    f"Secret {namespace}/{name} is neither created by the stack nor declared: create it, then add "
                    f"{{namespace: {namespace}, name: {name}{keys}}} to platform.prerequisites.secrets",
                )
            )

    clients = storage_clients(spec)
    for name, storage in spec.gcs_storage.items():
        base = f"gcsStorage.{name}"
        if isinstance(storage, InClusterRedis) and storage.password.secret is not None:
            existing = storage.password.secret
            for ns in password_namespaces(storage, clients[name]):
                need_secret(f"{base}.password.secret", ns, existing.name, existing.key)
        if isinstance(storage, ExternalRedis):
            refs: list[tuple[str, SecretKeyRef | None]] = [
                ("passwordSecret", storage.password_secret),
                ("username", storage.username),
                ("caSecret", storage.ca_secret),
            ]
            for field_name, ref in refs:
                if ref is not None:
                    for ns in sorted(clients[name]):
                        need_secret(f"{base}.{field_name}", ns, ref.name, ref.key)
    if spec.kueue.multi_kueue is not None:
        for i, worker in enumerate(spec.kueue.multi_kueue.clusters):
            need_secret(
                f"kueue.multiKueue.clusters[{i}].kubeconfigSecret",
                spec.kueue.namespace,
                worker.kubeconfig_secret,
                "kubeconfig",
            )
    for path, w in spec.workloads.all():
        if w.history_server and spec.history_server is not None:
            for env, ref in spec.history_server.credentials.items():
                need_secret(f"historyServer.credentials.{env}", w.namespace, ref.name, ref.key)
        for i, secret in enumerate(w.secret_env):
            need_secret(f"{path}.secretEnv[{i}]", w.namespace, secret)
        if w.head.ingress is not None and w.head.ingress.tls_secret and not w.head.ingress.certificate:
            need_secret(f"{path}.head.ingress.tlsSecret", w.namespace, w.head.ingress.tls_secret)
        if w.auth.token is not None and w.auth.token.secret is not None:
            need_secret(f"{path}.auth.token.secret", w.namespace, w.auth.token.secret.name, w.auth.token.secret.key)
        for i, volume in enumerate(w.volumes):
            declared = claims.get((w.namespace, volume.pvc.claim_name)) if volume.pvc is not None else None
            if (
                volume.pvc is not None
                and declared is not None
                and volume.pvc.read_write_many
                and declared.access_mode != "ReadWriteMany"
            ):
                problems.append(
                    (
                        f"{path}.volumes[{i}].pvc.readWriteMany",
                        f"PVC {w.namespace}/{volume.pvc.claim_name} is declared {declared.access_mode} in "
                        "platform.prerequisites.persistentVolumeClaims; a claim every pod mounts must be ReadWriteMany",
                    )
                )
            if volume.pvc is not None and declared is None:
                mode = "ReadWriteMany" if volume.pvc.read_write_many else "ReadWriteOnce"
                problems.append(
                    (
                        f"{path}.volumes[{i}].pvc.claimName",
                        f"PVC {w.namespace}/{volume.pvc.claim_name} is not declared: create it, then add "
                        f"{{namespace: {w.namespace}, name: {volume.pvc.claim_name}, accessMode: {mode}}} to "
                        "platform.prerequisites.persistentVolumeClaims",
                    )
                )
            if volume.nfs is not None and not any(
                e.server == volume.nfs.server and _under(volume.nfs.path, e.path) for e in pre.nfs_exports
            ):
                problems.append(
                    (
                        f"{path}.volumes[{i}].nfs",
                        f"NFS export {volume.nfs.server}:{volume.nfs.path} is not declared: add {{server: "
                        f"{volume.nfs.server}, path: {volume.nfs.path}}} to platform.prerequisites.nfsExports",
                    )
                )
    return problems


def _under(path: str, export: str) -> bool:
    export = export.rstrip("/") or "/"
    return path == export or path.startswith(export if export == "/" else export + "/")


def _gcs_checks(spec: PlatformSpec, path: str, workload: ClusterBase) -> list[tuple[str, str]]:
    ft = workload.gcs_fault_tolerance
    if ft is None:
        return []
    problems: list[tuple[str, str]] = []
    if ft.backend == "redis" and ft.storage not in spec.gcs_storage:
        defined = ", ".join(sorted(spec.gcs_storage)) or "none"
        problems.append(
            (
                f"{path}.gcsFaultTolerance.storage",
                f"unknown storage {ft.storage!r} (platform.gcsStorage defines: {defined}); add it there as "
                "type: redis (in-cluster) or type: external",
            )
        )
    if ft.backend == "rocksdb" and not ft.retain_storage and spec.environment == "prod":
        problems.append(
            (
                f"{path}.gcsFaultTolerance.retainStorage",
                "must stay true in prod: deleting the cluster would delete its GCS state (deletionPolicy Retain)",
            )
        )
    if ft.deletion_timeout_seconds is not None and isinstance(workload, RayJobSpec) and workload.schedule:
        problems.append(
            (
                f"{path}.gcsFaultTolerance.deletionTimeoutSeconds",
                "a RayCronJob does not pass annotations to the RayJobs it creates (KubeRay 1.7.0); drop it",
            )
        )
    return problems


def storage_clients(spec: PlatformSpec) -> dict[str, dict[str, list[str]]]:
    """storage name -> client namespace -> the workloads there that use it."""
    clients: dict[str, dict[str, list[str]]] = {name: {} for name in spec.gcs_storage}
    for _, w in spec.workloads.all():
        ft = w.gcs_fault_tolerance
        if ft is not None and ft.backend == "redis" and ft.storage in clients:
            clients[ft.storage].setdefault(w.namespace, []).append(w.name)
    return clients


def in_cluster_redis(spec: PlatformSpec) -> dict[str, InClusterRedis]:
    return {name: s for name, s in spec.gcs_storage.items() if isinstance(s, InClusterRedis)}


def _service_checks(path: str, service: RayServiceSpec, pools: Mapping[str, Any]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    gpu_pools = [pools[g.pool] for g in service.worker_groups if isinstance(pools.get(g.pool), GpuPool)]
    if (
        upgrade_strategy(service, pools) == "NewClusterWithIncrementalUpgrade"
        and not service.upgrade.gateway_class_name
    ):
        problems.append(
            (
                f"{path}.upgrade.gatewayClassName",
                "required: services holding accelerators upgrade incrementally through Gateway API; name the "
                "GatewayClass (e.g. istio), or set upgrade.strategy: NewCluster",
            )
        )
    for i, app in enumerate(service.applications):
        if not isinstance(app, LlmApp):
            continue
        if not gpu_pools:
            problems.append((f"{path}.applications[{i}]", "an LLM app needs a worker group on a GPU pool"))
            continue
        per_pod = max(p.gpus_per_pod for p in gpu_pools)
        gpus_at_max = sum(
            pools[g.pool].gpus_per_pod * g.max_replicas
            for g in service.worker_groups
            if isinstance(pools.get(g.pool), GpuPool)
        )
        needed = sum(m.min_replicas * m.gpus_per_replica for m in app.models)
        if needed > gpus_at_max:
            problems.append(
                (
                    f"{path}.applications[{i}].models",
                    f"the models' minimum replicas need {needed} GPUs (tensor x pipeline parallel x minReplicas) but "
                    f"the GPU worker groups reach only {gpus_at_max} at maxReplicas; raise maxReplicas",
                )
            )
        advertised = sorted({t for p in gpu_pools if (t := p.ray_accelerator_type)})
        for j, model in enumerate(app.models):
            if model.accelerator_type and model.accelerator_type not in advertised:
                problems.append(
                    (
                        f"{path}.applications[{i}].models[{j}].acceleratorType",
                        f"{model.accelerator_type!r} is not the accelerator type of any GPU pool this service runs on "
                        f"(they advertise {advertised or 'none'}); the autoscaler could never add nodes for it. Set "
                        "the pool's acceleratorType (or product), or drop acceleratorType from the model",
                    )
                )
            if model.tensor_parallel_size > per_pod:
                problems.append(
                    (
                        f"{path}.applications[{i}].models[{j}].tensorParallelSize",
                        f"{model.tensor_parallel_size} exceeds the {per_pod} GPUs of one pod; tensor parallelism "
                        "stays within a pod, use pipelineParallelSize to span pods",
                    )
                )
    return problems


def has_accelerators(workload: ClusterBase, pools: Mapping[str, Any]) -> bool:
    return any(isinstance(pools.get(g.pool), (GpuPool, TpuPool)) for g in workload.worker_groups)


def upgrade_strategy(service: RayServiceSpec, pools: Mapping[str, Any]) -> str:
    """The RayService upgrade strategy ``auto`` resolves to."""
    if service.upgrade.strategy != "auto":
        return service.upgrade.strategy
    return "NewClusterWithIncrementalUpgrade" if has_accelerators(service, pools) else "NewCluster"


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
        path, _ = _walk(root, loc)
        kind = err["type"]
        shown = "a value (hidden: the key names a secret)" if SECRET_NAME.search(path) else _short(err.get("input"))
        if loc and loc[-1] == "[key]":  # a map key that is not one of the allowed names
            lines.append(f"{path}: unknown key; {err['msg'].replace('Input should be', 'expected')}")
        elif kind == "string_pattern_mismatch":
            hint = PATTERN_HINTS.get(str((err.get("ctx") or {}).get("pattern")), err["msg"])
            lines.append(f"{path}: expected {hint} (got {shown})")
        elif kind == "extra_forbidden":
            _, parent = _walk(root, loc[:-1])
            allowed = sorted(f.alias or n for n, f in parent.model_fields.items()) if parent else []
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            lines.append(f"{path}: unknown key{hint} (expected one of: {', '.join(allowed)})")
        elif kind == "missing":
            lines.append(f"{path}: required key is missing")
        elif kind == "union_tag_invalid":
            expected = (err.get("ctx") or {}).get("expected_tags", "")
            # Both tagged unions of the spec (pools, applications) are tagged by their ``type`` key.
            lines.append(
                f"{path}.type: unknown type {(err.get('ctx') or {}).get('tag')!r} (expected one of: {expected})"
            )
        elif kind == "union_tag_not_found":
            lines.append(f"{path}: {err['msg']}")
        elif kind == "string_type" and isinstance(err.get("input"), int | float):
            lines.append(f'{path}: expected text, got the number {shown}; quote it in YAML (e.g. "1.30")')
        elif kind == "value_error":
            msg = err["msg"].removeprefix("Value error, ")
            field = re.match(r"^(\w+): (.*)$", msg)
            if field:  # validators name the key they judge: "maxReplicas: must be ..."
                path, msg = f"{path}.{field.group(1)}", field.group(2)
            lines.append(f"{path}: {msg}")
        else:
            lines.append(f"{path}: {err['msg']} (got {shown})")
    return lines


_INTERNAL = re.compile(r"^(function-after|function-before|function-wrap|literal|union|tagged-union)\[")


def format_path(loc: Sequence[Any]) -> str:
    """A pydantic error location as the user wrote it: ``platform.workloads.rayJobs[0].entrypoint``."""
    return _walk(PlatformSpec, loc[1:] if loc and loc[0] == CONFIG_KEY else loc)[0]


def _walk(root: type[BaseModel], loc: Sequence[Any]) -> tuple[str, type[BaseModel] | None]:
    """(the key path the user wrote, the model found there) for a pydantic error location. Union
    tags and validator steps that pydantic puts in ``loc`` are not keys and are left out."""
    out = CONFIG_KEY
    ann: Any = root
    for part in loc:
        ann = _unwrap_optional(ann)
        if isinstance(part, int):
            out += f"[{part}]"
            ann = _container_item(ann)
            continue
        if part == "[key]" or _INTERNAL.match(str(part)):
            continue
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        if model is not None:
            field = next((f for n, f in model.model_fields.items() if part in (n, f.alias)), None)
            out += f".{part}"
            ann = field.annotation if field is not None else None
            continue
        members = _union_members(ann)
        if part in members:  # a discriminated union's tag: choose the member, show nothing
            ann = members[part]
            continue
        out += f".{part}"
        ann = _container_item(ann)
    ann = _unwrap_optional(ann)
    return out, ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _unwrap_optional(ann: Any) -> Any:
    args = [a for a in get_args(ann) if a is not type(None)]
    if get_origin(ann) in (Union, UnionType) and len(args) == 1:
        return args[0]
    if get_origin(ann) is Annotated:
        return _unwrap_optional(get_args(ann)[0])
    return ann


def _container_item(ann: Any) -> Any:
    """The item type of ``list[X]`` and the value type of ``dict[K, X]``."""
    origin, args = get_origin(ann), get_args(ann)
    if origin in (list, tuple) and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def _union_members(ann: Any) -> dict[str, Any]:
    """tag -> member of a discriminated union (``Tag`` metadata, or a ``type: Literal[...]`` field)."""
    if get_origin(ann) is Annotated:
        ann = get_args(ann)[0]
    members: dict[str, Any] = {}
    for member in get_args(ann) if get_origin(ann) in (Union, UnionType) else ():
        target, tag = member, None
        if get_origin(member) is Annotated:
            target = get_args(member)[0]
            tag = next((m.tag for m in member.__metadata__ if isinstance(m, Tag)), None)
        if tag is None and isinstance(target, type) and issubclass(target, BaseModel) and "type" in target.model_fields:
            literal = get_args(target.model_fields["type"].annotation)
            tag = literal[0] if literal else None
        if tag is not None:
            members[str(tag)] = target
    return members


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """Every model class inside an annotation (``list[X] | None``, unions, dict values)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        found += models_in(arg)
    return found
