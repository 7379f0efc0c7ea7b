"""Everything the platform emits for one stack, derived from the spec in one pure step.

Components only hand these dicts to Pulumi; tests and the offline engine can build them without
Pulumi. Feature gates are derived here, from the workload objects themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.errors import ConfigError
from components.manifests.capacity import Amounts, Capacity, plans
from components.manifests.certificates import CertManagerManifests, cert_manager, ingress_annotations
from components.manifests.cluster import has_gpus
from components.manifests.common import metadata
from components.manifests.dashboards import dashboard_config_maps
from components.manifests.feature_gates import required_gates, resolve_gates
from components.manifests.gateway import serving_gateway
from components.manifests.gitops import GitOpsManifests, gitops
from components.manifests.kueue import kueue_objects
from components.manifests.kueue_install import KueueInstallManifests, kueue_install
from components.manifests.lifecycle import with_lifecycle_annotations
from components.manifests.monitoring import operator_service_monitor, pod_monitors, prometheus_rule, rule_groups
from components.manifests.namespace import PodSecurityLevel, namespace
from components.manifests.namespace_policies import namespace_policies
from components.manifests.operator_values import operator_values, team_operator_values
from components.manifests.prometheus_stack import PrometheusStackManifests, prometheus_stack
from components.manifests.quantity import parse_quantity
from components.manifests.quota_fit import queued_admissions
from components.manifests.ray_objects import MULTIKUEUE_MANAGER, as_map, queue_name, queued_metadata
from components.manifests.redis import RedisManifests, redis_manifests
from components.manifests.tenancy import quota_shortfalls, team_objects
from components.manifests.volumes import nfs_volumes
from components.manifests.workloads import (
    ray_cluster,
    ray_job,
    ray_service,
    with_batch_scheduling,
    with_elastic_gates,
    with_history_collector,
)
from components.spec import (
    CONFIG_KEY,
    ClusterBase,
    LlmApp,
    PlatformSpec,
    RayClusterSpec,
    RayJobSpec,
    RayServiceSpec,
)
from components.spec.platform import in_cluster_redis, storage_clients, upgrade_strategy


@dataclass(frozen=True)
class PlatformManifests:
    spec: PlatformSpec
    operator_namespace: dict[str, Any]
    operator_values: dict[str, Any]
    workload_namespaces: list[dict[str, Any]]
    """Every namespace the platform owns besides the operator's: its workloads', the operator's
    watch list and ``platform.namespaces``. They exist before the chart (which renders Roles into
    watched namespaces) and before anything that lives in them."""
    workloads: list[dict[str, Any]]
    """Every Ray object: RayClusters, RayJobs/RayCronJobs, RayServices, in spec order."""
    gateways: list[dict[str, Any]] = field(default_factory=list)
    """Internal Gateways of incrementally upgraded RayServices (``components.manifests.gateway``),
    created before their RayService."""
    gates_needed: dict[str, list[str]] = field(default_factory=dict)
    redis: list[RedisManifests] = field(default_factory=list)
    """The in-cluster GCS Redis servers (``platform.gcsStorage`` entries of type redis)."""
    kueue: list[dict[str, Any]] = field(default_factory=list)
    """Kueue ResourceFlavors, WorkloadPriorityClasses, ClusterQueues and LocalQueues, in creation order."""
    kueue_install: KueueInstallManifests | None = None
    """Kueue itself, when the stack installs it (``kueue.install``)."""
    gitops: GitOpsManifests | None = None
    """The Pulumi Kubernetes Operator and its Stacks (``platform.gitops``)."""
    teams: list[dict[str, Any]] = field(default_factory=list)
    """LimitRanges, ResourceQuotas, Roles and RoleBindings of the team namespaces (``platform.teams``)."""
    monitoring: list[dict[str, Any]] = field(default_factory=list)
    """PodMonitors, the operator's ServiceMonitor, the PrometheusRule and the dashboard ConfigMaps
    (``platform.monitoring``)."""
    prometheus_stack: PrometheusStackManifests | None = None
    """kube-prometheus-stack, when the stack installs it (``monitoring.install``)."""
    team_operators: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    """(team, namespace, chart values) of each team's own single-namespace operator."""
    shared_volumes: list[dict[str, Any]] = field(default_factory=list)
    """PersistentVolumes and PVCs for the workloads' NFS exports, before the workloads."""
    token_secrets: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    """(metadata, Pulumi config key) of each Ray auth token Secret the stack creates (key
    ``auth_token``), before the workloads that name it."""
    cert_manager: CertManagerManifests | None = None
    """cert-manager (when installed), the platform's ClusterIssuers and dashboard certificates."""
    network_policies: list[dict[str, Any]] = field(default_factory=list)
    """Default deny and the platform's allowances in every namespace that runs Ray
    (``platform.networkPolicies``), created before the workloads."""

    @property
    def capacity(self) -> list[Capacity]:
        return plans(self.workloads)


def monitoring_objects(spec: PlatformSpec, workloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """PodMonitors over the namespaces of the stack's workloads, the operator's ServiceMonitor, the
    environment's rules and its dashboards."""
    monitoring = spec.monitoring
    if monitoring is None:
        return []
    env, pools = spec.environment, spec.workloads.pools
    watched = sorted({w.namespace for _, w in spec.workloads.all()})
    groups = rule_groups(
        monitoring,
        workloads,
        watched,
        spec.operator.namespace,
        has_gpus=any(has_gpus(w, pools) for _, w in spec.workloads.all()),
        has_llm=any(isinstance(a, LlmApp) for s in spec.workloads.ray_services for a in s.applications),
    )
    monitors = pod_monitors(monitoring, watched, env) if watched else []
    dashboards = dashboard_config_maps(
        monitoring, env, watched, spec.operator.namespace, serving=bool(spec.workloads.ray_services)
    )
    operator = operator_service_monitor(
        monitoring, spec.operator.namespace, spec.operator.service_monitor.interval, env
    )
    return [*monitors, operator, prometheus_rule(monitoring, groups, env), *dashboards]


def baseline_reasons(spec: PlatformSpec, namespace: str) -> list[str]:
    """Why a workload namespace cannot enforce Pod Security ``restricted``: pods there that the
    platform cannot make restricted. Every pod template the platform writes is restricted (non-root,
    no privilege escalation, all capabilities dropped, RuntimeDefault seccomp)."""
    reasons = []
    for _, w in spec.workloads.all():
        if w.namespace != namespace:
            continue
        if w.history_server:
            reasons.append(f"{w.name}: KubeRay 1.7.0's history collector sidecar has no securityContext")
        if (
            isinstance(w, RayServiceSpec)
            and upgrade_strategy(w, spec.workloads.pools) == "NewClusterWithIncrementalUpgrade"
        ):
            reasons.append(
                f"{w.name}: the Gateway controller deploys its proxies here (Istio's set no seccomp profile)"
            )
    return reasons


def pod_security_level(spec: PlatformSpec, namespace: str) -> PodSecurityLevel:
    """``restricted``, or ``baseline`` where ``baseline_reasons`` says so (warn and audit stay
    ``restricted`` everywhere)."""
    return "baseline" if baseline_reasons(spec, namespace) else "restricted"


def operator_pod(values: Mapping[str, Any]) -> list[Amounts]:
    """The pods of an operator release (one per replica) at their limits, as a quota counts them."""
    limits = as_map(as_map(values.get("resources")).get("limits"))
    pod = Amounts(
        cpu=parse_quantity(limits.get("cpu", "0")) or 0.0, memory=parse_quantity(limits.get("memory", "0")) or 0.0
    )
    return [pod] * int(values.get("replicas", 1))


def network_objects(
    spec: PlatformSpec, workloads: list[dict[str, Any]], redis: list[RedisManifests]
) -> list[dict[str, Any]]:
    network = spec.network_policies
    if network is None:
        return []
    if network.metrics_from is not None:
        metrics_from = list(network.metrics_from)
    else:
        metrics_from = [spec.monitoring.prometheus.namespace] if spec.monitoring is not None else []
    gateways = {
        (s.namespace, s.name): s.upgrade.exposure == "internal"
        for s in spec.workloads.ray_services
        if upgrade_strategy(s, spec.workloads.pools) == "NewClusterWithIncrementalUpgrade"
    }
    return namespace_policies(
        network,
        workloads,
        spec.operator.namespace,
        metrics_from,
        {r.name: r.namespace for r in redis},
        gateways,
        spec.environment,
        frozenset(team.namespace or name for name, team in spec.teams.items() if team.own_operator),
    )


def _dispatched(obj: dict[str, Any], spec: PlatformSpec) -> dict[str, Any]:
    """``spec.managedBy: kueue.x-k8s.io/multikueue`` on a workload MultiKueue dispatches, set here
    rather than left to Kueue's webhook (which sets it only if the ClusterQueue has its MultiKueue
    check when the workload is created): the local operator must never run it."""
    meta = queued_metadata(obj)
    if spec.kueue.dispatched(str(meta.get("namespace") or obj["metadata"]["namespace"]), queue_name(obj)):
        owner = obj["spec"]["jobTemplate"] if obj["kind"] == "RayCronJob" else obj["spec"]
        owner["managedBy"] = MULTIKUEUE_MANAGER
    return obj


def build_manifests(spec: PlatformSpec, source: str) -> PlatformManifests:
    """All objects for ``spec``; raises ConfigError (naming ``source``) on contradictions."""
    env, kube, op_ns = spec.environment, spec.kubernetes_version, spec.operator.namespace
    pools, stores = spec.workloads.pools, spec.gcs_storage
    scheduler = spec.operator.batch_scheduler

    def build(w: ClusterBase) -> dict[str, Any]:
        if isinstance(w, RayJobSpec):
            return ray_job(w, pools, env, op_ns, stores)
        if isinstance(w, RayServiceSpec):
            return ray_service(w, pools, env, op_ns, stores)
        assert isinstance(w, RayClusterSpec)
        return ray_cluster(w, pools, env, op_ns, stores)

    def finish(obj: dict[str, Any], w: ClusterBase) -> dict[str, Any]:
        """What a workload carries beyond its own spec: the batch scheduler's labels, Kueue's elastic
        gates and MultiKueue's manager, the history collector; then the lifecycle annotations, which
        depend on all of them."""
        obj = with_batch_scheduling(obj, w, scheduler)
        obj = with_elastic_gates(obj, w)
        obj = with_history_collector(obj, w, spec.history_server)
        obj = _dispatched(obj, spec)
        if annotations := ingress_annotations(w):
            meta = obj["metadata"]
            meta["annotations"] = {**meta.get("annotations", {}), **annotations}
        return with_lifecycle_annotations(obj, spec.workloads.wait_for_ready)

    workloads = [finish(build(w), w) for _, w in spec.workloads.all()]
    clients = storage_clients(spec)
    redis = [redis_manifests(name, s, env, clients[name]) for name, s in in_cluster_redis(spec).items()]
    gateways = [
        g
        for w in spec.workloads.ray_services
        if upgrade_strategy(w, pools) == "NewClusterWithIncrementalUpgrade"
        and (g := serving_gateway(w, env)) is not None
    ]
    needed = required_gates(workloads)
    gates = resolve_gates(spec.operator.feature_gates, needed, source)
    owned = (
        {w.namespace for _, w in spec.workloads.all()}
        | set(spec.operator.watch_namespaces or ())
        | set(spec.namespaces)
        | {r.namespace for r in redis}
        | {q.namespace for q in spec.kueue.local_queues}
        | {team.namespace or name for name, team in spec.teams.items()}
    )
    names = sorted(owned - {spec.operator.namespace})
    if spec.monitoring is not None and spec.monitoring.install is not None:
        monitoring_ns = spec.monitoring.prometheus.namespace
        if monitoring_ns in owned | {spec.operator.namespace}:
            raise ConfigError(
                [
                    f"{source}: {CONFIG_KEY}.monitoring.prometheus.namespace: {monitoring_ns} is a namespace of "
                    "workloads, teams or the operator; kube-prometheus-stack needs its own (e.g. monitoring)"
                ]
            )
    kueue = kueue_objects(spec.kueue, pools, env)
    paths = {id(obj): path for obj, (path, _) in zip(workloads, spec.workloads.all(), strict=True)}
    unfit = [
        f"{source}: {CONFIG_KEY}.{paths[id(obj)]}.queue: Kueue would never admit it: {admission.problem}"
        for obj, admission in queued_admissions(workloads, kueue)
        if admission.problem
    ]
    platform_operator = operator_values(spec.operator, gates, spec.monitoring)
    team_operators = [
        (name, team.namespace or name, team_operator_values(platform_operator))
        for name, team in spec.teams.items()
        if team.own_operator
    ]
    for name, team in spec.teams.items():
        team_namespace = team.namespace or name
        members = [o for o in workloads if o["metadata"]["namespace"] == team_namespace]
        own = [operator_pod(values) for n, _, values in team_operators if n == name]
        unfit += [
            f"{source}: {CONFIG_KEY}.teams.{name}.quota.{key}: {message}"
            for key, message in quota_shortfalls(team, members, [pod for pods in own for pod in pods])
        ]
    if unfit:
        raise ConfigError(unfit)
    return PlatformManifests(
        spec=spec,
        # The operator runs with a restricted securityContext (non-root, no privilege escalation,
        # all capabilities dropped, RuntimeDefault seccomp), so its namespace can enforce restricted.
        operator_namespace=namespace(spec.operator.namespace, env, "kuberay-operator", "restricted", kube),
        operator_values=platform_operator,
        team_operators=team_operators,
        workload_namespaces=[namespace(n, env, "ray-workloads", pod_security_level(spec, n), kube) for n in names],
        workloads=workloads,
        gateways=gateways,
        gates_needed=needed,
        redis=redis,
        kueue=kueue,
        monitoring=monitoring_objects(spec, workloads),
        teams=[obj for name, team in spec.teams.items() for obj in team_objects(name, team, env)],
        kueue_install=(kueue_install(spec.kueue.install, env, kube) if spec.kueue.install is not None else None),
        gitops=gitops(spec.gitops, env, kube) if spec.gitops is not None else None,
        network_policies=network_objects(spec, workloads, redis),
        shared_volumes=nfs_volumes([w for _, w in spec.workloads.all()], env),
        token_secrets=[
            (metadata(f"{w.name}-ray-token", w.namespace, env, "ray-auth"), w.auth.token.config)
            for _, w in spec.workloads.all()
            if w.auth.token is not None and w.auth.token.config
        ],
        cert_manager=(
            cert_manager(spec.cert_manager, [w for _, w in spec.workloads.all()], env, kube)
            if spec.cert_manager is not None
            else None
        ),
        prometheus_stack=(
            prometheus_stack(spec.monitoring, env, kube)
            if spec.monitoring is not None and spec.monitoring.install is not None
            else None
        ),
    )
