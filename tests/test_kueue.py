"""Kueue: flavors from the pools, ClusterQueues with quotas, cohorts and preemption, LocalQueues,
priorities, and the references between them and the workloads."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.conftest import REPO
from tests.test_workloads import POOLS, PREREQUISITES, job
from tools.engine import RecordedResource, run_program
from tools.schema import Validator

TEAMS = {
    "clusterQueues": [
        {
            "name": "team-a",
            "cohort": "research",
            "namespaces": ["team-a"],
            "quotas": {
                "cpu": {"cpu": "32", "memory": "128Gi"},
                "a100": {
                    "cpu": "64",
                    "memory": "512Gi",
                    "gpu": {"nominal": 16, "borrowingLimit": 8, "lendingLimit": 4},
                },
            },
            "preemption": {
                "reclaimWithinCohort": "Any",
                "withinClusterQueue": "LowerPriority",
                "borrowWithinCohort": "LowerPriority",
            },
            "fairSharingWeight": 2,
        },
        {
            "name": "team-b",
            "cohort": "research",
            "queueingStrategy": "StrictFIFO",
            "quotas": {"cpu": {"cpu": "16", "memory": "64Gi"}, "v6e": {"cpu": "96", "memory": "512Gi", "tpu": 16}},
        },
    ],
    "localQueues": [
        {"namespace": "team-a", "name": "default", "clusterQueue": "team-a"},
        {"namespace": "team-b", "name": "default", "clusterQueue": "team-b"},
    ],
    "priorityClasses": [{"name": "high", "value": 1000, "description": "production training"}],
}


def platform(
    kueue: dict[str, Any] | None = None, prerequisites: dict[str, Any] | None = None, **workloads: Any
) -> dict[str, Any]:
    return {
        "environment": "prod",
        "prerequisites": {**PREREQUISITES, "kueue": True} if prerequisites is None else prerequisites,
        "kueue": copy.deepcopy(TEAMS) if kueue is None else kueue,
        "workloads": {"pools": POOLS, **workloads},
    }


def objects(data: dict[str, Any]) -> list[dict[str, Any]]:
    return build_manifests(parse_platform(data, "s.yaml"), "s.yaml").kueue


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def by_kind(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def test_every_object_passes_the_kueue_crds_and_their_cel_rules() -> None:
    validator = Validator("1.33")
    objs = objects(platform())
    assert {o["kind"] for o in objs} == {"ResourceFlavor", "WorkloadPriorityClass", "ClusterQueue", "LocalQueue"}
    assert all(o["apiVersion"] == "kueue.x-k8s.io/v1beta2" for o in objs)
    assert [e for o in objs for e in validator.validate(o)] == []


def test_the_crds_cel_rules_are_evaluated_on_these_objects() -> None:
    """The spec refuses these combinations first; the CRDs' own rules would refuse them too."""
    validator = Validator("1.33")
    cq = by_kind(objects(platform()), "ClusterQueue")["team-a"]
    no_cohort = copy.deepcopy(cq)
    del no_cohort["spec"]["cohortName"]
    assert any("borrowingLimit must be nil when cohort is empty" in e.message for e in validator.validate(no_cohort))
    never = copy.deepcopy(cq)
    never["spec"]["preemption"]["reclaimWithinCohort"] = "Never"
    assert any("reclaimWithinCohort=Never and borrowWithinCohort" in e.message for e in validator.validate(never))


def test_flavors_carry_the_pools_node_labels_and_tolerations() -> None:
    flavors = by_kind(objects(platform()), "ResourceFlavor")
    assert list(flavors) == ["a100", "cpu", "v6e"]  # each once
    assert flavors["cpu"]["spec"] == {}
    assert flavors["a100"]["spec"]["nodeLabels"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    assert flavors["a100"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert flavors["v6e"]["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }


def test_one_resource_group_covers_every_resource_and_each_flavor_lists_them_all() -> None:
    cq = by_kind(objects(platform()), "ClusterQueue")["team-a"]
    (group,) = cq["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    cpu, a100 = group["flavors"]
    assert (cpu["name"], a100["name"]) == ("cpu", "a100")  # a CPU-only head tries the CPU flavor first
    assert cpu["resources"][2] == {"name": "nvidia.com/gpu", "nominalQuota": "0"}
    assert a100["resources"][2] == {
        "name": "nvidia.com/gpu",
        "nominalQuota": "16",
        "borrowingLimit": "8",
        "lendingLimit": "4",
    }
    assert cq["spec"]["cohortName"] == "research" and cq["spec"]["fairSharing"] == {"weight": "2"}
    assert cq["spec"]["preemption"] == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }
    assert cq["spec"]["namespaceSelector"]["matchExpressions"][0]["values"] == ["team-a"]
    team_b = by_kind(objects(platform()), "ClusterQueue")["team-b"]
    assert team_b["spec"]["namespaceSelector"] == {}  # any namespace
    assert team_b["spec"]["resourceGroups"][0]["coveredResources"] == ["cpu", "memory", "google.com/tpu"]


def test_flavors_are_tried_cpu_first_whatever_the_order_of_the_quotas() -> None:
    """The Pulumi CLI hands the program its config with mapping keys sorted (Go's JSON), so the order
    of ``quotas`` in the stack file cannot carry meaning: the real engine would see a100 before cpu."""
    data = platform()
    quotas = data["kueue"]["clusterQueues"][0]["quotas"]
    data["kueue"]["clusterQueues"][0]["quotas"] = dict(sorted(quotas.items()))  # as the real engine sees it
    (group,) = by_kind(objects(data), "ClusterQueue")["team-a"]["spec"]["resourceGroups"]
    assert [f["name"] for f in group["flavors"]] == ["cpu", "a100"]
    (group,) = by_kind(objects(data), "ClusterQueue")["team-b"]["spec"]["resourceGroups"]
    assert [f["name"] for f in group["flavors"]] == ["cpu", "v6e"]
    data["kueue"]["clusterQueues"][0]["flavorOrder"] = ["a100", "cpu"]
    (group,) = by_kind(objects(data), "ClusterQueue")["team-a"]["spec"]["resourceGroups"]
    assert [f["name"] for f in group["flavors"]] == ["a100", "cpu"]
    data["kueue"]["clusterQueues"][0]["flavorOrder"] = ["a100"]
    assert any("flavorOrder: list each pool of quotas exactly once" in x for x in errors(data))


def test_combinations_kueue_refuses_are_config_errors() -> None:
    data = platform()
    del data["kueue"]["clusterQueues"][0]["cohort"]
    lines = errors(data)
    assert any("quotas.a100: borrowingLimit needs a cohort" in x for x in lines), lines
    data = platform()
    data["kueue"]["clusterQueues"][0]["preemption"]["reclaimWithinCohort"] = "Never"
    lines = errors(data)
    assert any("borrowWithinCohort: Kueue refuses it with reclaimWithinCohort: Never" in x for x in lines), lines


def test_references_between_queues_pools_and_jobs_are_checked() -> None:
    data = platform()
    data["kueue"]["clusterQueues"][1]["quotas"]["h100"] = {"gpu": 8}
    data["kueue"]["localQueues"].append({"namespace": "team-c", "name": "default", "clusterQueue": "team-c"})
    data["kueue"]["localQueues"].append({"namespace": "team-b", "name": "extra", "clusterQueue": "team-a"})
    lines = errors(data)
    assert any("kueue.clusterQueues[1].quotas.h100: unknown pool 'h100'" in x for x in lines)
    assert any("kueue.localQueues[2].clusterQueue: unknown ClusterQueue 'team-c'" in x for x in lines)
    assert any(
        "kueue.localQueues[3].namespace: ClusterQueue 'team-a' admits only namespaces ['team-a']" in x for x in lines
    )


def test_a_job_names_a_local_queue_of_its_namespace_and_a_known_priority() -> None:
    queued = job(namespace="team-a", queue="default", priorityClass="high")
    assert objects(platform(rayJobs=[queued]))
    lines = errors(platform(rayJobs=[job(namespace="team-a", queue="nope")]))
    assert any("rayJobs[0].queue: LocalQueue team-a/nope is neither created by the stack" in x for x in lines)
    existing = platform(rayJobs=[job(namespace="team-a", queue="ops")])
    existing["prerequisites"]["localQueues"] = [{"namespace": "team-a", "name": "ops"}]
    assert build_manifests(parse_platform(existing, "s.yaml"), "s.yaml")
    lines = errors(platform(rayJobs=[job(namespace="team-a", queue="default", priorityClass="urgent")]))
    assert any("rayJobs[0].priorityClass: unknown WorkloadPriorityClass 'urgent'" in x for x in lines)
    lines = errors(platform(rayJobs=[job(namespace="team-a", priorityClass="high")]))
    assert any("rayJobs[0].priorityClass: applies to a Kueue-queued workload" in x for x in lines)


def test_the_job_carries_the_queue_and_priority_labels() -> None:
    spec = parse_platform(platform(rayJobs=[job(namespace="team-a", queue="default", priorityClass="high")]), "s.yaml")
    (obj,) = build_manifests(spec, "s.yaml").workloads
    labels = obj["metadata"]["labels"]
    assert (labels["kueue.x-k8s.io/queue-name"], labels["kueue.x-k8s.io/priority-class"]) == ("default", "high")


def test_kueue_must_be_declared_installed() -> None:
    (line,) = errors(platform(prerequisites=PREREQUISITES))
    assert line == (
        "s.yaml: platform.prerequisites.kueue: Kueue queues or queued workloads need Kueue v0.19: set kueue.install: "
        "{} to install it with the stack, or install it with the Ray integrations (ray.io/rayjob, ray.io/raycluster, "
        "ray.io/rayservice) and set platform.prerequisites.kueue: true"
    )


def test_queues_are_created_in_the_order_kueue_resolves_them_and_before_the_jobs() -> None:
    data = platform(rayJobs=[job(namespace="team-a", queue="default")])
    resources: list[RecordedResource] = run_program(REPO, "test", {"kuberay-platform:platform": data})
    by_type = {r.type.rsplit(":", 1)[1]: r for r in resources if r.type.startswith("kubernetes:kueue")}
    flavor, cq = by_type["ResourceFlavor"], by_type["ClusterQueue"]
    queues = {r.inputs["metadata"]["namespace"]: r for r in resources if r.type.endswith(":LocalQueue")}
    lq = queues["team-a"]
    assert flavor.urn in cq.dependencies and cq.urn in lq.dependencies
    (ray_job,) = [r for r in resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    assert lq.urn in ray_job.dependencies and cq.urn in ray_job.dependencies
    assert queues["team-b"].urn not in ray_job.dependencies  # another namespace's queue: no reason to wait
    assert [
        r for r in resources if r.type == "kubernetes:core/v1:Namespace" and r.inputs["metadata"]["name"] == "team-b"
    ]


def test_the_staging_stack_queues_its_training_job_as_an_elastic_workload() -> None:
    from tools.preview import render_summary, run_preview

    result = run_preview("staging")
    assert result.exit_code == 0
    kinds = {(m["kind"], m["metadata"]["name"]) for m in result.manifests}
    assert {("ClusterQueue", "research"), ("LocalQueue", "research"), ("ResourceFlavor", "l4")} <= kinds
    (rayjob,) = [m for m in result.manifests if m["kind"] == "RayJob"]
    assert rayjob["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research"
    assert rayjob["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] == "true"
    assert rayjob["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] is True
    assert rayjob["spec"]["shutdownAfterJobFinishes"] is True
    # The quota table: the L4 flavor's 8 GPUs against the job's largest size (4 workers of 1 GPU).
    summary = render_summary(result)
    assert "| research | l4 | nvidia.com/gpu | 8 | 0 | 4 | 4 |" in summary, summary


def test_the_prod_stack_has_per_team_queues_that_borrow_in_one_cohort() -> None:
    from tools.preview import render_summary, run_preview

    result = run_preview("prod")
    assert result.exit_code == 0
    queues = by_kind(result.manifests, "ClusterQueue")
    assert {q["spec"]["cohortName"] for q in queues.values()} == {"prod-batch"} and set(queues) == {
        "training",
        "research",
    }
    # research's sweep needs 12 A100 GPUs at its largest: 4 of its own and 8 borrowed from training.
    summary = render_summary(result)
    assert "| research | a100 | nvidia.com/gpu | 4 | 8 | 12 | 12 |" in summary, summary
    assert "| training | v6e-16 | google.com/tpu | 16 | 0 | 16 | 16 |" in summary


# --- queued workloads of every kind ------------------------------------------------------------


def cluster(**overrides: Any) -> dict[str, Any]:
    return {
        "name": "shared",
        "namespace": "team-a",
        "workerGroups": [{"name": "gpu", "pool": "a100", "minReplicas": 0, "maxReplicas": 2}],
        **overrides,
    }


def test_clusters_and_services_are_queued_with_the_same_labels_and_elastic_annotation() -> None:
    from tests.test_workloads import llm_service

    svc = llm_service(namespace="team-a", queue="default", priorityClass="high", elastic=True, gcsFaultTolerance=None)
    data = platform(rayClusters=[cluster(queue="default", elastic=True)], rayServices=[svc])
    data["prerequisites"] = {**PREREQUISITES, "kueue": True}
    for obj in build_manifests(parse_platform(data, "s.yaml"), "s.yaml").workloads:
        assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default", obj["kind"]
        assert obj["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] == "true", obj["kind"]
    scheduled = job(
        namespace="team-a", queue="default", schedule="0 3 * * *", elastic=True, autoscaler={"enabled": True}
    )
    (cron,) = build_manifests(parse_platform(platform(rayJobs=[scheduled]), "s.yaml"), "s.yaml").workloads
    assert cron["kind"] == "RayCronJob" and "annotations" not in cron["metadata"]
    assert cron["spec"]["jobTemplate"]["metadata"] == {
        "labels": {"kueue.x-k8s.io/queue-name": "default"},
        "annotations": {"kueue.x-k8s.io/elastic-job": "true"},
    }


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        (cluster(elastic=True), "elastic: applies to a Kueue-queued workload; set queue too"),
        (
            cluster(queue="default"),
            "elastic: Kueue refuses in-tree autoscaling on a queued workload unless it is elastic",
        ),
        (
            cluster(queue="default", elastic=True, autoscaler={"enabled": False}),
            "elastic: workload slices follow the Ray autoscaler",
        ),
        (
            cluster(
                queue="default",
                elastic=True,
                workerGroups=[{"name": f"g{i}", "maxReplicas": 1} for i in range(18)],
            ),
            "workerGroups: Kueue admits at most 17 worker groups (plus the head) on a queued workload (got 18)",
        ),
        (
            cluster(queue="default", elastic=True, workerGroups=[{"name": "head", "maxReplicas": 1}]),
            'Kueue reserves the name "head"',
        ),
    ],
)
def test_what_kueues_ray_webhooks_reject_is_a_config_error(workload: dict[str, Any], message: str) -> None:
    lines = errors(platform(rayClusters=[workload]))
    assert any(message in line for line in lines), lines


# --- quota fit ---------------------------------------------------------------------------------


def a100_job(replicas: int, **overrides: Any) -> dict[str, Any]:
    group = {"name": "gpu", "pool": "a100", "maxReplicas": replicas, "resources": {"cpu": "8", "memory": "32Gi"}}
    return job(namespace="team-a", queue="default", workerGroups=[group], **overrides)


def test_a_workload_larger_than_its_queue_can_ever_hold_is_refused_naming_the_resource() -> None:
    # team-a's A100 flavor: 16 GPUs nominal; its cohort lends it none (team-b has no A100 quota).
    assert objects(platform(rayJobs=[a100_job(4)]))  # 4 pods x 4 GPUs = 16: fits
    (line,) = errors(platform(rayJobs=[a100_job(5)]))
    assert line == (
        "s.yaml: platform.workloads.rayJobs[0].queue: Kueue would never admit it: worker group gpu (5 pods) asks "
        "nvidia.com/gpu 20 but flavor a100 of ClusterQueue team-a has 16 left of 16 nominal + 0 borrowable"
    )


def test_borrowing_from_the_cohort_counts_up_to_the_borrowing_limit() -> None:
    data = platform(rayJobs=[a100_job(6)])  # 24 GPUs
    data["kueue"]["clusterQueues"][1]["quotas"]["a100"] = {"gpu": 16}  # team-b lends 16 ...
    assert objects(data)  # ... of which team-a may borrow 8: 16 + 8 = 24
    data = platform(rayJobs=[a100_job(7)])
    data["kueue"]["clusterQueues"][1]["quotas"]["a100"] = {"gpu": 16}
    (line,) = errors(data)
    assert (
        "asks nvidia.com/gpu 28 but flavor a100 of ClusterQueue team-a has 24 left of 16 nominal + 8 borrowable" in line
    )
    data = platform(rayJobs=[a100_job(6)])
    data["kueue"]["clusterQueues"][1]["quotas"]["a100"] = {"gpu": {"nominal": 16, "lendingLimit": 4}}
    (line,) = errors(data)  # team-b lends only 4
    assert "has 20 left of 16 nominal + 4 borrowable" in line


def test_an_elastic_workload_must_fit_at_its_largest_and_a_fixed_one_at_its_size() -> None:
    elastic = a100_job(5, elastic=True, autoscaler={"enabled": True})
    elastic["workerGroups"][0]["minReplicas"] = 1
    (line,) = errors(platform(rayJobs=[elastic]))  # starts at 1 pod, grows to 5: 20 GPUs
    assert "worker group gpu (5 pods) asks nvidia.com/gpu 20" in line
    fixed = cluster(queue="default", autoscaler={"enabled": False})
    fixed["workerGroups"][0].update(minReplicas=2, replicas=2, maxReplicas=10)
    assert objects(platform(rayClusters=[fixed]))  # Kueue admits replicas (8 GPUs), not maxReplicas


def test_a_resource_the_queue_has_no_quota_for_and_multi_host_slices_are_named() -> None:
    team_b = job(namespace="team-b", queue="default", workerGroups=[{"name": "gpu", "pool": "a100", "maxReplicas": 1}])
    (line,) = errors(platform(rayJobs=[team_b]))
    assert "ClusterQueue team-b has no quota for nvidia.com/gpu, which worker group gpu (1 pod) asks for" in line
    slices = job(namespace="team-b", queue="default", workerGroups=[{"name": "tpu", "pool": "v6e", "maxReplicas": 2}])
    (line,) = errors(platform(rayJobs=[slices]))  # 2 slices x 4 hosts x 4 chips
    assert "worker group tpu (8 pods) asks google.com/tpu 32 but flavor v6e of ClusterQueue team-b has 16 left" in line


def test_kueues_pod_sets_count_the_autoscaler_and_the_submitter() -> None:
    from components.manifests.quota_fit import pod_sets

    def sets(spec: dict[str, Any]) -> dict[str, tuple[int, dict[str, float]]]:
        (obj,) = build_manifests(parse_platform(platform(rayJobs=[spec]), "s.yaml"), "s.yaml").workloads
        return {p.name: (p.count, p.requests) for p in pod_sets(obj)}

    plain = sets(a100_job(2))
    assert plain["head"] == (1, {"cpu": 2.0, "memory": 8 * 2**30})
    assert plain["submitter"] == (1, {"cpu": 0.5, "memory": 200 * 2**20})
    assert plain["gpu"] == (2, {"cpu": 8.0, "memory": 32 * 2**30, "nvidia.com/gpu": 4.0})
    sidecar = sets(a100_job(2, submissionMode="SidecarMode", elastic=True, autoscaler={"enabled": True}))
    assert "submitter" not in sidecar  # the submitter runs in the head pod: 2 + 0.5 (autoscaler) + 0.5
    assert sidecar["head"][1]["cpu"] == 3.0


# --- MultiKueue --------------------------------------------------------------------------------

EXAMPLE = REPO / "examples" / "Pulumi.multikueue.yaml"


def multikueue(**workloads: Any) -> dict[str, Any]:
    data = platform(**workloads)
    data["kueue"]["multiKueue"] = {
        "clusters": [{"name": "worker-a", "kubeconfigSecret": "worker-a"}],
        "clusterQueues": ["team-a"],
    }
    data["prerequisites"]["secrets"] = [{"namespace": "kueue-system", "name": "worker-a", "keys": ["kubeconfig"]}]
    return data


def test_the_multikueue_example_previews_clean_and_dispatches_its_job() -> None:
    from tools.preview import render_summary, run_preview

    result = run_preview("multikueue", stack_path=EXAMPLE)
    assert result.exit_code == 0 and not result.schema_errors
    objs = result.manifests
    check = by_kind(objs, "AdmissionCheck")["multikueue"]
    assert check["spec"] == {
        "controllerName": "kueue.x-k8s.io/multikueue",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "multikueue"},
    }
    assert by_kind(objs, "MultiKueueConfig")["multikueue"]["spec"] == {"clusters": ["worker-us-east", "worker-eu-west"]}
    assert by_kind(objs, "MultiKueueCluster")["worker-us-east"]["spec"] == {
        "clusterSource": {"kubeConfig": {"locationType": "Secret", "location": "worker-us-east-kubeconfig"}}
    }
    cq = by_kind(objs, "ClusterQueue")["gpu-batch"]
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "multikueue"}]}
    (rayjob,) = [o for o in objs if o["kind"] == "RayJob"]
    assert rayjob["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    # The local operator skips it: nothing here would ever report its status.
    assert "pulumi.com/waitFor" not in rayjob["metadata"].get("annotations", {})
    assert "| MultiKueue worker cluster | `worker-us-east` |" in render_summary(result)


def test_multikueue_objects_are_created_in_the_order_kueue_resolves_them() -> None:
    data = multikueue(rayJobs=[job(namespace="team-a", queue="default")])
    resources = run_program(REPO, "test", {"kuberay-platform:platform": data})
    kueue = {r.type.rsplit(":", 1)[1]: r for r in resources if r.type.startswith("kubernetes:kueue")}
    chain = ["MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "ClusterQueue", "LocalQueue"]
    for earlier, later in itertools.pairwise(chain):
        assert kueue[earlier].urn in kueue[later].dependencies, (earlier, later)
    (ray_job,) = [r for r in resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    assert ray_job.inputs["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    # Queues that are not dispatched keep their workloads local.
    data = multikueue(
        rayJobs=[job(namespace="team-b", queue="default", workerGroups=[{"name": "cpu", "maxReplicas": 1}])]
    )
    (obj,) = build_manifests(parse_platform(data, "s.yaml"), "s.yaml").workloads
    assert "managedBy" not in obj["spec"]
    assert "admissionChecksStrategy" not in by_kind(objects(data), "ClusterQueue")["team-b"]["spec"]


def test_multikueue_mistakes_are_config_errors() -> None:
    data = multikueue()
    data["kueue"]["multiKueue"]["clusterQueues"] = ["team-z"]
    assert any("kueue.multiKueue.clusterQueues[0]: unknown ClusterQueue 'team-z'" in x for x in errors(data))
    data = multikueue()
    data["prerequisites"]["secrets"] = []
    assert any(
        "kueue.multiKueue.clusters[0].kubeconfigSecret: Secret kueue-system/worker-a is neither created" in x
        for x in errors(data)
    )
    data = multikueue(rayClusters=[cluster(queue="default", elastic=True)])
    assert any(
        "rayClusters[0].elastic: Kueue refuses in-tree autoscaling on an elastic RayCluster that MultiKueue" in x
        for x in errors(data)
    )
    data = multikueue()
    del data["prerequisites"]["kueue"]
    data["kueue"]["install"] = {"featureGates": {"MultiKueue": False}}
    assert any("kueue.multiKueue: needs Kueue's MultiKueue gate" in x for x in errors(data))


def test_a_queued_cluster_is_awaited_until_running_or_held_by_kueue() -> None:
    (obj,) = build_manifests(
        parse_platform(platform(rayClusters=[cluster(queue="default", elastic=True)]), "s.yaml"), "s.yaml"
    ).workloads
    assert obj["metadata"]["annotations"]["pulumi.com/waitFor"] == "jsonpath={.status.state}"
    (obj,) = build_manifests(parse_platform(platform(rayClusters=[cluster()]), "s.yaml"), "s.yaml").workloads
    assert obj["metadata"]["annotations"]["pulumi.com/waitFor"] == "condition=HeadPodReady"
