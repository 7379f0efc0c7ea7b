"""Large fleets (issue 17): the generated fleet of ``make bench`` is a valid stack, and what each Ray
object waits for does not grow with the fleet (every object depending on every namespace's queues
and policies made dependencies, and the engine's work, grow with the square of the clusters)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tools.engine import RecordedResource, run_program
from tools.fleet import NAMESPACES, fleet_spec, write_bare_program, write_fleet_stack
from tools.preview import run_preview, write_outputs

RAY_CLUSTER = "kubernetes:ray.io/v1:RayCluster"


def _fleet(clusters: int) -> list[RecordedResource]:
    return run_program(REPO, f"fleet-{clusters}", {"kuberay-platform:platform": fleet_spec(clusters)})


@pytest.fixture(scope="module")
def fleets() -> dict[int, list[RecordedResource]]:
    return {n: _fleet(n) for n in (NAMESPACES, 4 * NAMESPACES)}


def test_each_cluster_has_three_worker_groups_a_queue_monitors_and_policies(
    fleets: dict[int, list[RecordedResource]],
) -> None:
    resources = fleets[4 * NAMESPACES]
    clusters = [r for r in resources if r.type == RAY_CLUSTER]
    assert len(clusters) == 4 * NAMESPACES
    assert {len(c.inputs["spec"]["workerGroupSpecs"]) for c in clusters} == {3}
    assert {c.inputs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] for c in clusters} == {"batch"}
    kinds = {r.type.rsplit(":", 1)[1] for r in resources}
    assert {"PodMonitor", "PrometheusRule", "NetworkPolicy", "LocalQueue", "ClusterQueue"} <= kinds


def test_what_a_ray_object_waits_for_does_not_grow_with_the_fleet(fleets: dict[int, list[RecordedResource]]) -> None:
    widest = {n: max(len(r.dependencies) for r in res if r.type == RAY_CLUSTER) for n, res in fleets.items()}
    assert widest[NAMESPACES] == widest[4 * NAMESPACES], widest
    # Its namespace's LocalQueue and none of the other namespaces'.
    resources = fleets[NAMESPACES]
    queues = {r.inputs["metadata"]["namespace"]: r.urn for r in resources if r.type.endswith(":LocalQueue")}
    for cluster in (r for r in resources if r.type == RAY_CLUSTER):
        namespace = cluster.inputs["metadata"]["namespace"]
        assert {u for u in queues.values() if u in cluster.dependencies} == {queues[namespace]}


def test_the_fleet_previews_clean_and_the_bare_program_registers_the_same_resources(tmp_path: Path) -> None:
    stack_file = write_fleet_stack(NAMESPACES, tmp_path)
    result = run_preview("fleet", stack_path=stack_file)
    assert not result.schema_errors and not result.mandatory, (result.schema_errors, result.mandatory)
    write_outputs(result, tmp_path / "out")
    bare = write_bare_program(tmp_path / "out" / "plan.json", tmp_path / "bare")
    registered = run_program(bare, "fleet", {})
    ours = json.loads((tmp_path / "out" / "plan.json").read_text())["resources"]
    assert [(r.type, r.name) for r in registered] == [(r["type"], r["name"]) for r in ours]
