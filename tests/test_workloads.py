"""Ray workloads from the spec: pools, profiles, RayJob/RayCronJob, RayService, capacity."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.manifests.capacity import capacity
from components.manifests.platform import build_manifests
from components.manifests.ray_objects import pod_groups
from components.spec import parse_platform
from policies.rules.base import RuleContext
from policies.rules.engine import evaluate
from policies.rules.serve_config_schema import serve_config_errors
from tests.conftest import REPO
from tools.schema import Validator
from tools.stackfile import read_stack_config

POOLS = {
    "cpu": {"type": "cpu"},
    "a100": {"type": "gpu", "gpusPerPod": 4, "product": "NVIDIA-A100-SXM4-80GB", "cuda": "cu128"},
    "l4": {"type": "gpu", "gpusPerPod": 1},
    "v6e": {"type": "tpu", "accelerator": "tpu-v6e-slice", "topology": "4x4", "chipsPerHost": 4},
    "v6e-single": {"type": "tpu", "accelerator": "tpu-v6e-slice", "topology": "2x2"},
}


PREREQUISITES = {"gatewayApi": True, "tpuWebhook": True}
GCS_STORAGE = {
    "redis": {"type": "redis", "namespace": "serving", "password": {"secret": {"name": "redis-password"}}},
    "managed": {"type": "external", "address": "redis.example.com:6379", "passwordSecret": {"name": "r", "key": "p"}},
}
"""A cluster with what incremental upgrades and multi-host TPU slices need (tests of their absence
drop it)."""


def declared(workloads: dict[str, Any]) -> dict[str, Any]:
    """Prerequisites declaring every Secret, PVC and NFS export the given workloads name (the
    reference checks themselves are tested in tests/test_prerequisites.py)."""
    items = [w for key in ("rayClusters", "rayJobs", "rayServices") for w in workloads.get(key, [])]
    namespaces = {w["namespace"] for w in items} | {"serving"}
    secrets = {(ns, name) for ns in namespaces for name in ("redis-password", "r")}
    claims, exports = set(), set()
    for w in items:
        secrets |= {(w["namespace"], name) for name in w.get("secretEnv", [])}
        tls = (w.get("head") or {}).get("ingress", {}).get("tlsSecret")
        if tls:
            secrets.add((w["namespace"], tls))
        for volume in w.get("volumes", []):
            if "pvc" in volume:
                claims.add((w["namespace"], volume["pvc"]["claimName"]))
            if "nfs" in volume:
                exports.add((volume["nfs"]["server"], volume["nfs"]["path"]))
    queues = sorted({(w["namespace"], w["queue"]) for w in items if w.get("queue")})
    return {
        **PREREQUISITES,
        "kueue": bool(queues),
        "localQueues": [{"namespace": ns, "name": name} for ns, name in queues],
        "secrets": [{"namespace": ns, "name": name} for ns, name in sorted(secrets)],
        "persistentVolumeClaims": [{"namespace": ns, "name": name} for ns, name in sorted(claims)],
        "nfsExports": [{"server": server, "path": path} for server, path in sorted(exports)],
    }


def platform(environment: str = "prod", **workloads: Any) -> dict[str, Any]:
    return {
        "environment": environment,
        "prerequisites": declared(workloads),
        "gcsStorage": GCS_STORAGE,
        "workloads": {"pools": POOLS, **workloads},
    }


def build(data: dict[str, Any]) -> list[dict[str, Any]]:
    return build_manifests(parse_platform(data, "s.yaml"), "s.yaml").workloads


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build(data)
    return info.value.lines


def llm_service(**overrides: Any) -> dict[str, Any]:
    service: dict[str, Any] = {
        "name": "chat",
        "namespace": "serving",
        "workerGroups": [
            {"name": "gpu", "pool": "a100", "maxReplicas": 4, "resources": {"cpu": "16", "memory": "128Gi"}}
        ],
        "applications": [
            {
                "type": "llm",
                "name": "chat",
                "models": [
                    {
                        "modelId": "qwen",
                        "modelSource": "Qwen/Qwen2.5-7B-Instruct",
                        "tensorParallelSize": 4,
                        "pipelineParallelSize": 2,
                        "minReplicas": 2,
                        "maxReplicas": 2,
                    }
                ],
            }
        ],
        "upgrade": {"gatewayClassName": "istio"},
        "gcsFaultTolerance": {"backend": "redis", "storage": "redis"},
    }
    service.update(overrides)
    return service


def job(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "train",
        "namespace": "research",
        "entrypoint": "python train.py",
        "workerGroups": [{"name": "gpu", "pool": "l4", "maxReplicas": 4}],
    }
    spec.update(overrides)
    return spec


def groups(obj: dict[str, Any]) -> dict[str, Any]:
    return {g.name: g for g in pod_groups(obj)}


# --- pools ------------------------------------------------------------------------------------


def test_a_gpu_group_gets_matching_resources_params_selector_tolerations_and_cuda_image() -> None:
    (service,) = build(platform(rayServices=[llm_service()]))
    head, gpu = groups(service)["head"], groups(service)["gpu"]
    container = gpu.ray_container
    assert (
        container["resources"]["limits"]["nvidia.com/gpu"]
        == "4"
        == container["resources"]["requests"]["nvidia.com/gpu"]
    )
    assert gpu.ray_start_params == {"num-gpus": "4", "resources": "'{\"accelerator_type:A100\": 1}'"}
    assert gpu.pod_spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    assert gpu.pod_spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert container["image"] == "rayproject/ray-llm:2.60.0-py311-cu128"  # Ray Serve LLM needs vLLM
    assert head.ray_container["image"] == "rayproject/ray-llm:2.60.0-py311-cu128"  # one image for the cluster
    assert head.ray_start_params == {"num-cpus": "0", "num-gpus": "0", "dashboard-host": "0.0.0.0"}
    assert "nvidia.com/gpu" not in head.ray_container["resources"]["limits"]


def test_a_multi_host_tpu_group_gets_hosts_chips_and_gke_selectors() -> None:
    (obj,) = build(platform(rayJobs=[job(workerGroups=[{"name": "tpu", "pool": "v6e", "maxReplicas": 1}])]))
    tpu = groups(obj)["tpu"]
    assert tpu.group["numOfHosts"] == 4
    assert tpu.ray_container["resources"]["limits"]["google.com/tpu"] == "4"
    assert tpu.pod_spec["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }
    assert "num-gpus" not in groups(obj)["head"].ray_start_params


def test_a_single_host_tpu_pool_is_one_host() -> None:
    (obj,) = build(platform(rayJobs=[job(workerGroups=[{"name": "tpu", "pool": "v6e-single", "maxReplicas": 2}])]))
    assert groups(obj)["tpu"].group["numOfHosts"] == 1
    assert groups(obj)["tpu"].ray_container["resources"]["limits"]["google.com/tpu"] == "4"


def test_tpu_topology_must_split_into_whole_hosts() -> None:
    data = platform(rayJobs=[job()])
    data["workloads"]["pools"] = {
        **POOLS,
        "odd": {"type": "tpu", "accelerator": "x", "topology": "2x3", "chipsPerHost": 4},
    }
    assert errors(data) == [
        "s.yaml: platform.workloads.pools.odd.topology: 2x3 has 6 chips, not a multiple of chipsPerHost 4"
    ]


def test_a_worker_group_naming_an_unknown_pool_is_a_config_error() -> None:
    assert errors(platform(rayJobs=[job(workerGroups=[{"name": "g", "pool": "h100", "maxReplicas": 1}])])) == [
        "s.yaml: platform.workloads.rayJobs[0].workerGroups[0].pool: unknown pool 'h100' "
        "(defined: a100, cpu, l4, v6e, v6e-single)"
    ]


def test_a_misspelled_pool_key_is_reported_against_the_right_pool_type() -> None:
    data = platform()
    data["workloads"]["pools"] = {"g": {"type": "gpu", "gpuPerPod": 2}}
    (line,) = errors(data)
    assert line.startswith("s.yaml: platform.workloads.pools.g.gpuPerPod: unknown key; did you mean 'gpusPerPod'?")


# --- profiles ---------------------------------------------------------------------------------


def test_profiles_set_floors_and_autoscaler_behaviour() -> None:
    cluster = {"name": "c", "namespace": "n", "workerGroups": [{"name": "cpu", "maxReplicas": 8}]}
    served = {**cluster, "name": "s", "applications": [{"name": "a", "importPath": "app:deployment"}]}
    training, serving = build(platform(rayClusters=[cluster], rayServices=[served]))
    assert training["spec"]["autoscalerOptions"] | {"resources": None} == {
        "version": "v2",
        "idleTimeoutSeconds": 300,
        "upscalingMode": "Conservative",
        "resources": None,
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    assert training["spec"]["workerGroupSpecs"][0]["minReplicas"] == 0
    options = serving["spec"]["rayClusterConfig"]["autoscalerOptions"]
    assert (options["idleTimeoutSeconds"], options["upscalingMode"]) == (60, "Aggressive")
    assert serving["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["minReplicas"] == 2


def test_a_workload_overrides_its_profile() -> None:
    cluster = {
        "name": "c",
        "namespace": "n",
        "profile": "serving",
        "autoscaler": {"idleTimeoutSeconds": 90},
        "workerGroups": [{"name": "cpu", "maxReplicas": 8, "minReplicas": 3, "idleTimeoutSeconds": 30}],
    }
    (obj,) = build(platform(rayClusters=[cluster]))
    assert (
        obj["spec"]["autoscalerOptions"]["idleTimeoutSeconds"],
        obj["spec"]["autoscalerOptions"]["upscalingMode"],
    ) == (90, "Aggressive")
    group = obj["spec"]["workerGroupSpecs"][0]
    assert (group["minReplicas"], group["replicas"], group["idleTimeoutSeconds"]) == (3, 3, 30)


# --- RayJob / RayCronJob ----------------------------------------------------------------------


def test_a_job_cleans_up_with_the_seeds_deletion_rules_and_nothing_else() -> None:
    (obj,) = build(platform(rayJobs=[job()]))
    spec = obj["spec"]
    assert spec["deletionStrategy"]["deletionRules"] == [
        {"policy": "DeleteWorkers", "condition": {"jobStatus": "FAILED", "ttlSeconds": 30}},
        {"policy": "DeleteCluster", "condition": {"jobStatus": "FAILED", "ttlSeconds": 3600}},
        {"policy": "DeleteCluster", "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 60}},
        {"policy": "DeleteCluster", "condition": {"jobDeploymentStatus": "Failed", "ttlSeconds": 3600}},
    ]
    assert "shutdownAfterJobFinishes" not in spec and "ttlSecondsAfterFinished" not in spec
    assert (spec["submissionMode"], spec["backoffLimit"]) == ("K8sJobMode", 0)
    # A job's cluster runs at a fixed size: no autoscaler (which KubeRay forbids with DeleteWorkers).
    cluster = spec["rayClusterSpec"]
    assert cluster["enableInTreeAutoscaling"] is False and "autoscalerOptions" not in cluster
    assert cluster["workerGroupSpecs"][0]["replicas"] == 4


def test_an_autoscaled_job_drops_delete_workers_and_refuses_it_when_asked() -> None:
    (obj,) = build(platform(rayJobs=[job(autoscaler={"enabled": True})]))
    rules = obj["spec"]["deletionStrategy"]["deletionRules"]
    assert [r["policy"] for r in rules] == ["DeleteCluster", "DeleteCluster", "DeleteCluster"]
    assert obj["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] is True
    assert obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] == 0  # grows from the floor
    explicit = [{"policy": "DeleteWorkers", "jobStatus": "FAILED", "ttlSeconds": 30}]
    (line,) = errors(platform(rayJobs=[job(autoscaler={"enabled": True}, deletionRules=explicit)]))
    assert line.startswith("s.yaml: platform.workloads.rayJobs[0].deletionRules: KubeRay refuses DeleteWorkers")


def test_a_queued_job_shuts_down_with_a_ttl_instead() -> None:
    (obj,) = build(platform(rayJobs=[job(queue="research", ttlSecondsAfterFinished=120, submissionMode="SidecarMode")]))
    assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research"
    spec = obj["spec"]
    assert (spec["shutdownAfterJobFinishes"], spec["ttlSecondsAfterFinished"]) == (True, 120)
    assert "deletionStrategy" not in spec and spec["submissionMode"] == "SidecarMode"


def test_a_queued_job_cannot_use_deletion_rules() -> None:
    (line,) = errors(platform(rayJobs=[job(queue="q", cleanup="deletionRules")]))
    assert line.startswith(
        "s.yaml: platform.workloads.rayJobs[0].cleanup: a Kueue-queued RayJob needs shutdownAfterJobFinishes"
    )


def test_the_runtime_env_carries_env_vars_and_working_dir_but_cannot_install() -> None:
    (obj,) = build(
        platform(
            rayJobs=[
                job(
                    runtimeEnv={"workingDir": "s3://b/code.zip", "envVars": {"B": "2", "A": "1"}},
                    activeDeadlineSeconds=600,
                )
            ]
        )
    )
    assert yaml.safe_load(obj["spec"]["runtimeEnvYAML"]) == {
        "working_dir": "s3://b/code.zip",
        "env_vars": {"A": "1", "B": "2"},
    }
    assert obj["spec"]["activeDeadlineSeconds"] == 600
    (line,) = errors(platform(rayJobs=[job(runtimeEnv={"pip": ["torch"]})]))
    assert line.startswith("s.yaml: platform.workloads.rayJobs[0].runtimeEnv.pip: unknown key")


def test_a_scheduled_job_becomes_a_raycronjob_and_switches_its_gate_on() -> None:
    data = platform(rayJobs=[job(schedule="0 3 * * *", timeZone="Etc/UTC", queue="nightly")])
    manifests = build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    (obj,) = manifests.workloads
    assert obj["kind"] == "RayCronJob"
    assert (obj["spec"]["schedule"], obj["spec"]["timeZone"]) == ("0 3 * * *", "Etc/UTC")
    template = obj["spec"]["jobTemplate"]
    assert template["entrypoint"] == "python train.py" and template["shutdownAfterJobFinishes"] is True
    assert template["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "nightly"}
    assert {g["name"]: g["enabled"] for g in manifests.operator_values["featureGates"]}["RayCronJob"] is True


def test_a_bad_schedule_is_a_config_error() -> None:
    assert errors(platform(rayJobs=[job(schedule="every night")])) == [
        "s.yaml: platform.workloads.rayJobs[0].schedule: "
        "expected a cron expression such as '0 3 * * *' (got 'every night')"
    ]


# --- RayService -------------------------------------------------------------------------------


def test_an_accelerator_service_upgrades_incrementally_through_its_gateway() -> None:
    (obj,) = build(platform(rayServices=[llm_service()]))
    assert obj["spec"]["upgradeStrategy"] == {
        "type": "NewClusterWithIncrementalUpgrade",
        "clusterUpgradeOptions": {
            "gatewayClassName": "istio",
            "stepSizePercent": 20,
            "intervalSeconds": 60,
            "maxSurgePercent": 20,
        },
    }
    assert obj["spec"]["excludeHeadPodFromServeSvc"] is True
    assert obj["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] is True


def test_an_accelerator_service_without_a_gateway_class_is_a_config_error() -> None:
    service = llm_service()
    service.pop("upgrade")
    (line,) = errors(platform(rayServices=[service]))
    assert line.startswith("s.yaml: platform.workloads.rayServices[0].upgrade.gatewayClassName: required")


def test_a_cpu_service_upgrades_blue_green() -> None:
    service = {
        "name": "s",
        "namespace": "n",
        "workerGroups": [{"name": "cpu", "maxReplicas": 4}],
        "applications": [{"name": "a", "importPath": "fruit.app:deployment_graph"}],
    }
    (obj,) = build(platform(rayServices=[service]))
    assert obj["spec"]["upgradeStrategy"] == {"type": "NewCluster"}
    assert (
        "terminationGracePeriodSeconds"
        not in obj["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["template"]["spec"]
    )


def test_llm_workers_drain_for_600_seconds_and_keep_kuberays_serve_aware_readiness() -> None:
    """No readiness probe in the template: KubeRay injects one that checks the raylet and the Serve
    proxy, which keeps pipeline-parallel pods without a proxy out of the serve endpoints."""
    (obj,) = build(platform(rayServices=[llm_service()]))
    pod = obj["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 600
    assert "readinessProbe" not in pod["containers"][0]


def test_gpu_groups_advertise_their_accelerator_type() -> None:
    (obj,) = build(platform(rayServices=[llm_service()]))
    group = obj["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]
    assert group["rayStartParams"]["resources"] == "'{\"accelerator_type:A100\": 1}'"


@pytest.mark.parametrize(
    ("product", "expected"),
    [
        ("NVIDIA-A100-SXM4-80GB", "A100"),
        ("NVIDIA-H100-80GB-HBM3", "H100"),
        ("NVIDIA-L4", "L4"),
        ("Tesla-T4", "T4"),
        ("nvidia-tesla-a100", "A100"),
        ("nvidia-l4", "L4"),
        (None, None),
    ],
)
def test_the_ray_accelerator_type_is_read_from_the_gpu_product(product: str | None, expected: str | None) -> None:
    from components.spec import GpuPool

    platform = "gke" if product and product.startswith("nvidia-") else "generic"
    assert GpuPool(type="gpu", product=product, platform=platform).ray_accelerator_type == expected
    assert (
        GpuPool(type="gpu", product=product, platform=platform, acceleratorType="A10G").ray_accelerator_type == "A10G"
    )


def test_a_model_asking_for_an_accelerator_no_pool_has_is_a_config_error() -> None:
    service = llm_service()
    service["applications"][0]["models"][0]["acceleratorType"] = "H100"
    lines = errors(platform(rayServices=[service]))
    assert any(
        ".models[0].acceleratorType: 'H100' is not the accelerator type of any GPU pool" in line for line in lines
    ), lines


def test_rays_autoscaler_sees_the_accelerator_type_of_the_prod_llm_service() -> None:
    """Ray 2.60.0's own KubeRay autoscaling config builder, run on the rendered prod RayService."""
    from ray.autoscaler._private.kuberay.autoscaling_config import _derive_autoscaling_config_from_ray_cr

    from tools.preview import run_preview

    (service,) = [m for m in run_preview("prod").manifests if m["kind"] == "RayService"]
    cluster = {"metadata": service["metadata"], "spec": service["spec"]["rayClusterConfig"]}
    config = _derive_autoscaling_config_from_ray_cr(cluster)
    gpu = config["available_node_types"]["gpu"]["resources"]
    assert gpu["accelerator_type:A100"] == 1 and gpu["GPU"] == 4


def test_the_llm_serve_config_is_ray_serve_llm_with_the_parallelism() -> None:
    (obj,) = build(platform(rayServices=[llm_service()]))
    (app,) = yaml.safe_load(obj["spec"]["serveConfigV2"])["applications"]
    assert app["import_path"] == "ray.serve.llm:build_openai_app"
    (config,) = app["args"]["llm_configs"]
    assert config["model_loading_config"] == {"model_id": "qwen", "model_source": "Qwen/Qwen2.5-7B-Instruct"}
    assert config["engine_kwargs"] == {"tensor_parallel_size": 4, "pipeline_parallel_size": 2}
    assert serve_config_errors(obj["spec"]["serveConfigV2"]) == ()


def test_tensor_parallelism_beyond_one_pod_and_too_few_gpus_are_config_errors() -> None:
    service = llm_service()
    service["applications"][0]["models"][0].update(tensorParallelSize=8, pipelineParallelSize=1)
    (line,) = errors(platform(rayServices=[service]))
    assert "tensorParallelSize: 8 exceeds the 4 GPUs of one pod" in line
    service = llm_service()
    service["applications"][0]["models"][0]["minReplicas"] = 3
    service["applications"][0]["models"][0]["maxReplicas"] = 3
    (line,) = errors(platform(rayServices=[service]))
    assert "need 24 GPUs" in line and "reach only 16 at maxReplicas" in line


def test_serve_apps_with_deployments_and_env_vars() -> None:
    service = {
        "name": "s",
        "namespace": "n",
        "workerGroups": [{"name": "cpu", "maxReplicas": 4}],
        "applications": [
            {
                "name": "fruit",
                "importPath": "fruit.deployment_graph",
                "routePrefix": "/fruit",
                "args": {"price": 3},
                "envVars": {"MODE": "prod"},
                "deployments": [
                    {"name": "MangoStand", "numReplicas": 2, "numCpus": 0.5},
                    {"name": "Router", "autoscaling": {"minReplicas": 2, "maxReplicas": 8, "targetOngoingRequests": 4}},
                ],
            },
            {"type": "serve", "name": "math", "importPath": "conditional_dag.serve_dag", "routePrefix": "/calc"},
        ],
    }
    (obj,) = build(platform(rayServices=[service]))
    text = obj["spec"]["serveConfigV2"]
    apps = yaml.safe_load(text)["applications"]
    assert apps[0]["deployments"] == [
        {"name": "MangoStand", "num_replicas": 2, "ray_actor_options": {"num_cpus": 0.5}},
        {
            "name": "Router",
            "autoscaling_config": {"min_replicas": 2, "max_replicas": 8, "target_ongoing_requests": 4.0},
        },
    ]
    assert apps[0]["runtime_env"] == {"env_vars": {"MODE": "prod"}} and apps[1]["route_prefix"] == "/calc"
    assert serve_config_errors(text) == ()


def test_duplicate_route_prefixes_are_a_config_error() -> None:
    service = llm_service()
    service["applications"].append({"name": "other", "importPath": "a.b"})
    (line,) = errors(platform(rayServices=[service]))
    assert line == "s.yaml: platform.workloads.rayServices[0].applications: routePrefixs must be unique (repeated: /)"


# --- volumes, credentials, ingress --------------------------------------------------------------


def test_shared_volumes_and_secret_env_reach_every_ray_container_and_ingress_has_tls() -> None:
    cluster = {
        "name": "c",
        "namespace": "n",
        "head": {"ingress": {"host": "ray.example.com", "tlsSecret": "ray-tls"}},
        "workerGroups": [{"name": "cpu", "maxReplicas": 2}, {"name": "gpu", "pool": "l4", "maxReplicas": 2}],
        "volumes": [
            {
                "name": "data",
                "mountPath": "/data",
                "nfs": {"server": "nfs.local", "path": "/exports/data", "readOnly": True},
            },
            {"name": "ckpt", "mountPath": "/ckpt", "pvc": {"claimName": "ckpt", "readWriteMany": True}},
        ],
        "secretEnv": ["s3-credentials"],
    }
    (obj,) = build(platform(rayClusters=[cluster]))
    for group in pod_groups(obj):
        container = group.ray_container
        assert container["envFrom"] == [{"secretRef": {"name": "s3-credentials"}}]
        assert [m["mountPath"] for m in container["volumeMounts"]] == ["/data", "/ckpt"]
        # The NFS export through the claim bound to the platform's PersistentVolume for it.
        assert group.pod_spec["volumes"][0]["persistentVolumeClaim"] == {"claimName": "c-data", "readOnly": True}
        # Writable: no readOnly at all (a false would be dropped by Go's omitempty in any controller's rewrite).
        assert group.pod_spec["volumes"][1]["persistentVolumeClaim"] == {"claimName": "ckpt"}
        assert "readOnly" not in container["volumeMounts"][1]
    head = obj["spec"]["headGroupSpec"]
    assert head["enableIngress"] is True
    assert head["ingressOptions"] == {
        "host": "ray.example.com",
        "path": "/",
        "pathType": "Prefix",
        "tls": [{"hosts": ["ray.example.com"], "secretName": "ray-tls"}],
    }


def test_a_volume_needs_exactly_one_source() -> None:
    cluster = {
        "name": "c",
        "namespace": "n",
        "workerGroups": [{"name": "cpu", "maxReplicas": 2}],
        "volumes": [{"name": "v", "mountPath": "/v"}],
    }
    assert errors(platform(rayClusters=[cluster])) == [
        "s.yaml: platform.workloads.rayClusters[0].volumes[0].nfs: set exactly one of nfs or pvc"
    ]


# --- capacity ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("strategy", "peak"), [("NewClusterWithIncrementalUpgrade", 6), ("NewCluster", 10)])
def test_the_seeds_worked_example_a_5_gpu_service_in_20_percent_steps(strategy: str, peak: int) -> None:
    service = llm_service(
        workerGroups=[{"name": "gpu", "pool": "l4", "minReplicas": 5, "maxReplicas": 5}],
        upgrade={"strategy": strategy, "gatewayClassName": "istio", "maxSurgePercent": 20},
    )
    service["applications"][0]["models"][0].update(
        tensorParallelSize=1, pipelineParallelSize=1, minReplicas=5, maxReplicas=5
    )
    (obj,) = build(platform(rayServices=[service]))
    plan = capacity(obj)
    assert plan.steady.gpu == 5
    assert plan.upgrade_peak is not None and plan.upgrade_peak.gpu == peak


def test_an_incremental_step_is_rounded_up_to_whole_model_replicas() -> None:
    """TP4 x PP2: a model replica spans 2 pods of 4 GPUs, so one 20% step of 4 pods is 2 pods, not 1."""
    service = llm_service(workerGroups=[{"name": "gpu", "pool": "a100", "minReplicas": 4, "maxReplicas": 6}])
    service["applications"][0]["models"][0].update(minReplicas=2, maxReplicas=3)
    (obj,) = build(platform(rayServices=[service]))
    incremental, blue_green = capacity(obj), capacity(obj, "NewCluster")
    assert incremental.steady.gpu == 16 and incremental.upgrade_peak is not None
    assert incremental.upgrade_peak.gpu == 24
    assert blue_green.upgrade_peak is not None and blue_green.upgrade_peak.gpu == 32
    # The new cluster's head (2 CPU + 0.5 autoscaler) is part of the incremental peak, then 2 pods x 4 CPU.
    assert incremental.upgrade_peak.cpu == incremental.steady.cpu + 2.5 + 2 * 4


def test_capacity_counts_hosts_replicas_and_the_autoscaler_sidecar() -> None:
    group = {"name": "tpu", "pool": "v6e", "minReplicas": 1, "maxReplicas": 2}
    group["resources"] = {"cpu": "10", "memory": "100Gi"}
    head = {"resources": {"cpu": "2", "memory": "8Gi"}}
    autoscaled, fixed = build(
        platform(
            rayJobs=[
                job(workerGroups=[group], head=head, autoscaler={"enabled": True}),
                job(name="fixed", workerGroups=[group], head=head),
            ]
        )
    )
    plan = capacity(autoscaled)
    assert (plan.steady.tpu, plan.scaled_out.tpu) == (16, 32)
    assert plan.steady.cpu == 2 + 0.5 + 4 * 10  # head + autoscaler sidecar + 4 hosts x 10
    assert plan.upgrade_peak is None
    plan = capacity(fixed)  # no autoscaler: the job runs at maxReplicas from the start
    assert (plan.steady.tpu, plan.scaled_out.tpu, plan.steady.cpu) == (32, 32, 2 + 8 * 10)


# --- everything the stacks and a kitchen sink emit is valid and clean ---------------------------


def stack_workloads(stack: str) -> list[dict[str, Any]]:
    config, _ = read_stack_config(REPO / f"stacks/Pulumi.{stack}.yaml", stack)
    return build_manifests(parse_platform(config["kuberay-platform:platform"], stack), stack).workloads


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_every_generated_serve_config_parses_with_ray_serve(stack: str) -> None:
    for obj in stack_workloads(stack):
        if obj["kind"] == "RayService":
            assert serve_config_errors(obj["spec"]["serveConfigV2"]) == ()


def test_a_kitchen_sink_platform_is_schema_valid_and_policy_clean() -> None:
    manifests = build_manifests(
        parse_platform(
            platform(
                rayClusters=[
                    {
                        "name": "c",
                        "namespace": "n",
                        "workerGroups": [
                            {"name": "cpu", "maxReplicas": 2},
                            {"name": "gpu", "pool": "a100", "maxReplicas": 2},
                        ],
                    }
                ],
                rayJobs=[
                    job(),
                    job(name="cron", schedule="@daily"),
                    job(name="tpu", workerGroups=[{"name": "tpu", "pool": "v6e", "maxReplicas": 1}]),
                ],
                rayServices=[llm_service()],
            ),
            "s.yaml",
        ),
        "s.yaml",
    )
    objects = manifests.workloads + manifests.gateways
    validator = Validator("1.33")
    for obj in objects:
        assert validator.validate(obj) == [], obj["metadata"]["name"]
    gates = {"RayCronJob=true"}
    operator = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kuberay-operator"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "op", "args": [f"--feature-gates={','.join(gates)}"]}]}}
        },
    }
    assert evaluate([*objects, operator], RuleContext("prod")) == []


def test_serve_drains_llm_replicas_within_the_pod_grace_period() -> None:
    (obj,) = build(platform(rayServices=[llm_service()]))
    (config,) = yaml.safe_load(obj["spec"]["serveConfigV2"])["applications"][0]["args"]["llm_configs"]
    assert config["deployment_config"]["graceful_shutdown_timeout_s"] == 570  # 600 s pod grace minus a margin
    assert config["deployment_config"]["autoscaling_config"] == {"min_replicas": 2, "max_replicas": 2}


def test_llm_and_upgrade_settings_are_validated() -> None:
    service = llm_service()
    service["applications"][0]["models"][0].update(minReplicas=3, maxReplicas=1)
    (line,) = errors(platform(rayServices=[service]))
    assert line == (
        "s.yaml: platform.workloads.rayServices[0].applications[0].models[0].maxReplicas: "
        "must be >= minReplicas (got 1 < 3)"
    )
    service = llm_service(upgrade={"gatewayClassName": "istio", "stepSizePercent": 50, "maxSurgePercent": 20})
    (line,) = errors(platform(rayServices=[service]))
    assert line.startswith(
        "s.yaml: platform.workloads.rayServices[0].upgrade.stepSizePercent: must not exceed maxSurgePercent"
    )


def test_a_custom_image_tag_and_digest() -> None:
    digest = "sha256:" + "c" * 64
    (obj,) = build(
        platform(
            rayJobs=[
                job(image={"repository": "registry.example.com/ml/ray", "tag": "2.60.0-train-7", "digest": digest})
            ]
        )
    )
    for group in pod_groups(obj):
        assert group.ray_container["image"] == f"registry.example.com/ml/ray:2.60.0-train-7@{digest}"


@pytest.mark.parametrize(
    ("patch", "where"),
    [
        pytest.param({"env": {"HF_TOKEN": "hf_abc"}}, "rayJobs[0].env", id="cluster-env"),
        pytest.param(
            {"runtimeEnv": {"envVars": {"DB_PASSWORD": "x"}}}, "rayJobs[0].runtimeEnv.envVars", id="runtime-env"
        ),
    ],
)
def test_secret_looking_env_vars_are_refused_with_a_pointer_to_secret_env(patch: dict[str, Any], where: str) -> None:
    (line,) = errors(platform(rayJobs=[job(**patch)]))
    assert line.startswith(f"s.yaml: platform.workloads.{where}: ")
    assert "look(s) like a secret" in line and "secretEnv" in line
    assert "hf_abc" not in line and "'x'" not in line  # the value itself is never echoed


def test_a_service_keeps_gcs_state_per_cluster() -> None:
    (obj,) = build(platform(rayServices=[llm_service()]))
    assert "externalStorageNamespace" not in obj["spec"]["rayClusterConfig"]["gcsFaultToleranceOptions"]
    service = llm_service()
    service["gcsFaultTolerance"]["externalStorageNamespace"] = "chat"
    (line,) = errors(platform(rayServices=[service]))
    assert line.startswith(
        "s.yaml: platform.workloads.rayServices[0].gcsFaultTolerance: externalStorageNamespace must stay unset"
    )


def test_beta_gates_a_workload_needs_cannot_be_switched_off() -> None:
    data = platform(rayJobs=[job()], rayServices=[llm_service()])
    data["operator"] = {"featureGates": {"RayJobDeletionPolicy": False, "RayServiceIncrementalUpgrade": False}}
    lines = errors(data)
    assert len(lines) == 2
    assert "featureGates.RayJobDeletionPolicy: false, but RayJob/research/train uses deletionStrategy" in lines[0]
    assert "RayServiceIncrementalUpgrade: false, but RayService/serving/chat uses upgradeStrategy" in lines[1]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            {"acceleratorType": "A100-80GB"},
            "accelerator_type: 'A100-80GB' is not one of the",
            id="accelerator",
        ),
        pytest.param({"engineKwargs": {"tensor_parallel_size": "four"}}, "", id="engine-kwargs-free-form"),
    ],
)
def test_llm_configs_are_checked_with_ray_serve_llm(change: dict[str, Any], expected: str) -> None:
    service = llm_service()
    service["applications"][0]["models"][0].update(change)
    data = platform(rayServices=[service])
    if "acceleratorType" in change:  # the pool must advertise it, or the spec stops it first
        data["workloads"]["pools"] = {**POOLS, "a100": {**POOLS["a100"], "acceleratorType": change["acceleratorType"]}}
    (obj,) = build(data)
    problems = serve_config_errors(obj["spec"]["serveConfigV2"])
    if expected:
        assert any(expected in p and p.startswith("applications.0.args.llm_configs.0.") for p in problems), problems
    else:
        assert problems == ()  # vLLM engine arguments are vLLM's to judge at start-up


def test_ray_start_gets_the_accelerator_resource_as_the_shell_hands_it_over() -> None:
    from components.manifests.ray_start import ray_start_command

    (service,) = build(platform(rayServices=[llm_service()]))
    argv = ray_start_command(groups(service)["gpu"], head_address="head:6379")
    assert '--resources={"accelerator_type:A100": 1}' in argv  # KubeRay runs it through a shell
    assert "--num-gpus=4" in argv


# --- Network policies that leave the cluster working ----------------------------------------------


def _service_with_policy(policy: Any, **gcs: Any) -> dict[str, Any]:
    service = llm_service(networkPolicy=policy)
    if gcs:
        service["gcsFaultTolerance"] = gcs
    return service


def test_deny_all_ingress_lets_the_operator_and_named_clients_reach_a_service_head() -> None:
    spec = {"mode": "DenyAllIngress", "clientsFrom": ["apps"], "serveFrom": ["istio-system"], "metricsFrom": ["mon"]}
    (obj,) = build(platform(rayServices=[_service_with_policy(spec)]))
    policy = obj["spec"]["rayClusterConfig"]["networkPolicy"]
    assert policy["mode"] == "DenyAllIngress"
    assert "egressRules" not in policy["head"] and "egressRules" not in policy["worker"]  # KubeRay refuses them here
    operator, clients, metrics = policy["head"]["ingressRules"]
    assert operator["from"][0]["namespaceSelector"]["matchExpressions"][0]["values"] == ["kuberay-system"]
    assert [p["port"] for p in operator["ports"]] == [8265, 8000]
    assert [p["port"] for p in clients["ports"]] == [10001, 8265]
    assert [p["port"] for p in metrics["ports"]] == [8080, 44217, 44227]
    serve, worker_metrics = policy["worker"]["ingressRules"]
    assert serve["from"][0]["namespaceSelector"]["matchExpressions"][0]["values"] == ["istio-system"]
    assert [p["port"] for p in serve["ports"]] == [8000]
    assert [p["port"] for p in worker_metrics["ports"]] == [8080]
    from policies.rules.network_policy_incomplete import check

    assert list(check("", obj, None)) == []  # type: ignore[arg-type]


def test_deny_all_adds_dns_and_api_server_egress() -> None:
    policy = {
        "mode": "DenyAll",
        "serveFrom": ["istio-system"],
        "apiServerCidrs": ["10.0.0.1/32"],
        "egressCidrs": ["10.20.0.0/16"],
    }
    (obj,) = build(platform(rayServices=[_service_with_policy(policy)]))
    rendered = obj["spec"]["rayClusterConfig"]["networkPolicy"]
    head_egress, worker_egress = rendered["head"]["egressRules"], rendered["worker"]["egressRules"]
    assert head_egress[0]["ports"] == [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
    assert {"ipBlock": {"cidr": "10.0.0.1/32"}} in head_egress[1]["to"]
    assert all({"ipBlock": {"cidr": "10.0.0.1/32"}} not in r.get("to", []) for r in worker_egress)
    from policies.rules.network_policy_incomplete import check

    assert list(check("", obj, None)) == []  # type: ignore[arg-type]


def test_an_egress_mode_that_cannot_work_is_a_config_error() -> None:
    lines = errors(platform(rayServices=[_service_with_policy("DenyAllEgress")]))
    assert any(
        "networkPolicy.apiServerCidrs: required with mode DenyAllEgress and in-tree autoscaling" in x for x in lines
    )
    redis = {"backend": "redis", "storage": "managed"}
    policy = {"mode": "DenyAll", "serveFrom": ["istio-system"], "apiServerCidrs": ["10.0.0.1/32"]}
    lines = errors(platform(rayServices=[_service_with_policy(policy, **redis)]))
    assert any("networkPolicy.egressCidrs: the head must reach Redis" in x for x in lines), lines


def test_an_ingress_mode_on_a_service_needs_who_may_reach_serve() -> None:
    lines = errors(platform(rayServices=[_service_with_policy("DenyAllIngress")]))
    assert any("networkPolicy.serveFrom: required with mode DenyAllIngress on a RayService" in x for x in lines)


def test_the_network_policy_shorthand_is_the_mode() -> None:
    (obj,) = build(
        platform(
            rayClusters=[
                {
                    "name": "c",
                    "namespace": "ray",
                    "networkPolicy": "DenyAllIngress",
                    "workerGroups": [{"name": "cpu", "maxReplicas": 2}],
                }
            ]
        )
    )
    assert obj["spec"]["networkPolicy"] == {"mode": "DenyAllIngress"}  # a RayCluster: the operator never calls it


# --- Environment assumptions made explicit --------------------------------------------------------


def test_incremental_upgrades_need_gateway_api_declared() -> None:
    data = platform(rayServices=[llm_service()])
    data["prerequisites"]["gatewayApi"] = False
    (line,) = errors(data)
    assert "rayServices[0].upgrade: incremental upgrades route through Gateway API" in line
    assert "platform.prerequisites.gatewayApi: true" in line


def test_multi_host_tpu_slices_need_the_tpu_webhook_declared() -> None:
    data = platform(rayJobs=[job(workerGroups=[{"name": "tpu", "pool": "v6e", "maxReplicas": 1}])])
    data["prerequisites"]["tpuWebhook"] = False
    (line,) = errors(data)
    assert "workerGroups[0].pool: pool 'v6e' is a multi-host TPU slice (4 hosts): it needs the Ray TPU webhook" in line
    single = platform(rayJobs=[job(workerGroups=[{"name": "tpu", "pool": "v6e-single", "maxReplicas": 1}])])
    single["prerequisites"]["tpuWebhook"] = False
    assert build(single)  # one host: no cross-host coordinates needed


@pytest.mark.parametrize(
    ("pool", "label"),
    [
        ({"product": "NVIDIA-A100-SXM4-80GB"}, "nvidia.com/gpu.product"),
        ({"platform": "gke", "product": "nvidia-tesla-a100"}, "cloud.google.com/gke-accelerator"),
        ({"platform": "eks", "product": "a100"}, "karpenter.k8s.aws/instance-gpu-name"),
        ({"platform": "gke", "product": "x", "productLabel": "example.com/gpu"}, "example.com/gpu"),
    ],
)
def test_gpu_pools_pick_the_platforms_product_label(pool: dict[str, Any], label: str) -> None:
    pools = {**POOLS, "g": {"type": "gpu", **pool}}
    data = platform(rayJobs=[job(workerGroups=[{"name": "gpu", "pool": "g", "maxReplicas": 1}])])
    data["workloads"]["pools"] = pools
    (obj,) = build(data)
    selector = groups(obj)["gpu"].pod_spec["nodeSelector"]
    assert selector == {label: pool["product"]}


def test_a_product_outside_the_platforms_vocabulary_is_a_config_error() -> None:
    data = platform()
    data["workloads"]["pools"] = {**POOLS, "g": {"type": "gpu", "platform": "gke", "product": "NVIDIA-A100-SXM4-80GB"}}
    lines = errors(data)
    assert any("is not a gke value of cloud.google.com/gke-accelerator (e.g. nvidia-tesla-a100)" in x for x in lines)


def test_a_shared_read_write_once_claim_is_a_config_error() -> None:
    claim = {"name": "ckpt", "mountPath": "/ckpt", "pvc": {"claimName": "ckpt"}}
    lines = errors(platform(rayJobs=[job(volumes=[claim])]))
    assert any("volumes[0].pvc.readWriteMany: claim 'ckpt' is mounted on the head and every worker" in x for x in lines)
    claim["pvc"]["readWriteMany"] = True
    assert build(platform(rayJobs=[job(volumes=[claim])]))


def test_code_in_the_image_goes_on_pythonpath_not_into_a_local_working_dir() -> None:
    lines = errors(platform(rayJobs=[job(runtimeEnv={"workingDir": "/app"})]))
    assert any("runtimeEnv.workingDir: expected a remote URI" in x and "use codeDir" in x for x in lines), lines
    (obj,) = build(platform(rayJobs=[job(runtimeEnv={"codeDir": "/app", "envVars": {"A": "1"}})]))
    env = yaml.safe_load(obj["spec"]["runtimeEnvYAML"])
    assert env == {"env_vars": {"A": "1", "PYTHONPATH": "/app"}}
    (obj,) = build(platform(rayJobs=[job(runtimeEnv={"workingDir": "s3://bucket/code.zip"})]))
    assert yaml.safe_load(obj["spec"]["runtimeEnvYAML"]) == {"working_dir": "s3://bucket/code.zip"}


# --- The serving Gateway stays internal -----------------------------------------------------------


def test_an_incremental_service_gets_an_internal_gateway_kuberay_will_keep() -> None:
    manifests = build_manifests(parse_platform(platform(rayServices=[llm_service()]), "s.yaml"), "s.yaml")
    (gateway,) = manifests.gateways
    assert gateway["metadata"]["name"] == "chat-gateway" and gateway["metadata"]["namespace"] == "serving"
    assert gateway["metadata"]["annotations"] == {"networking.istio.io/service-type": "ClusterIP"}
    # what KubeRay's IsGatewayEqual compares: the class and the one listener it would create
    assert gateway["spec"] == {
        "gatewayClassName": "istio",
        "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
    }


def test_an_external_gateway_needs_what_authenticates_in_front_of_serve() -> None:
    service = llm_service(upgrade={"gatewayClassName": "istio", "exposure": "external"})
    lines = errors(platform(rayServices=[service]))
    assert any("upgrade.authenticatedBy: required with exposure: external" in x for x in lines), lines
    service["upgrade"]["authenticatedBy"] = "oauth2-proxy"
    manifests = build_manifests(parse_platform(platform(rayServices=[service]), "s.yaml"), "s.yaml")
    assert manifests.gateways == []
    (obj,) = manifests.workloads
    assert obj["metadata"]["annotations"]["kuberay-platform.io/serving-auth"] == "oauth2-proxy"


def test_an_internal_gateway_of_another_class_needs_its_annotations() -> None:
    service = llm_service(upgrade={"gatewayClassName": "gke-l7-gxlb"})
    lines = errors(platform(rayServices=[service]))
    assert any(
        "upgrade.gatewayAnnotations: say how GatewayClass 'gke-l7-gxlb' keeps a Gateway internal" in x for x in lines
    )
