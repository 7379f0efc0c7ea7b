"""RayCluster, RayJob, RayCronJob and RayService objects built from the workload specs (pure)."""

from __future__ import annotations

from typing import Any

import yaml

from components.manifests.cluster import (
    RESTRICTED_CONTAINER,
    WORKLOAD_LABEL,
    GcsStores,
    Pools,
    WorkerOptions,
    cluster_body,
    restricted_pod,
)
from components.manifests.common import metadata
from components.manifests.gateway import SERVING_AUTH_ANNOTATION
from components.manifests.ray_objects import (
    ELASTIC_JOB_ANNOTATION,
    ELASTIC_JOB_SCHEDULING_GATE,
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
    cluster_spec,
    pod_groups,
)
from components.spec import (
    ClusterBase,
    LlmApp,
    RayClusterSpec,
    RayJobSpec,
    RayServiceSpec,
    ServeApp,
    upgrade_strategy,
)
from components.spec.monitoring import HISTORY_BUCKET_ENV, HistoryServerSpec
from components.upstream import LLM_IMPORT_PATH

LLM_GRACE_PERIOD_SECONDS = 600
"""Drain time of LLM serving workers (seeds ch. 8.10: 300-600 s); long generations finish."""
SHUTDOWN_MARGIN_SECONDS = 30
"""Ray Serve's replica drain ends this long before Kubernetes kills the pod."""
API_VERSION = "ray.io/v1"
SUBMITTER_CONTAINER = "ray-job-submitter"
"""KubeRay's name for it (``utils.SubmitterContainerName``)."""


GCS_DELETION_TIMEOUT_ANNOTATION = "ray.io/gcs-ft-deletion-timeout"
"""Seconds KubeRay waits for its Redis cleanup Job before removing the finalizer anyway; read from the
RayCluster, to which RayJobs and RayServices copy their annotations."""


def _with_gcs_annotations(meta: dict[str, Any], w: ClusterBase) -> dict[str, Any]:
    ft = w.gcs_fault_tolerance
    if ft is not None and ft.deletion_timeout_seconds is not None:
        meta.setdefault("annotations", {})[GCS_DELETION_TIMEOUT_ANNOTATION] = str(ft.deletion_timeout_seconds)
    return meta


def _with_kueue(meta: dict[str, Any], w: ClusterBase) -> dict[str, Any]:
    """Queue and priority labels and the elastic annotation of a Kueue-queued workload. KubeRay copies
    a RayJob's and a RayService's labels and annotations to the RayCluster it creates."""
    if w.queue:
        meta.setdefault("labels", {})[QUEUE_LABEL] = w.queue
    if w.priority_class:
        meta.setdefault("labels", {})[PRIORITY_CLASS_LABEL] = w.priority_class
    if w.elastic:
        meta.setdefault("annotations", {})[ELASTIC_JOB_ANNOTATION] = "true"
    return meta


def with_elastic_gates(obj: dict[str, Any], w: ClusterBase) -> dict[str, Any]:
    """An elastic RayCluster's or RayService's pod templates carry Kueue's ``kueue.x-k8s.io/elastic-job``
    scheduling gate. Kueue's webhook adds it on create and refuses an update without it
    (``raycluster_webhook.go`` validateElasticJob): emitted here, the next ``pulumi up`` keeps it
    instead of applying it away. (Kueue ungates the pods it admits, not the templates.)"""
    if not w.elastic or obj["kind"] not in ("RayCluster", "RayService"):
        return obj
    for group in pod_groups(obj):
        spec = group.group["template"].setdefault("spec", {})
        gates = spec.setdefault("schedulingGates", [])
        if {"name": ELASTIC_JOB_SCHEDULING_GATE} not in gates:
            gates.append({"name": ELASTIC_JOB_SCHEDULING_GATE})
    return obj


def history_collector_env(history: HistoryServerSpec) -> list[dict[str, Any]]:
    """The collector's environment: the storage as KubeRay validates it (``STORAGE_BACKEND`` a literal,
    the backend's bucket, region and endpoint variables), credentials from Secrets."""
    s = history.storage
    env: list[dict[str, Any]] = [
        {"name": "STORAGE_BACKEND", "value": s.backend},
        {"name": HISTORY_BUCKET_ENV[s.backend], "value": s.bucket},
    ]
    region = {"s3": "S3_REGION", "aliyunoss": "OSS_REGION"}.get(s.backend)
    if s.region and region:
        env.append({"name": region, "value": s.region})
    endpoint = {"s3": "S3_ENDPOINT", "aliyunoss": "OSS_ENDPOINT", "azureblob": "AZURE_STORAGE_ACCOUNT_URL"}.get(
        s.backend
    )
    if s.endpoint and endpoint:
        env.append({"name": endpoint, "value": s.endpoint})
    env += [
        {"name": name, "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}}}
        for name, ref in sorted(history.credentials.items())
    ]
    return env


def with_history_collector(obj: dict[str, Any], w: ClusterBase, history: HistoryServerSpec | None) -> dict[str, Any]:
    """``historyServerOptions`` on the cluster of a workload with ``historyServer: true``."""
    found = cluster_spec(obj)
    if not w.history_server or history is None or found is None:
        return obj
    cluster = found[1]
    assert isinstance(cluster, dict)
    cluster["historyServerOptions"] = {
        "collectorOptions": {"image": history.collector_image, "env": history_collector_env(history)}
    }
    return obj


BATCH_QUEUE_LABELS = {
    "volcano": "volcano.sh/queue-name",
    "yunikorn": "yunikorn.apache.org/queue",
    "kai-scheduler": "kai.scheduler/queue",
}
GANG_LABEL = "ray.io/gang-scheduling-enabled"
VOLCANO_PRIORITY_LABEL = "ray.io/priority-class-name"
YUNIKORN_APP_LABEL = "yunikorn.apache.org/app-id"


def batch_scheduling_labels(w: ClusterBase, scheduler: str | None) -> dict[str, str]:
    """The labels KubeRay 1.7.0's batch scheduler ``scheduler`` reads from a workload."""
    options = w.batch_scheduling
    if scheduler is None:
        return {}
    labels: dict[str, str] = {}
    if scheduler == "yunikorn":  # one application per workload, or YuniKorn makes one per pod
        labels[YUNIKORN_APP_LABEL] = f"{w.namespace}-{w.name}"
    if options is None:
        return labels
    if options.queue and scheduler in BATCH_QUEUE_LABELS:
        labels[BATCH_QUEUE_LABELS[scheduler]] = options.queue
    if options.priority_class and scheduler == "volcano":
        labels[VOLCANO_PRIORITY_LABEL] = options.priority_class
    if options.gang and scheduler in ("yunikorn", "scheduler-plugins"):
        labels[GANG_LABEL] = "true"
    return labels


def with_batch_scheduling(obj: dict[str, Any], w: ClusterBase, scheduler: str | None) -> dict[str, Any]:
    """``obj`` with the batch scheduler's labels (a RayCronJob's go on its job template: KubeRay reads
    them from each RayJob)."""
    labels = batch_scheduling_labels(w, scheduler)
    if labels:
        meta = obj["spec"].setdefault("metadata", {}) if obj["kind"] == "RayCronJob" else obj["metadata"]
        meta.setdefault("labels", {}).update(labels)
    return obj


def ray_cluster(
    w: RayClusterSpec, pools: Pools, environment: str, operator_namespace: str, stores: GcsStores | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "RayCluster",
        "metadata": _with_kueue(_with_gcs_annotations(metadata(w.name, w.namespace, environment, "ray-cluster"), w), w),
        "spec": cluster_body(w, pools, operator_namespace=operator_namespace, stores=stores),
    }


# --- RayJob / RayCronJob ----------------------------------------------------------------------


def _runtime_env_yaml(job: RayJobSpec) -> str | None:
    env: dict[str, Any] = {}
    if job.runtime_env.working_dir:
        env["working_dir"] = job.runtime_env.working_dir
    env_vars = dict(job.runtime_env.env_vars)
    if job.runtime_env.code_dir:
        env_vars["PYTHONPATH"] = ":".join(p for p in (job.runtime_env.code_dir, env_vars.get("PYTHONPATH")) if p)
    if env_vars:
        env["env_vars"] = dict(sorted(env_vars.items()))
    return yaml.safe_dump(env, sort_keys=False) if env else None


def _condition(job_status: str | None, deployment_status: str | None, ttl: int) -> dict[str, Any]:
    if job_status is not None:
        return {"jobStatus": job_status, "ttlSeconds": ttl}
    return {"jobDeploymentStatus": deployment_status, "ttlSeconds": ttl}


def ray_job_spec(
    job: RayJobSpec, pools: Pools, operator_namespace: str, stores: GcsStores | None = None
) -> dict[str, Any]:
    """The RayJob ``spec`` (also a RayCronJob's ``jobTemplate``)."""
    spec: dict[str, Any] = {"entrypoint": job.entrypoint, "submissionMode": job.submission_mode}
    runtime_env = _runtime_env_yaml(job)
    if runtime_env:
        spec["runtimeEnvYAML"] = runtime_env
    if job.resolved_cleanup == "shutdownAfterJobFinishes":
        spec["shutdownAfterJobFinishes"] = True
        spec["ttlSecondsAfterFinished"] = job.ttl_seconds_after_finished
    else:  # never combined with shutdownAfterJobFinishes or a TTL
        spec["deletionStrategy"] = {
            "deletionRules": [
                {"policy": r.policy, "condition": _condition(r.job_status, r.job_deployment_status, r.ttl_seconds)}
                for r in job.resolved_deletion_rules
            ]
        }
    if job.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = job.active_deadline_seconds
    spec["backoffLimit"] = job.backoff_limit
    spec["rayClusterSpec"] = cluster_body(job, pools, operator_namespace=operator_namespace, stores=stores)
    if job.submission_mode == "K8sJobMode":
        spec["submitterPodTemplate"] = submitter_template(job, spec["rayClusterSpec"])
    return spec


def submitter_template(job: RayJobSpec, cluster: dict[str, Any]) -> dict[str, Any]:
    """The K8sJobMode submitter's pod: KubeRay 1.7.0's default (``GetDefaultSubmitterContainer``: the
    head's image, 500m CPU / 200Mi requested, 1 CPU / 1Gi limits, ``restartPolicy: Never``; KubeRay
    fills in the ``ray job submit`` command) with the workload label the platform's NetworkPolicies
    and monitors select by, and a restricted securityContext."""
    head = cluster["headGroupSpec"]["template"]
    container = {
        "name": SUBMITTER_CONTAINER,
        "image": head["spec"]["containers"][0]["image"],
        "resources": {"requests": {"cpu": "500m", "memory": "200Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
        "securityContext": dict(RESTRICTED_CONTAINER),
    }
    return {
        "metadata": {"labels": {WORKLOAD_LABEL: job.name}},
        "spec": {"restartPolicy": "Never", "securityContext": restricted_pod(job), "containers": [container]},
    }


def ray_job(
    job: RayJobSpec, pools: Pools, environment: str, operator_namespace: str, stores: GcsStores | None = None
) -> dict[str, Any]:
    """A RayJob, or a RayCronJob when the job has a schedule."""
    spec = ray_job_spec(job, pools, operator_namespace, stores)
    if job.schedule is None:
        meta = _with_kueue(_with_gcs_annotations(metadata(job.name, job.namespace, environment, "ray-job"), job), job)
        return {"apiVersion": API_VERSION, "kind": "RayJob", "metadata": meta, "spec": spec}
    if job.queue:  # each scheduled RayJob is queued on its own
        spec["metadata"] = _with_kueue({}, job)
    cron: dict[str, Any] = {"schedule": job.schedule, "jobTemplate": spec}
    if job.time_zone:
        cron["timeZone"] = job.time_zone
    return {
        "apiVersion": API_VERSION,
        "kind": "RayCronJob",
        "metadata": metadata(job.name, job.namespace, environment, "ray-cron-job"),
        "spec": cron,
    }


# --- RayService -------------------------------------------------------------------------------


def _serve_app(app: ServeApp) -> dict[str, Any]:
    out: dict[str, Any] = {"name": app.name, "route_prefix": app.route_prefix, "import_path": app.import_path}
    if app.env_vars:
        out["runtime_env"] = {"env_vars": dict(sorted(app.env_vars.items()))}
    if app.args:
        out["args"] = app.args
    deployments = []
    for d in app.deployments:
        dep: dict[str, Any] = {"name": d.name}
        if d.num_replicas is not None:
            dep["num_replicas"] = d.num_replicas
        if d.max_ongoing_requests is not None:
            dep["max_ongoing_requests"] = d.max_ongoing_requests
        if d.autoscaling is not None:
            dep["autoscaling_config"] = d.autoscaling.model_dump(exclude_none=True)
        actor = {k: v for k, v in (("num_cpus", d.num_cpus), ("num_gpus", d.num_gpus)) if v is not None}
        if actor:
            dep["ray_actor_options"] = actor
        deployments.append(dep)
    if deployments:
        out["deployments"] = deployments
    return out


def _llm_app(app: LlmApp, drain_seconds: int | None) -> dict[str, Any]:
    configs = []
    for m in app.models:
        loading: dict[str, Any] = {"model_id": m.model_id}
        if m.model_source:
            loading["model_source"] = m.model_source
        config: dict[str, Any] = {
            "model_loading_config": loading,
            "engine_kwargs": {
                "tensor_parallel_size": m.tensor_parallel_size,
                "pipeline_parallel_size": m.pipeline_parallel_size,
                **m.engine_kwargs,
            },
            "deployment_config": {
                "autoscaling_config": {"min_replicas": m.min_replicas, "max_replicas": m.max_replicas}
            },
        }
        if drain_seconds is not None:
            # Ray Serve stops a replica after 20 s by default: let generations finish within the pod's grace.
            config["deployment_config"]["graceful_shutdown_timeout_s"] = drain_seconds
        if m.accelerator_type:
            config["accelerator_type"] = m.accelerator_type
        configs.append(config)
    return {
        "name": app.name,
        "route_prefix": app.route_prefix,
        "import_path": LLM_IMPORT_PATH,
        "args": {"llm_configs": configs},
    }


def grace_period(service: RayServiceSpec) -> int | None:
    if service.termination_grace_period_seconds is not None:
        return service.termination_grace_period_seconds
    return LLM_GRACE_PERIOD_SECONDS if service.is_llm else None


def serve_config(service: RayServiceSpec) -> str:
    """``serveConfigV2``: Ray Serve's multi-application config as YAML."""
    grace = grace_period(service)
    drain = max(0, grace - SHUTDOWN_MARGIN_SECONDS) if grace is not None else None
    apps = [_llm_app(a, drain) if isinstance(a, LlmApp) else _serve_app(a) for a in service.applications]
    return yaml.safe_dump({"applications": apps}, sort_keys=False)


def _service_metadata(service: RayServiceSpec, environment: str, strategy: str) -> dict[str, Any]:
    meta = metadata(service.name, service.namespace, environment, "ray-service")
    if strategy == "NewClusterWithIncrementalUpgrade" and service.upgrade.exposure == "external":
        meta["annotations"] = {SERVING_AUTH_ANNOTATION: str(service.upgrade.authenticated_by)}
    return _with_kueue(_with_gcs_annotations(meta, service), service)


def ray_service(
    service: RayServiceSpec,
    pools: Pools,
    environment: str,
    operator_namespace: str,
    stores: GcsStores | None = None,
) -> dict[str, Any]:
    strategy = upgrade_strategy(service, pools)
    options = WorkerOptions(
        termination_grace_period_seconds=grace_period(service),
        serve_port=True,
        accelerator_groups_from_zero=strategy == "NewClusterWithIncrementalUpgrade",
    )
    upgrade: dict[str, Any] = {"type": strategy}
    if strategy == "NewClusterWithIncrementalUpgrade":
        u = service.upgrade
        upgrade["clusterUpgradeOptions"] = {
            "gatewayClassName": u.gateway_class_name,
            "stepSizePercent": u.step_size_percent,
            "intervalSeconds": u.interval_seconds,
            "maxSurgePercent": u.max_surge_percent,
        }
    return {
        "apiVersion": API_VERSION,
        "kind": "RayService",
        "metadata": _service_metadata(service, environment, strategy),
        "spec": {
            "serveConfigV2": serve_config(service),
            "upgradeStrategy": upgrade,
            "excludeHeadPodFromServeSvc": True,  # serve traffic only through workers
            "rayClusterConfig": cluster_body(service, pools, options, operator_namespace, stores),
        },
    }
