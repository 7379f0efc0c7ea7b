"""Generated fleets for ``make bench``: a staging-like stack with N RayClusters, and the same
resources registered by a bare ``pulumi_kubernetes`` program, both under the offline engine.

Each cluster has three worker groups (CPU, high-memory CPU, L4 GPU), is queued in Kueue, monitored
(PodMonitors, alert rules) and policed (default-deny NetworkPolicies with the platform's
allowances); the clusters are spread over ten namespaces, one ClusterQueue and LocalQueue each.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

NAMESPACES = 10


def _group(name: str, pool: str, replicas: int, cpu: str, memory: str) -> dict[str, Any]:
    return {
        "name": name,
        "pool": pool,
        "minReplicas": replicas,
        "maxReplicas": replicas,
        "resources": {"cpu": cpu, "memory": memory},
    }


def fleet_spec(clusters: int) -> dict[str, Any]:
    """A staging stack's spec with ``clusters`` RayClusters."""
    namespaces = [f"fleet-{i:02d}" for i in range(NAMESPACES)]
    per_namespace = -(-clusters // NAMESPACES)
    return {
        "environment": "staging",
        "kubernetesVersion": "1.33",
        "prerequisites": {"prometheusOperator": True},
        "monitoring": {
            "prometheus": {"namespace": "monitoring", "selectorLabels": {"release": "kube-prometheus-stack"}}
        },
        "networkPolicies": {"apiServerCidrs": ["172.16.0.2/32"]},
        "operator": {"scale": "large" if clusters >= 100 else "small", "replicas": 2},
        "kueue": {
            "install": {},
            "clusterQueues": [
                {
                    "name": ns,
                    "namespaces": [ns],
                    "quotas": {
                        "cpu": {"cpu": str(64 * per_namespace), "memory": f"{256 * per_namespace}Gi"},
                        "l4": {
                            "cpu": str(32 * per_namespace),
                            "memory": f"{128 * per_namespace}Gi",
                            "gpu": 4 * per_namespace,
                        },
                    },
                }
                for ns in namespaces
            ],
            "localQueues": [{"namespace": ns, "name": "batch", "clusterQueue": ns} for ns in namespaces],
        },
        "workloads": {
            "pools": {"cpu": {"type": "cpu"}, "l4": {"type": "gpu", "gpusPerPod": 1, "product": "NVIDIA-L4"}},
            "rayClusters": [
                {
                    "name": f"fleet-{i:04d}",
                    "namespace": namespaces[i % NAMESPACES],
                    "queue": "batch",
                    "autoscaler": {"enabled": False},
                    "workerGroups": [
                        _group("cpu", "cpu", 2, "4", "16Gi"),
                        _group("highmem", "cpu", 1, "8", "64Gi"),
                        _group("gpu", "l4", 1, "8", "32Gi"),
                    ],
                }
                for i in range(clusters)
            ],
        },
    }


def write_fleet_stack(clusters: int, directory: Path) -> Path:
    path = directory / f"Pulumi.fleet-{clusters}.yaml"
    path.write_text(json.dumps({"config": {"kuberay-platform:platform": fleet_spec(clusters)}}, indent=1))
    return path


BARE_PROGRAM = '''"""The fleet's resources registered with bare pulumi_kubernetes calls: one raw resource per
object of the platform's plan, with its type, inputs and parent, and nothing else."""

import json
from pathlib import Path

import pulumi

plan = json.loads((Path(__file__).parent / "plan.json").read_text())["resources"]
registered: dict[str, pulumi.Resource] = {}
for res in plan:
    parent = registered.get(res["parent"]) if res["parent"] else None
    opts = pulumi.ResourceOptions(parent=parent)
    if res["type"].startswith("kubernetes:"):
        registered[res["urn"]] = pulumi.CustomResource(res["type"], res["name"], dict(res["inputs"]), opts)
    else:
        registered[res["urn"]] = pulumi.ComponentResource(res["type"], res["name"], None, opts)
'''


def write_bare_program(plan: Path, directory: Path) -> Path:
    """A program registering the resources of ``plan`` (an offline preview's ``plan.json``) directly."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "__main__.py").write_text(BARE_PROGRAM)
    (directory / "plan.json").write_text(plan.read_text())
    return directory


if __name__ == "__main__":  # python -m tools.fleet N DIR: write the fleet's stack file
    print(write_fleet_stack(int(sys.argv[1]), Path(sys.argv[2])))
