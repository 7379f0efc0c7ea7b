"""Every pod template the platform writes passes the Pod Security Standards its namespace enforces,
judged by Kubernetes' own checks (k8s.io/pod-security-admission, built from the pinned module by
``make toolchain``), and the namespaces that run Ray enforce ``restricted`` unless something the
platform cannot harden runs there."""

from __future__ import annotations

import copy
import functools
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components.manifests.ray_objects import as_list, as_map, cluster_spec, dig, job_spec
from tests.conftest import REPO
from tools import toolchain
from tools.preview import PreviewResult, run_preview

STACKS = [
    ("dev", None),
    ("staging", None),
    ("prod", None),
    ("bare-cluster", REPO / "examples/Pulumi.bare-cluster.yaml"),
]


@functools.cache
def preview(stack: str, path: Path | None = None) -> PreviewResult:
    return run_preview(stack, stack_path=path)


@pytest.fixture(scope="module")
def podsecurity() -> Path:
    if shutil.which("go") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("go is not installed (the Pod Security checks are built from k8s.io/pod-security-admission)")
        pytest.skip("needs go (builds k8s.io/pod-security-admission's checks)")
    return toolchain.build(toolchain.PODSECURITY, toolchain.go_identity(), log=lambda _: None).path


def templates(manifests: list[dict[str, Any]]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(namespace, what, pod template) of every pod the platform's objects describe."""
    for obj in manifests:
        ns, name = obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
        found = cluster_spec(obj)
        if found is not None:
            _, spec = found
            yield ns, f"{obj['kind']}/{name} head", as_map(dig(spec, "headGroupSpec", "template"))
            for group in as_list(spec.get("workerGroupSpecs")):
                yield ns, f"{obj['kind']}/{name} {group['groupName']}", as_map(group.get("template"))
            job = job_spec(obj)
            if job is not None and job.get("submitterPodTemplate"):
                yield ns, f"{obj['kind']}/{name} submitter", as_map(job["submitterPodTemplate"])
        elif obj["kind"] in ("StatefulSet", "Deployment", "DaemonSet", "Job"):
            yield ns, f"{obj['kind']}/{name}", as_map(dig(obj, "spec", "template"))


def judge(binary: Path, cases: list[dict[str, Any]]) -> dict[str, list[str]]:
    done = subprocess.run(
        [str(binary)], input=json.dumps(cases), capture_output=True, text=True, timeout=120, check=True
    )
    return {v["name"]: v["reasons"] for v in json.loads(done.stdout) if not v["allowed"]}


@pytest.mark.parametrize(("stack", "path"), STACKS, ids=[s for s, _ in STACKS])
def test_every_pod_template_passes_its_namespaces_pod_security_level(
    podsecurity: Path, stack: str, path: Path | None
) -> None:
    result = preview(stack, path)
    levels = {
        m["metadata"]["name"]: (
            m["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
            m["metadata"]["labels"]["pod-security.kubernetes.io/enforce-version"],
        )
        for m in result.manifests
        if m["kind"] == "Namespace"
    }
    cases = []
    for ns, what, template in templates(result.manifests):
        _, version = levels[ns]
        # Every template is hardened: restricted, whatever its namespace enforces.
        cases.append({"name": what, "level": "restricted", "version": version, **copy.deepcopy(template)})
        cases[-1].setdefault("metadata", {})
    assert cases
    assert judge(podsecurity, cases) == {}


def test_ray_namespaces_enforce_restricted_unless_something_unhardened_runs_there() -> None:
    levels = {}
    for m in preview("prod", None).manifests:
        if m["kind"] == "Namespace":
            labels = m["metadata"]["labels"]
            levels[m["metadata"]["name"]] = labels["pod-security.kubernetes.io/enforce"]
            assert labels["pod-security.kubernetes.io/warn"] == "restricted"
    assert levels["ray-prod"] == levels["ray-training"] == levels["ray-research"] == "restricted"
    # qwen-chat upgrades through a Gateway whose Istio proxies (no seccomp profile) run in its namespace.
    assert levels["ray-serving"] == "baseline"


def test_nfs_exports_are_mounted_through_a_claim_restricted_allows(podsecurity: Path) -> None:
    manifests = preview("prod", None).manifests
    (pv,) = [m for m in manifests if m["kind"] == "PersistentVolume"]
    (pvc,) = [m for m in manifests if m["kind"] == "PersistentVolumeClaim"]
    assert pv["spec"]["nfs"] == {
        "server": "models-nfs.storage.svc.cluster.local",
        "path": "/exports/models",
        "readOnly": True,
    }
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and pv["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert pv["spec"]["claimRef"] == {"namespace": "ray-serving", "name": pvc["metadata"]["name"]}
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"] and pvc["spec"]["storageClassName"] == ""
    (service,) = [m for m in manifests if m["kind"] == "RayService"]
    head = service["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]
    assert {"name": "models", "persistentVolumeClaim": {"claimName": "qwen-chat-models", "readOnly": True}} in head[
        "volumes"
    ]
    # The inline form it replaces is what restricted refuses.
    inline = copy.deepcopy(head)
    inline["volumes"] = [{"name": "models", "nfs": pv["spec"]["nfs"]}]
    case = {"name": "inline", "level": "restricted", "version": "v1.33", "metadata": {}, "spec": inline}
    (reason,) = judge(podsecurity, [case])["inline"]
    assert reason.startswith("restricted volume types")


def test_the_checks_say_no_to_an_unhardened_template(podsecurity: Path) -> None:
    """Kubernetes' checks, not a test that cannot fail: without the securityContexts the platform
    writes, the same templates are refused with restricted's reasons."""
    cases = []
    for _, what, template in templates(preview("prod", None).manifests):
        bare = copy.deepcopy(template)
        bare["spec"].pop("securityContext", None)
        for container in bare["spec"]["containers"]:
            container.pop("securityContext", None)
        cases.append({"name": what, "level": "restricted", "version": "v1.33", "metadata": {}, "spec": bare["spec"]})
    refused = judge(podsecurity, cases)
    assert set(refused) == {c["name"] for c in cases}
    head = refused["RayCluster/prod-cpu head"]
    assert any(r.startswith("allowPrivilegeEscalation != false") for r in head)
    assert any(r.startswith("runAsNonRoot != true") for r in head)
    assert any(r.startswith("seccompProfile") for r in head)
    # Baseline allows it: nothing privileged was asked for.
    for case in cases:
        case["level"] = "baseline"
    assert judge(podsecurity, cases) == {}


def test_containers_kuberay_injects_inherit_a_restricted_context() -> None:
    """The autoscaler sidecar takes ``autoscalerOptions.securityContext``; KubeRay copies the Ray
    container's into the ``wait-gcs-ready`` init container it injects (common/pod.go)."""
    for obj in preview("prod", None).manifests:
        found = cluster_spec(obj)
        if found is None:
            continue
        _, spec = found
        ray = spec["headGroupSpec"]["template"]["spec"]["containers"][0]["securityContext"]
        assert ray == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        if spec.get("enableInTreeAutoscaling"):
            assert spec["autoscalerOptions"]["securityContext"] == ray
