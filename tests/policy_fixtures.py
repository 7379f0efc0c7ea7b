"""Violating fixtures: each is a golden object with exactly one anti-pattern.

``CASES`` maps a rule name to (golden file, change, expected message fragment). The golden
objects in ``tests/data/policies/`` pass every rule in prod; each change breaks one rule only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data" / "policies"
GOLDEN = {
    name: yaml.safe_load((DATA / f"golden-{name}.yaml").read_text()) for name in ("raycluster", "rayservice", "rayjob")
}
GPU = {"nvidia.com/gpu": "1"}
Obj = dict[str, Any]


def golden(name: str) -> Obj:
    return copy.deepcopy(GOLDEN[name])


def cluster(obj: Obj) -> Obj:
    spec = obj["spec"]
    return spec.get("rayClusterConfig") or spec.get("rayClusterSpec") or spec


def head(obj: Obj) -> Obj:
    return cluster(obj)["headGroupSpec"]


def worker(obj: Obj, i: int = 0) -> Obj:
    return cluster(obj)["workerGroupSpecs"][i]


def container(group: Obj, i: int = 0) -> Obj:
    return group["template"]["spec"]["containers"][i]


def serve(obj: Obj, text: str) -> None:
    obj["spec"]["serveConfigV2"] = text


def _set(target: Callable[[Obj], Obj], **values: Any) -> Callable[[Obj], None]:
    return lambda obj: target(obj).update(values)


def _drop(target: Callable[[Obj], Obj], key: str) -> Callable[[Obj], None]:
    return lambda obj: target(obj).pop(key)


def _mixed_group(obj: Obj) -> None:
    """A GPU container and a TPU container in one worker group."""
    head(obj)["rayStartParams"]["num-gpus"] = "0"
    res = container(worker(obj))["resources"]
    for section in ("limits", "requests"):
        res[section]["nvidia.com/gpu"] = "1"
    tpu = copy.deepcopy(container(worker(obj)))
    tpu["name"] = "tpu"
    for section in ("limits", "requests"):
        tpu["resources"][section].pop("nvidia.com/gpu")
        tpu["resources"][section]["google.com/tpu"] = "4"
    worker(obj)["template"]["spec"]["containers"].append(tpu)


def _duplicate_group(obj: Obj) -> None:
    group = copy.deepcopy(worker(obj))
    cluster(obj)["workerGroupSpecs"].append(group)


def _worker_probe(obj: Obj) -> None:
    container(worker(obj))["readinessProbe"] = {"httpGet": {"path": "/api/gcs_healthz", "port": 8265}}


def _many_groups(obj: Obj) -> None:
    base = worker(obj)
    cluster(obj)["workerGroupSpecs"] = [dict(copy.deepcopy(base), groupName=f"g{i}") for i in range(18)]


def _rocksdb(obj: Obj) -> None:
    cluster(obj)["gcsFaultToleranceOptions"] = {"backend": "rocksdb"}


def _serve_llm(text: str) -> Callable[[Obj], None]:
    return lambda obj: serve(obj, text)


def _llm_field(key: str, value: Any) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        config = yaml.safe_load(obj["spec"]["serveConfigV2"])
        config["applications"][0]["args"]["llm_configs"][0][key] = value
        obj["spec"]["serveConfigV2"] = yaml.safe_dump(config)

    return change


def _llm_floor(replicas: int) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        config = yaml.safe_load(obj["spec"]["serveConfigV2"])
        config["applications"][0]["args"]["llm_configs"][0]["deployment_config"]["autoscaling_config"][
            "min_replicas"
        ] = replicas
        obj["spec"]["serveConfigV2"] = yaml.safe_dump(config)

    return change


def _head_exposed(obj: Obj) -> None:
    head(obj)["serviceType"] = "LoadBalancer"
    cluster(obj)["authOptions"] = {"mode": "disabled"}


ALSO: dict[str, set[str]] = {
    # An exposed head without auth is, necessarily, also a cluster without auth.
    "head-exposed-without-auth": {"auth-disabled"},
    # The CPU RayService twin needs rocksdb GCS FT, whose operator gate is off by default.
    "serving-min-replicas": {"feature-gates-unknown"},
    # networkPolicy is behind an alpha gate: judged alone, the gate is unknown.
    "network-policy-incomplete": {"feature-gates-unknown"},
    # A moving or missing tag is, necessarily, also a reference without a digest.
    "image-tag": {"image-digest"},
}
"""Rules that may fire together with the one a fixture targets, and why."""

CASES: dict[str, list[tuple[str, Callable[[Obj], None], str]]] = {
    "head-runs-tasks": [
        ("raycluster", _drop(lambda o: head(o)["rayStartParams"], "num-cpus"), 'set num-cpus: "0"'),
        (
            "rayservice",
            _drop(lambda o: head(o)["rayStartParams"], "num-gpus"),
            'the cluster has GPUs; set num-gpus: "0"',
        ),
    ],
    "worker-groups-by-hardware": [
        ("raycluster", _mixed_group, "mixes google.com/tpu and nvidia.com/gpu"),
        (
            "raycluster",
            lambda o: worker(o)["template"]["spec"].update(
                tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}]
            ),
            "CPU-only group cpu tolerates nvidia.com/gpu",
        ),
        (
            "raycluster",
            lambda o: worker(o)["template"]["spec"].update(nodeSelector={"cloud.google.com/gke-accelerator": "a100"}),
            "selects accelerator nodes (cloud.google.com/gke-accelerator)",
        ),
    ],
    "worker-group-replicas": [
        ("raycluster", _set(worker, minReplicas=5), "minReplicas 5 > maxReplicas 4"),
        ("raycluster", _set(worker, replicas=9), "replicas 9 is outside minReplicas..maxReplicas (0..4)"),
        ("raycluster", _duplicate_group, "groupName 'cpu' is used twice"),
    ],
    "resources-required": [
        (
            "raycluster",
            lambda o: container(worker(o)).pop("resources"),
            "set resources requests.cpu, requests.memory, limits.memory",
        ),
        ("rayjob", lambda o: container(head(o))["resources"]["limits"].pop("memory"), "set resources limits.memory"),
    ],
    "memory-request-below-limit": [
        (
            "raycluster",
            lambda o: container(worker(o))["resources"]["requests"].update(memory="8Gi"),
            "memory request 8Gi is below the limit 16Gi",
        ),
    ],
    "accelerator-params": [
        (
            "raycluster",
            lambda o: worker(o).update(rayStartParams={"num-gpus": "1"}),
            "num-gpus is '1' but the pod requests no GPU (nvidia.com/gpu, amd.com/gpu or a MIG profile)",
        ),
        (
            "rayservice",
            lambda o: worker(o).update(rayStartParams={"num-gpus": "8"}),
            "num-gpus is '8' but the pod has 4 GPU(s)",
        ),
        (
            "raycluster",
            lambda o: worker(o).update(resources={"GPU": "1"}),
            "resources declares GPU '1' but the pod requests no",
        ),
    ],
    "tpu-topology-selectors": [
        (
            "rayjob",
            lambda o: worker(o)["template"]["spec"].pop("nodeSelector"),
            "must select cloud.google.com/gke-tpu-accelerator and cloud.google.com/gke-tpu-topology",
        ),
    ],
    "worker-probe-dashboard": [
        ("raycluster", _worker_probe, "readinessProbe targets the dashboard (8265)"),
    ],
    "image-tag": [
        (
            "raycluster",
            lambda o: container(worker(o)).update(image="rayproject/ray:latest"),
            "uses the moving tag 'latest'",
        ),
        ("raycluster", lambda o: container(worker(o)).update(image="rayproject/ray"), "has no tag (means latest)"),
    ],
    "image-digest": [
        ("raycluster", lambda o: container(worker(o)).update(image="rayproject/ray:2.60.0-py311"), "has no digest"),
    ],
    "image-ray-version": [
        (
            "raycluster",
            lambda o: container(worker(o)).update(image="rayproject/ray:2.52.0-py311@sha256:" + "b" * 64),
            "is Ray 2.52.0 but rayVersion is 2.60.0",
        ),
    ],
    "runtime-env-installs": [
        (
            "rayjob",
            lambda o: o["spec"].update(runtimeEnvYAML="pip:\n  - torch==2.5.0\n"),
            "runtimeEnvYAML.pip: installs packages at run time",
        ),
        (
            "rayjob",
            lambda o: o["spec"].update(runtimeEnvYAML="uv:\n  packages: [numpy]\n"),
            "runtimeEnvYAML.uv: installs packages",
        ),
        (
            "rayjob",
            lambda o: o["spec"].update(runtimeEnvYAML="conda: environment.yaml\n"),
            "runtimeEnvYAML.conda: installs packages",
        ),
        ("rayjob", lambda o: o["spec"].update(runtimeEnvYAML="pip: requirements.txt\n"), "runtimeEnvYAML.pip"),
        (
            "rayjob",
            lambda o: o["spec"].update(entrypoint="pip install -r req.txt && python train.py"),
            "entrypoint installs packages",
        ),
        (
            "rayservice",
            _serve_llm(
                "applications:\n- name: a\n  route_prefix: /\n  import_path: m:app\n  runtime_env:\n    pip: [x]\n"
            ),
            "applications[0].runtime_env.pip",
        ),
    ],
    "serving-without-gcs-ft": [
        ("rayservice", lambda o: cluster(o).pop("gcsFaultToleranceOptions"), "gcsFaultToleranceOptions: missing"),
    ],
    "rayservice-upgrade-none": [
        ("rayservice", lambda o: o["spec"].update(upgradeStrategy={"type": "None"}), "upgradeStrategy.type is None"),
    ],
    "serving-min-replicas": [
        ("rayservice", _llm_floor(1), "llm_configs[0]: at least 1 replica(s); a service that upgrades incrementally"),
        (
            "raycluster",
            lambda o: (
                o.update(
                    kind="RayService",
                    spec={
                        "rayClusterConfig": o["spec"],
                        "excludeHeadPodFromServeSvc": True,
                        "upgradeStrategy": {"type": "NewCluster"},
                    },
                )
                or cluster(o).update(gcsFaultToleranceOptions={"backend": "rocksdb"})
                or worker(o).update(minReplicas=1, maxReplicas=4)
            ),
            "minReplicas is 1: serving group cpu needs a floor of at least 2",
        ),
    ],
    "serve-traffic-through-head": [
        ("rayservice", lambda o: o["spec"].pop("excludeHeadPodFromServeSvc"), "set it to true"),
    ],
    "blue-green-accelerator-service": [
        (
            "rayservice",
            lambda o: o["spec"].update(upgradeStrategy={"type": "NewCluster"}),
            "holding 8 accelerators: a blue-green upgrade needs 16; "
            "use NewClusterWithIncrementalUpgrade, which peaks at 12",
        ),
    ],
    "llm-serving-grace-period": [
        ("rayservice", lambda o: worker(o)["template"]["spec"].pop("terminationGracePeriodSeconds"), "is 30 (default)"),
        ("rayservice", lambda o: worker(o)["template"]["spec"].update(terminationGracePeriodSeconds=120), "is 120"),
    ],
    "network-policy-incomplete": [
        (
            "raycluster",
            lambda o: cluster(o).update(networkPolicy={"mode": "DenyAll"}),
            "no DNS egress (port 53)",
        ),
        (
            "rayservice",
            lambda o: cluster(o).update(networkPolicy={"mode": "DenyAllIngress"}),
            "lets nothing outside the cluster reach the head's dashboard",
        ),
    ],
    "serving-exposed-without-auth": [
        (
            "rayservice",
            lambda o: o["metadata"].pop("annotations"),
            "KubeRay will create Gateway llm-gateway (HTTP on port 80",
        ),
    ],
    "local-working-dir": [
        (
            "rayjob",
            lambda o: o["spec"].update(runtimeEnvYAML="working_dir: /app\n"),
            "working_dir '/app' is a local path",
        ),
    ],
    "group-resources-conflict": [
        (
            "raycluster",
            lambda o: head(o).update(resources={"CPU": "0"}),
            "both rayStartParams (num-cpus) and resources",
        ),
    ],
    "serve-worker-readiness": [
        (
            "rayservice",
            lambda o: container(worker(o)).update(
                readinessProbe={
                    "exec": {"command": ["bash", "-c", "wget -q -O- http://localhost:52365/api/local_raylet_healthz"]}
                }
            ),
            "replaces KubeRay's, which also checks the Serve proxy",
        ),
        (
            "rayservice",
            lambda o: container(worker(o)).update(readinessProbe={"tcpSocket": {"port": 8000}}),
            "/-/healthz",
        ),
    ],
    "llm-accelerator-advertised": [
        (
            "rayservice",
            _llm_field("accelerator_type", "A100"),
            "asks for accelerator_type 'A100', but no worker group declares the resource 'accelerator_type:A100'",
        ),
    ],
    "serve-config-schema": [
        ("rayservice", _serve_llm("applications:\n- name: a\n  import_path: nodots\n"), "invalid import path"),
        ("rayservice", _serve_llm("applications: [\n"), "not valid YAML"),
        ("rayservice", _llm_field("accelerator_type", "A100-80GB"), "accelerator_type: 'A100-80GB' is not one of the"),
    ],
    "incremental-upgrade-requirements": [
        (
            "rayservice",
            lambda o: o["spec"]["upgradeStrategy"].pop("clusterUpgradeOptions"),
            "gatewayClassName: required",
        ),
        (
            "rayservice",
            lambda o: cluster(o).update(enableInTreeAutoscaling=False),
            "enableInTreeAutoscaling: must be true",
        ),
        (
            "rayservice",
            lambda o: o["spec"]["upgradeStrategy"]["clusterUpgradeOptions"].update(stepSizePercent=50),
            "stepSizePercent 50 exceeds maxSurgePercent 20",
        ),
    ],
    "auth-disabled": [
        ("raycluster", lambda o: cluster(o).pop("authOptions"), "authOptions.mode: not set"),
        ("rayjob", lambda o: cluster(o).update(authOptions={"mode": "disabled"}), "authOptions.mode is disabled"),
    ],
    "head-exposed-without-auth": [
        (
            "raycluster",
            lambda o: (
                cluster(o).pop("authOptions", None),
                head(o).update(headService={"spec": {"type": "LoadBalancer"}}),
            ),
            "headService of type LoadBalancer",
        ),
        ("raycluster", _head_exposed, "exposes the head (serviceType LoadBalancer) without token auth"),
    ],
    "redis-password-missing": [
        ("rayservice", lambda o: cluster(o)["gcsFaultToleranceOptions"].pop("redisPassword"), "redisPassword: missing"),
    ],
    "redis-password-inline": [
        (
            "rayservice",
            lambda o: cluster(o)["gcsFaultToleranceOptions"].update(redisPassword={"value": "hunter2"}),
            "redisPassword.value: the password is in plain text",
        ),
    ],
    "deprecated-api-version": [
        (
            "raycluster",
            lambda o: o.update(apiVersion="ray.io/v1alpha1"),
            "apiVersion ray.io/v1alpha1 is deprecated; use ray.io/v1",
        ),
    ],
    "deletion-rules-conflict": [
        (
            "rayjob",
            lambda o: (
                o["spec"].update(
                    deletionStrategy={
                        "deletionRules": [
                            {"policy": "DeleteCluster", "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 60}}
                        ]
                    }
                )
                or o["metadata"].pop("labels")
            ),
            "cannot be combined with shutdownAfterJobFinishes, ttlSecondsAfterFinished",
        ),
        (
            "rayjob",
            lambda o: (
                o["spec"].update(
                    shutdownAfterJobFinishes=False,
                    ttlSecondsAfterFinished=0,
                    deletionStrategy={
                        "deletionRules": [{"policy": "DeleteWorkers", "condition": {"jobStatus": "FAILED"}}]
                    },
                )
                or o["metadata"].pop("labels")
            ),
            "DeleteWorkers is not supported with rayClusterSpec.enableInTreeAutoscaling",
        ),
    ],
    "unknown-enum-values": [
        ("rayjob", lambda o: o["spec"].update(submissionMode="K8sJob"), "submissionMode 'K8sJob' is not one of"),
        (
            "rayservice",
            lambda o: o["spec"]["upgradeStrategy"].update(type="BlueGreen"),
            "upgradeStrategy.type 'BlueGreen' is not one of",
        ),
    ],
    "managed-by": [
        ("raycluster", lambda o: o["spec"].update(managedBy="kueue"), "spec.managedBy 'kueue' is not one of"),
    ],
    "kueue-rayjob": [
        ("rayjob", lambda o: o["spec"].pop("shutdownAfterJobFinishes"), "shutdownAfterJobFinishes: must be true"),
        ("rayjob", lambda o: o["spec"].update(clusterSelector={"ray.io/cluster": "shared"}), "remove clusterSelector"),
    ],
    "kueue-elastic-job": [
        ("rayjob", lambda o: o["metadata"].pop("annotations"), "refuses in-tree autoscaling on a queued workload"),
        (
            "rayjob",
            lambda o: o["metadata"]["annotations"].update({"kueue.x-k8s.io/elastic-job": "True"}),
            "unless it is elastic",
        ),
        (
            "raycluster",
            lambda o: (
                o["metadata"].update(
                    labels={"kueue.x-k8s.io/queue-name": "q"},
                    annotations={"kueue.x-k8s.io/elastic-job": "true"},
                )
                or o["spec"].update(managedBy="kueue.x-k8s.io/multikueue")
            ),
            "MultiKueue-managed elastic RayCluster",
        ),
    ],
    "kueue-batch-scheduler": [
        (
            "rayjob",
            lambda o: o["metadata"]["labels"].update({"volcano.sh/queue-name": "research"}),
            "metadata.labels.volcano.sh/queue-name: a Kueue-queued workload cannot also go through a batch scheduler",
        ),
        (
            "rayjob",
            lambda o: o["metadata"]["labels"].update({"ray.io/gang-scheduling-enabled": "true"}),
            "ray.io/gang-scheduling-enabled",
        ),
    ],
    "kueue-worker-group-limit": [
        ("rayjob", _many_groups, "has 18 groups; Kueue admits at most 17"),
    ],
    "feature-gates-unknown": [
        ("raycluster", _rocksdb, "needs the operator feature gate GCSFaultToleranceEmbeddedStorage (off by default"),
    ],
}
