"""Real Ray: the head and worker ``ray start`` lines KubeRay would run for the dev stack's cluster,
started as local processes with Ray 2.60.0; a task must run on the worker, never on the head."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from components.manifests.platform import build_manifests
from components.manifests.ray_objects import pod_groups
from components.manifests.ray_start import ray_start_command, with_flags
from components.spec import parse_platform
from tests.conftest import REPO
from tools.stackfile import read_stack_config

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def dev_cluster() -> dict:
    config, _ = read_stack_config(REPO / "stacks/Pulumi.dev.yaml", "dev")
    spec = parse_platform(config["kuberay-platform:platform"], "dev")
    return next(o for o in build_manifests(spec, "dev").workloads if o["kind"] == "RayCluster")


def test_the_rendered_command_lines_carry_the_manifest_params() -> None:
    head, worker = list(pod_groups(dev_cluster()))
    head_argv = ray_start_command(head)
    worker_argv = ray_start_command(worker, "ray-head:6379")
    assert head_argv[:3] == ["ray", "start", "--head"] and head_argv[-1] == "--block"
    assert "--num-cpus=0" in head_argv  # rayStartParams win over the CPU limit (1)
    assert "--memory=4294967296" in head_argv and "--dashboard-host=0.0.0.0" in head_argv
    assert "--address=ray-head:6379" in worker_argv
    assert "--num-cpus=2" in worker_argv and "--memory=8589934592" in worker_argv
    with pytest.raises(ValueError, match="head address"):
        ray_start_command(worker)


@pytest.fixture
def ray_processes(tmp_path: Path):  # type: ignore[no-untyped-def]
    started: list[subprocess.Popen[bytes]] = []
    yield started
    # Workers first: a worker stopped after its head waits 30 s to drain through a GCS that is gone.
    for proc in reversed(started):
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the node's process group (its raylet and agents too), SIGKILL after 30 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _start(argv: list[str], env: dict[str, str], log: Path, started: list[subprocess.Popen[bytes]]) -> None:
    ray = Path(sys.executable).with_name("ray")
    started.append(
        subprocess.Popen(
            [str(ray), *argv[1:]], env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True
        )
    )


def _wait_started(log: Path, proc: subprocess.Popen[bytes], timeout: float = 120) -> str | None:
    """``ray start --block`` prints "Ray runtime started" once the node is up: None then, else why not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        if "Ray runtime started" in text:
            return None
        if proc.poll() is not None:
            return f"ray start exited {proc.returncode}:\n{text[-3000:]}"
        time.sleep(0.5)
    return f"ray start did not come up in {timeout} s:\n{log.read_text(errors='replace')[-3000:]}"


# Ray gives a starting node's raylet a fixed 30 s to register with the GCS (ray._private.node, not
# configurable in 2.60); on a loaded 2-core runner that can pass. A node that does not come up is
# stopped and started again on fresh ports, at most this many times in all.
START_ATTEMPTS = 3


def _start_node(
    argv: Callable[[], list[str]], env: dict[str, str], log: Path, started: list[subprocess.Popen[bytes]], logs: str
) -> None:
    """Start a node with ``argv()`` (fresh ports each attempt) until it is up; fail with every
    attempt's output and the raylet logs under ``logs`` (the head's temp dir) if it never is."""
    failures: list[str] = []
    for attempt in range(1, START_ATTEMPTS + 1):
        attempt_log = log.with_name(f"{log.stem}-{attempt}{log.suffix}")
        _start(argv(), env, attempt_log, started)
        failure = _wait_started(attempt_log, started[-1])
        if failure is None:
            return
        _stop(started.pop())
        failures.append(f"attempt {attempt}: {failure}")
    raylet_logs = sorted(Path(logs).glob("session_*/logs/raylet*.*"))
    tails = "".join(f"\n--- {p.name}:\n{p.read_text(errors='replace')[-1500:]}" for p in raylet_logs)
    raise AssertionError("\n".join(failures) + tails)


def test_a_task_runs_on_the_worker_never_on_the_head(ray_processes, tmp_path: Path, request) -> None:  # type: ignore[no-untyped-def]
    if shutil.which("ray", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("Ray is not installed in the venv (requirements.txt pins ray[serve]==2.60.0)")
    head, worker = list(pod_groups(dev_cluster()))
    short_tmp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths must stay under 108 bytes
    request.addfinalizer(lambda: shutil.rmtree(short_tmp, ignore_errors=True))
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1"}
    # Local adjustments only: two nodes share one machine, so each gets free ports, a small object
    # store and its own temp dir; every Ray parameter from the manifest stays as rendered.
    local = {"object-store-memory": str(100 * 1024 * 1024), "node-ip-address": "127.0.0.1"}
    ports: dict[str, int] = {}

    def head_argv() -> list[str]:
        ports.update(gcs=free_port(), head_metrics=free_port())
        return with_flags(
            ray_start_command(head),
            {
                "port": ports["gcs"],
                "dashboard-port": free_port(),
                "metrics-export-port": ports["head_metrics"],
                "dashboard-agent-listen-port": free_port(),
                "temp-dir": short_tmp,
                **local,
            },
        )

    def worker_argv() -> list[str]:
        ports.update(worker_metrics=free_port())
        return with_flags(
            ray_start_command(worker, f"127.0.0.1:{ports['gcs']}"),
            {"metrics-export-port": ports["worker_metrics"], "dashboard-agent-listen-port": free_port(), **local},
        )

    _start_node(head_argv, env, tmp_path / "head.log", ray_processes, short_tmp)
    _start_node(worker_argv, env, tmp_path / "worker.log", ray_processes, short_tmp)
    gcs, head_metrics, worker_metrics = ports["gcs"], ports["head_metrics"], ports["worker_metrics"]
    driver = textwrap.dedent(
        f"""
        import time, ray
        ray.init(address="127.0.0.1:{gcs}", _node_ip_address="127.0.0.1")
        deadline = time.time() + 120
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            assert time.time() < deadline, "worker never joined"
            time.sleep(1)
        head = [n["NodeID"] for n in ray.nodes() if n["Alive"] and "node:__internal_head__" in n["Resources"]]
        assert len(head) == 1, ray.nodes()
        head_node = next(n for n in ray.nodes() if n["NodeID"] == head[0])
        print("head-cpus", int(head_node["Resources"].get("CPU", 0)))

        @ray.remote
        def where():
            return ray.get_runtime_context().get_node_id()

        # SPREAD would put tasks on every node that can take them: only the head's num-cpus 0 keeps them off it.
        placed = set(ray.get([where.options(scheduling_strategy="SPREAD").remote() for _ in range(8)], timeout=120))
        print("head", head[0])
        print("placed", sorted(placed))
        assert head[0] not in placed
        """
    )
    result = subprocess.run([sys.executable, "-c", driver], env=env, capture_output=True, text=True, timeout=240)
    logs = "".join(p.read_text(errors="replace")[-2000:] for p in sorted(tmp_path.glob("*.log")))
    assert result.returncode == 0, result.stdout + result.stderr + logs
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert lines["head-cpus"] == "0"
    assert lines["head"] not in lines["placed"]
    # The metrics the platform's alert rules read (components.manifests.monitoring), as Ray 2.60 exports
    # them on each node's metrics port: the GCS's health checks on the head, one node series per node.
    head_names = wait_for_metrics(head_metrics, GCS_HEARTBEAT, "ray_node_cpu_count")
    assert any(line.startswith(GCS_HEARTBEAT) and 'Component="gcs_server"' in line for line in head_names)
    wait_for_metrics(worker_metrics, "ray_node_cpu_count")


GCS_HEARTBEAT = "ray_health_check_rpc_latency_ms_count"


def wait_for_metrics(port: int, *names: str, timeout: float = 90) -> list[str]:
    """The sample lines of a node's metrics endpoint once every name in ``names`` is among them (Ray
    reports every few seconds)."""
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                lines = [line for line in response.read().decode().splitlines() if not line.startswith("#")]
        except OSError:
            lines = []
        if all(any(line.startswith(name + "{") for line in lines) for name in names):
            return lines
        time.sleep(2)
    found = sorted({line.split("{", 1)[0] for line in lines})
    raise AssertionError(f"port {port} never exported {names}; it exports {found}")
