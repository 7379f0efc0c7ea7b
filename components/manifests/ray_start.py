"""The ``ray start`` command line KubeRay runs in a head or worker container.

KubeRay turns ``rayStartParams`` into ``--key=value`` flags and adds what it derives from the Ray
container: ``--num-cpus`` from the CPU limit (rounded up), ``--memory`` from the memory limit,
``--num-gpus`` from GPU limits, the metrics and dashboard-agent ports, the head address for
workers, and ``--block``. A parameter set explicitly wins over the derived one. Rendering it lets
a test start real Ray processes with exactly the flags a cluster would get.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from typing import Any

from components.manifests.quantity import parse_quantity
from components.manifests.ray_objects import PodGroup, as_map, is_gpu_resource, number

METRICS_PORT = "8080"
DASHBOARD_AGENT_PORT = "52365"


def ray_start_command(group: PodGroup, head_address: str | None = None) -> list[str]:
    """argv of ``ray start`` for ``group`` (a worker needs ``head_address``, ``host:port``)."""
    params: dict[str, str] = {str(k): str(v) for k, v in group.ray_start_params.items()}
    limits = as_map(as_map(group.ray_container.get("resources")).get("limits"))
    requests = as_map(as_map(group.ray_container.get("resources")).get("requests"))
    cpu = parse_quantity(limits.get("cpu", requests.get("cpu")))
    if cpu is not None:
        params.setdefault("num-cpus", str(math.ceil(cpu)))
    memory = parse_quantity(limits.get("memory", requests.get("memory")))
    if memory is not None:
        params.setdefault("memory", str(int(memory)))
    # KubeRay takes the first GPU resource (sorted) with a positive limit (addWellKnownAcceleratorResources)
    gpus = next((n for k in sorted(map(str, limits)) if is_gpu_resource(k) and (n := number(limits[k]))), None)
    if gpus:
        params.setdefault("num-gpus", str(int(gpus)))
    params.setdefault("metrics-export-port", METRICS_PORT)
    params.setdefault("dashboard-agent-listen-port", DASHBOARD_AGENT_PORT)
    argv = ["ray", "start"]
    if group.role == "head":
        argv.append("--head")
    else:
        if head_address is None:
            raise ValueError("a worker's ray start needs the head address")
        argv.append(f"--address={head_address}")
    argv += [f"--{key}={_shell_word(value)}" for key, value in sorted(params.items())]
    return [*argv, "--block"]


def _shell_word(value: str) -> str:
    """The value as the shell KubeRay runs ``ray start`` in hands it over (quotes removed)."""
    try:
        words = shlex.split(value)
    except ValueError:
        return value
    return words[0] if len(words) == 1 else value


def with_flags(argv: list[str], overrides: Mapping[str, Any]) -> list[str]:
    """``argv`` with ``--key=value`` flags replaced or added (e.g. free ports for a local run)."""
    keep = [a for a in argv if not any(a.startswith(f"--{k}=") for k in overrides)]
    block = [a for a in keep if a == "--block"]
    rest = [a for a in keep if a != "--block"]
    return rest + [f"--{k}={v}" for k, v in overrides.items()] + block
