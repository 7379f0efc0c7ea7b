"""Every stack deployed for real (``make e2e``): the pinned Pulumi CLI, Kubernetes provider and policy
pack run ``pulumi up`` into a local control plane (``tools.e2e``: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler, kwok nodes mirroring the pools, Kueue with its webhooks).

One control plane per stack, started at once; the runs go in parallel and the tests read what they
left in the API server. What the e2e installs itself, and why, is in ``tools/e2e.py``; the KubeRay
operator does not run (the Go module proxy refuses v1.7.0), so nothing reconciles the Ray objects and
the stacks run with ``workloads.waitForReady: false``.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.manifests.platform import build_manifests
from components.spec import parse_platform
from components.spec.platform import PlatformSpec
from components.spec.workloads import GpuPool
from tests.conftest import REPO, SHARED, UPSTREAM_CRDS, needs_shared
from tests.test_real_engine import _planted_head_runs_tasks
from tools import toolchain
from tools.e2e import LocalCluster, e2e_document, local_cluster
from tools.kube import Client, wait_until

pytestmark = pytest.mark.e2e

STACKS = ("dev", "staging", "prod")
CHART = SHARED / "charts" / "kuberay-operator-1.7.0.tgz"
PLATFORM = "kuberay-platform:platform"
SECRETS = {
    "prod": {
        "kuberay-platform:redisGcsPassword": ("E2E_REDIS_PASSWORD", "redis-e2e-0123456789abcdef"),
        "kuberay-platform:qwenChatRayToken": ("E2E_RAY_TOKEN", "ray-e2e-0123456789abcdef0123456789"),
    }
}
AUTOSCALER = "ray-autoscaler"  # the field manager of the day-2 replicas patch
PATCHED_REPLICAS = 7
NEW_ENTRYPOINT = "python -m evaluate --suite quick"


def prerequisite_crds() -> list[Path]:
    """The CRDs of what the stacks declare installed (their controllers are not the platform's)."""
    return [
        *sorted((UPSTREAM_CRDS / "prometheus-operator").glob("monitoring.coreos.com_*.yaml")),
        *sorted((UPSTREAM_CRDS / "cert-manager").glob("cert-manager.io_*.yaml")),
        *sorted((UPSTREAM_CRDS / "gateway-api").glob("gateway.networking.k8s.io_*.yaml")),
    ]


@dataclass
class Run:
    name: str
    args: list[str]
    returncode: int = -1
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass
class Deployed:
    stack: str
    cluster: LocalCluster
    spec: PlatformSpec
    document: Path
    runs: dict[str, Run] = field(default_factory=dict)
    left_after_destroy: set[str] = field(default_factory=set)
    observed: dict[str, Any] = field(default_factory=dict)
    """What the day-2 steps saw, recorded before the destroy that follows them."""

    @property
    def client(self) -> Client:
        return self.cluster.client


def _require_tools() -> None:
    problems = []
    if shutil.which("go") is None:
        problems.append("Go (the control plane and the real engine are built from their pinned modules)")
    if os.geteuid() != 0:
        problems.append("root (Kueue reads its metrics certificate from /etc/kueue/metrics/certs only)")
    if problems:
        if os.environ.get("CI") == "true":
            pytest.fail("make e2e needs " + " and ".join(problems))
        pytest.skip("needs " + " and ".join(problems))


def _engine_args(stack: str, document: Path, cluster: LocalCluster, base: Path) -> list[str]:
    args = ["pulumi-preview", "--stack", stack, "--stack-file", str(document), "--up"]
    args += ["--kubeconfig", str(cluster.kubeconfig), "--operator-chart", str(CHART)]
    args += ["--engine-dir", str(base / "pulumi"), "--out", str(base / "out")]
    for key, (variable, _) in SECRETS.get(stack, {}).items():
        args += ["--secret-from-env", f"{key}={variable}"]
    return args


def _run_all(plan: list[tuple[Run, Path]]) -> None:
    env = {**os.environ, "PULUMI_CONFIG_PASSPHRASE": "kuberay-platform-e2e"}
    env.update({variable: value for secrets in SECRETS.values() for variable, value in secrets.values()})
    procs = [
        (
            run,
            log,
            subprocess.Popen(
                [sys.executable, *run.args],
                cwd=REPO,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
        )
        for run, log in plan
    ]
    for run, log, proc in procs:
        run.output, _ = proc.communicate(timeout=1800)
        run.returncode = proc.returncode
        log.write_text(run.output)  # kept for a failing run's details


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


class Usage:
    """Wall time and the machine's peak memory in use above what it used before the run
    (``MemTotal - MemAvailable``, sampled every second): every process of the run counts."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.baseline = self.peak = self._used()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    @staticmethod
    def _used() -> int:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        return (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) * 1024

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            self.peak = max(self.peak, self._used())

    def report(self) -> str:
        self._stop.set()
        self._thread.join()
        minutes, seconds = divmod(int(time.monotonic() - self.start), 60)
        extra = (self.peak - self.baseline) / 2**30
        return f"make e2e: 3 control planes, {minutes} min {seconds} s, peak memory in use +{extra:.1f} GiB"


@pytest.fixture(scope="session")
def deployed(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[dict[str, Deployed]]:
    _require_tools()
    usage = Usage()
    needs_shared(CHART)
    needs_shared(UPSTREAM_CRDS)
    base = tmp_path_factory.mktemp("e2e")
    binaries = toolchain.ensure(log=lambda _: None, groups=("controlplane",))
    toolchain.ensure(log=lambda _: None)  # the real engine, before the runs start in parallel
    with ExitStack() as stack:
        out: dict[str, Deployed] = {}
        for name in STACKS:
            committed = yaml.safe_load((REPO / "stacks" / f"Pulumi.{name}.yaml").read_text())
            spec = parse_platform(committed["config"][PLATFORM], name)
            cluster = stack.enter_context(local_cluster(binaries, base / name / "plane", spec, prerequisite_crds()))
            document = _write(base / name / "stack.yaml", e2e_document(committed))
            out[name] = Deployed(name, cluster, spec, document)
        # First: every stack up, and (against dev's cluster) a stack with a planted mandatory violation.
        plan = []
        for name, d in out.items():
            plan.append(
                (
                    Run(name, ["-m", "tools", *_engine_args(name, d.document, d.cluster, base / name)]),
                    base / f"{name}.log",
                )
            )
        dev = yaml.safe_load(out["dev"].document.read_text())
        dev["config"][PLATFORM]["environment"] = "prod"
        dev["config"][PLATFORM]["networkPolicies"] = {"apiServerCidrs": ["10.0.0.1/32"]}
        for cluster_spec in dev["config"][PLATFORM]["workloads"].get("rayClusters", []):
            cluster_spec["name"] = f"planted-{cluster_spec['name']}"
        planted_doc = _write(base / "planted" / "stack.yaml", dev)
        args = _engine_args("planted", planted_doc, out["dev"].cluster, base / "planted")
        args = [a for a in args[1:] if a not in ("--stack-file", str(planted_doc))]  # the plant names the file
        planted = Run("planted", _planted_head_runs_tasks(planted_doc, args))
        plan.append((planted, base / "planted.log"))
        _run_all(plan)
        for run, _ in plan:
            (out["dev"] if run.name == "planted" else out[run.name]).runs[run.name] = run
        # Day 2 on prod: the autoscaler patches replicas, and a RayJob's entrypoint changes.
        prod = out["prod"]
        if prod.runs["prod"].ok:
            _autoscaler_patch(prod)
            document = yaml.safe_load(prod.document.read_text())
            for job in document["config"][PLATFORM]["workloads"]["rayJobs"]:
                if job["name"] == "eval-sweep":
                    job["entrypoint"] = NEW_ENTRYPOINT
            prod.observed["uids-before"] = _uids(prod)
            day2 = _write(base / "prod" / "day2.yaml", document)
            again = Run("prod-day2", ["-m", "tools", *_engine_args("prod", day2, prod.cluster, base / "prod")])
            _run_all([(again, base / "prod-day2.log")])
            prod.runs[again.name] = again
            prod.observed["uids-after"] = _uids(prod)
            prod.observed["replicas-after"] = _autoscaled_cluster(prod)["spec"]["workerGroupSpecs"][0]["replicas"]
            eval_sweep = prod.client.get("ray.io/v1", "RayJob", "eval-sweep", "ray-research")
            prod.observed["entrypoint-after"] = eval_sweep["spec"]["entrypoint"]
            # Destroy, list what is left, then up on that cluster again.
            destroy_args = _engine_args("prod", day2, prod.cluster, base / "prod")
            destroy = Run("prod-destroy", ["-m", "tools", *[a if a != "--up" else "--destroy" for a in destroy_args]])
            _run_all([(destroy, base / "prod-destroy.log")])
            prod.runs[destroy.name] = destroy
            prod.left_after_destroy = _platform_objects(prod.client)
            prod.observed["claims-after-destroy"] = sorted(
                f"{c['metadata']['namespace']}/{c['metadata']['name']}"
                for c in prod.client.list("v1", "PersistentVolumeClaim")
            )
            up = Run("prod-after-destroy", ["-m", "tools", *_engine_args("prod", day2, prod.cluster, base / "prod")])
            _run_all([(up, base / "prod-after-destroy.log")])
            prod.runs[up.name] = up
        yield out
    line = usage.report()
    (base / "usage.txt").write_text(line + "\n")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


def _autoscaled_cluster(d: Deployed) -> dict[str, Any]:
    clusters = d.client.list("ray.io/v1", "RayCluster")
    (found,) = [
        c for c in clusters if c["spec"].get("enableInTreeAutoscaling") and "ownerReferences" not in c["metadata"]
    ]
    return found  # type: ignore[no-any-return]


def _autoscaler_patch(d: Deployed) -> None:
    """What the Ray autoscaler does (``ray/autoscaler/_private/kuberay/node_provider.py``): a JSON patch
    of one worker group's replicas, as its own field manager."""
    obj = _autoscaled_cluster(d)
    meta = obj["metadata"]
    path = d.client.path("ray.io/v1", "RayCluster", meta["namespace"], meta["name"]) + f"?fieldManager={AUTOSCALER}"
    patch = [{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": PATCHED_REPLICAS}]
    d.client.request("PATCH", path, patch, "application/json-patch+json")


LEFT_KINDS = (
    ("v1", "Namespace"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "PersistentVolume"),
    ("v1", "ResourceQuota"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("ray.io/v1", "RayCluster"),
    ("ray.io/v1", "RayJob"),
    ("ray.io/v1", "RayCronJob"),
    ("ray.io/v1", "RayService"),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"),
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("cert-manager.io/v1", "Certificate"),
    ("cert-manager.io/v1", "ClusterIssuer"),
)


def _platform_objects(client: Client) -> set[str]:
    """``Kind namespace/name`` of every object the platform labels as its own, and the Ray CRDs."""
    found = {
        f"{kind} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        for api_version, kind in LEFT_KINDS
        for o in client.list(api_version, kind, selector="app.kubernetes.io/managed-by=pulumi")
    }
    crds = client.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    return found | {
        f"CustomResourceDefinition /{c['metadata']['name']}" for c in crds if c["spec"]["group"] == "ray.io"
    }


def _uids(d: Deployed) -> dict[str, str]:
    return {
        f"{kind}/{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["uid"]
        for kind in ("RayCluster", "RayJob", "RayService")
        for o in d.client.list("ray.io/v1", kind)
    }


# --- every stack: up, no changes, the objects as planned ---------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_each_stack_ups_into_the_api_server_and_then_previews_no_changes(
    deployed: dict[str, Deployed], stack: str
) -> None:
    run = deployed[stack].runs[stack]
    assert run.ok, run.output[-5000:]
    assert "Traceback" not in run.output
    assert run.output.count("✅ kuberay-platform-policies@") == 2, run.output[-3000:]
    last = run.output.rsplit("Previewing update", 1)[1]
    assert "unchanged" in last and " to create" not in last and " to update" not in last and " to replace" not in last


def _contained(want: Any, have: Any, path: str = "") -> list[str]:
    """Where ``want`` is not part of ``have`` (maps may hold more keys; lists match item by item)."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            return [f"{path}: {have!r}"]
        return [p for k, v in want.items() for p in _contained(v, have.get(k), f"{path}.{k}")]
    if isinstance(want, list):
        if not isinstance(have, list) or len(have) != len(want):
            return [f"{path}: {have!r}"]
        return [p for i, (w, h) in enumerate(zip(want, have, strict=True)) for p in _contained(w, h, f"{path}[{i}]")]
    return [] if want == have else [f"{path}: want {want!r}, have {have!r}"]


def _planned(stack: str, document: Path, out: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "preview", "--stack", stack, "--stack-file", str(document), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return [
        doc for p in sorted((out / stack / "manifests").glob("*.yaml")) for doc in yaml.safe_load_all(p.read_text())
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_every_planned_object_is_in_the_api_server_as_planned(
    deployed: dict[str, Deployed], stack: str, tmp_path: Path
) -> None:
    d = deployed[stack]
    assert d.runs[stack].ok
    planned = _planned(stack, d.document, tmp_path)
    assert any(o["kind"] == "RayCluster" or o["kind"] == "RayCronJob" for o in planned)
    problems = []
    for obj in planned:
        meta = obj["metadata"]
        live = d.client.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        want = {k: v for k, v in obj.items() if k not in ("stringData", "data")}  # Secrets: placeholders offline
        problems += [f"{obj['kind']} {meta.get('namespace', '')}/{meta['name']}{p}" for p in _contained(want, live)]
    if d.stack == "prod":  # the day-2 run changed these since
        problems = [p for p in problems if "replicas" not in p and "eval-sweep" not in p]
    assert problems == []


@pytest.mark.parametrize("stack", STACKS)
def test_the_operator_and_stateful_pods_run_on_cpu_nodes(deployed: dict[str, Deployed], stack: str) -> None:
    """The chart's operator Deployment (and prod's Redis) pass Pod Security admission in their
    namespaces, kube-scheduler binds them to CPU nodes and kwok reports them Running."""
    d = deployed[stack]
    assert d.runs[stack].ok
    nodes = {n["metadata"]["name"]: n for n in d.client.list("v1", "Node")}
    pods = [p for p in d.client.list("v1", "Pod") if p["metadata"]["namespace"] != "kube-system"]
    operators = [p for p in pods if p["metadata"]["name"].startswith("kuberay-operator-")]
    assert operators and all(p["status"]["phase"] == "Running" for p in pods), [
        (p["metadata"]["name"], p["status"].get("phase")) for p in pods
    ]
    for pod in pods:
        node = nodes[pod["spec"]["nodeName"]]
        assert "nvidia.com/gpu" not in node["status"]["capacity"] and "google.com/tpu" not in node["status"]["capacity"]
    if stack == "prod":
        assert any(p["metadata"]["name"] == "redis-gcs-0" for p in pods)
        claims = d.client.list("v1", "PersistentVolumeClaim", "ray-serving")
        assert claims and all(c["status"]["phase"] == "Bound" for c in claims)


@pytest.mark.parametrize("stack", STACKS)
def test_namespaces_enforce_the_planned_pod_security_level(deployed: dict[str, Deployed], stack: str) -> None:
    d = deployed[stack]
    assert d.runs[stack].ok
    namespaces = {w.namespace for _, w in d.spec.workloads.all()}
    for name in namespaces:
        labels = d.client.get("v1", "Namespace", name)["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] in ("restricted", "baseline"), (name, labels)


# --- Kueue -----------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_kueue_admits_each_queued_rayjob_to_its_pools_flavor(deployed: dict[str, Deployed], stack: str) -> None:
    d = deployed[stack]
    assert d.runs[stack].ok
    queued = [w for _, w in d.spec.workloads.all() if w.queue and w.kind == "RayJob"]
    assert queued
    for job in queued:

        def admitted(job: Any = job) -> list[dict[str, Any]]:
            owned = [
                w
                for w in d.client.list("kueue.x-k8s.io/v1beta2", "Workload", job.namespace)
                if any(o["name"] == job.name for o in w["metadata"].get("ownerReferences", []))
            ]
            conditions = (
                {c["type"]: c["status"] for c in (owned[0].get("status") or {}).get("conditions", [])} if owned else {}
            )
            return owned if conditions.get("Admitted") == "True" else []

        workloads = wait_until(f"Kueue admits {job.name}", admitted, timeout=60)
        assert len(workloads) == 1, (job.name, [w["metadata"]["name"] for w in workloads])
        status = workloads[0]["status"]
        flavors = {a["name"]: set(a["flavors"].values()) for a in status["admission"]["podSetAssignments"]}
        for group in job.worker_groups:
            assert flavors[group.name] == {group.pool}, (job.name, flavors)
        assert flavors["head"] == {"cpu"}


def _owned_workload(d: Deployed, namespace: str, owner: str) -> dict[str, Any] | None:
    owned = [
        w
        for w in d.client.list("kueue.x-k8s.io/v1beta2", "Workload", namespace)
        if any(o["name"] == owner for o in w["metadata"].get("ownerReferences", []))
    ]
    return owned[0] if owned else None


def _condition(workload: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for c in ((workload or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == kind:
            return dict(c)
    return {}


# --- day 2 -------------------------------------------------------------------------------------


def test_an_autoscaler_replicas_patch_survives_the_next_up(deployed: dict[str, Deployed]) -> None:
    d = deployed["prod"]
    run = d.runs["prod-day2"]
    assert run.ok, run.output[-5000:]
    assert d.observed["replicas-after"] == PATCHED_REPLICAS


def test_a_changed_rayjob_entrypoint_replaces_the_job(deployed: dict[str, Deployed]) -> None:
    d = deployed["prod"]
    assert d.runs["prod-day2"].ok
    before, after = d.observed["uids-before"], d.observed["uids-after"]
    changed = {k for k in before if before[k] != after.get(k)}
    assert changed == {"RayJob/ray-research/eval-sweep"}
    assert d.observed["entrypoint-after"] == NEW_ENTRYPOINT


# --- policies ------------------------------------------------------------------------------------


def test_a_planted_mandatory_violation_leaves_the_cluster_untouched(deployed: dict[str, Deployed]) -> None:
    d = deployed["dev"]
    run = d.runs["planted"]
    assert run.returncode != 0
    assert "[mandatory]" in run.output and "head-runs-tasks" in run.output, run.output[-3000:]
    names = {c["metadata"]["name"] for c in d.client.list("ray.io/v1", "RayCluster")}
    assert names and not any(n.startswith("planted-") for n in names)
    prod_labelled = d.client.list("v1", "Namespace", selector="kuberay-platform.io/environment=prod")
    assert prod_labelled == []


# --- destroy -------------------------------------------------------------------------------------

LEFT_ON_PURPOSE = {
    "CustomResourceDefinition /rayclusters.ray.io": "CRDs are retained on delete (deleting one deletes its objects)",
    "CustomResourceDefinition /raycronjobs.ray.io": "(same)",
    "CustomResourceDefinition /rayjobs.ray.io": "(same)",
    "CustomResourceDefinition /rayservices.ray.io": "(same)",
    "Namespace /ray-prod": "prod's workload namespaces are protected: they hold data (claims, Secrets)",
    "Namespace /ray-research": "(same)",
    "Namespace /ray-serving": "(same)",
    "Namespace /ray-training": "(same)",
    "StatefulSet ray-serving/redis-gcs": "durable GCS state: protected and retained",
    "Secret ray-serving/redis-gcs-redis-password": "its password: protected and retained",
}


def test_destroy_removes_workloads_and_operator_and_leaves_crds_and_protected_state(
    deployed: dict[str, Deployed],
) -> None:
    d = deployed["prod"]
    run = d.runs["prod-destroy"]
    assert run.ok, run.output[-4000:]
    left = d.left_after_destroy
    print("left after pulumi destroy (prod):")
    for item in sorted(left):
        print(f"  {item}: {LEFT_ON_PURPOSE.get(item, 'NOT EXPECTED')}")
    assert left == set(LEFT_ON_PURPOSE)
    # Not labelled by the platform, so not above: the StatefulSet's claim keeps Redis's data (and the
    # prerequisite claim the stack never owned stays too).
    assert d.observed["claims-after-destroy"] == ["ray-serving/data-redis-gcs-0", "ray-training/pretrain-checkpoints"]


def test_up_after_destroy_succeeds_on_what_was_left(deployed: dict[str, Deployed]) -> None:
    d = deployed["prod"]
    run = d.runs["prod-after-destroy"]
    assert run.ok, run.output[-5000:]
    last = run.output.rsplit("Previewing update", 1)[1]
    assert " to create" not in last and " to update" not in last and " to replace" not in last
    assert d.client.exists("ray.io/v1", "RayService", "qwen-chat", "ray-serving")


# --- Kueue quota (mutates staging: last) ---------------------------------------------------------


def test_a_second_job_over_the_quota_stays_suspended_until_the_first_is_gone(deployed: dict[str, Deployed]) -> None:
    """A user submits a second fine-tuning job as large as the ClusterQueue's whole L4 quota (it fits
    alone, not beside the running one): Kueue keeps it suspended, and admits it once the first is
    deleted."""
    d = deployed["staging"]
    assert d.runs["staging"].ok
    document = yaml.safe_load(d.document.read_text())
    platform = document["config"][PLATFORM]
    (first,) = [j for j in platform["workloads"]["rayJobs"] if j["name"] == "finetune"]
    (queue,) = [q for q in d.spec.kueue.cluster_queues if q.name == first["queue"]]
    pool = first["workerGroups"][0]["pool"]
    gpu_pool = d.spec.workloads.pools[pool]
    assert isinstance(gpu_pool, GpuPool)
    hosts = int(str(queue.quotas[pool].resources()["nvidia.com/gpu"].nominal)) // gpu_pool.gpus_per_pod
    second = {**copy.deepcopy(first), "name": "finetune-2", "elastic": False, "autoscaler": {"enabled": False}}
    second["workerGroups"][0].update(minReplicas=hosts, maxReplicas=hosts)
    platform["workloads"]["rayJobs"] = [second]
    platform["workloads"]["rayClusters"] = []
    (job,) = [
        o for o in build_manifests(parse_platform(platform, "staging"), "staging").workloads if o["kind"] == "RayJob"
    ]
    d.client.apply(job, manager="kubectl")

    def pending() -> bool:
        reserved = _condition(_owned_workload(d, "ray-staging", "finetune-2"), "QuotaReserved")
        return reserved.get("status") == "False" and "insufficient" in reserved.get("message", "")

    wait_until("finetune-2 pending for quota", pending, timeout=60)
    assert d.client.get("ray.io/v1", "RayJob", "finetune-2", "ray-staging")["spec"]["suspend"] is True
    assert _condition(_owned_workload(d, "ray-staging", "finetune"), "Admitted").get("status") == "True"

    d.client.delete("ray.io/v1", "RayJob", "finetune", "ray-staging")

    def admitted_and_started() -> bool:
        workload = _owned_workload(d, "ray-staging", "finetune-2")
        job = d.client.get("ray.io/v1", "RayJob", "finetune-2", "ray-staging")
        # Kueue admits the Workload, then unsuspends the job (it writes false, which omitempty drops).
        return _condition(workload, "Admitted").get("status") == "True" and not job["spec"].get("suspend", False)

    wait_until("finetune-2 admitted and unsuspended once finetune is gone", admitted_and_started, timeout=120)
