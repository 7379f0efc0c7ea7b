"""How the e2e prepares a local cluster for a stack (``tools/e2e.py``, ``tools/kwok.py``,
``tools/kueue_local.py``), checked without starting it: these run in ``make test``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from cryptography import x509

from components.manifests.cluster import pool_selector
from components.manifests.kueue_install import kueue_configuration
from components.spec import parse_platform
from components.spec.kueue import KueueInstallSpec
from tests.conftest import REPO
from tools import kueue_local, kwok
from tools.e2e import e2e_document, kueue_install_spec, module_source, prerequisite_objects, uses_kueue

PLATFORM = "kuberay-platform:platform"


def committed(stack: str) -> dict:
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())


def spec_of(document: dict, name: str = "s"):
    return parse_platform(document["config"][PLATFORM], name)


def test_the_nodes_mirror_every_pool_of_prod() -> None:
    spec = spec_of(committed("prod"))
    nodes = kwok.nodes(spec.workloads.pools)
    by_pool: dict[str, list[dict]] = {}
    for node in nodes:
        assert node["metadata"]["annotations"] == {kwok.MANAGED: "fake"}
        by_pool.setdefault(node["metadata"]["labels"][kwok.POOL_LABEL], []).append(node)
    assert set(by_pool) == set(spec.workloads.pools)
    for name, pool in spec.workloads.pools.items():
        for node in by_pool[name]:
            # Every node carries what the pool's pods select, and taints for what they tolerate.
            assert pool_selector(pool).items() <= node["metadata"]["labels"].items()
            taints = {t["key"] for t in node["spec"].get("taints", [])}
            assert taints == {t.key for t in pool.tolerations}
    a100 = by_pool["a100"][0]["status"]["capacity"]
    assert a100["nvidia.com/gpu"] == "8" and "google.com/tpu" not in a100
    assert by_pool["a100"][0]["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"
    tpu = by_pool["v6e-16"]
    slices = {n["metadata"]["labels"][kwok.SLICE_LABEL] for n in tpu}
    assert len(slices) == kwok.TPU_SLICES and len(tpu) == kwok.TPU_SLICES * 4  # 4x4 chips, 4 per host
    assert {n["status"]["capacity"]["google.com/tpu"] for n in tpu} == {"4"}
    assert {n["metadata"]["labels"]["cloud.google.com/gke-tpu-topology"] for n in tpu} == {"4x4"}
    cpu = by_pool["cpu"][0]
    assert "taints" not in cpu["spec"] and "nvidia.com/gpu" not in cpu["status"]["capacity"]


def test_the_e2e_stack_waits_for_nothing_and_uses_kueue_as_installed() -> None:
    staging = committed("staging")
    assert staging["config"][PLATFORM]["kueue"]["install"] == {}
    doc = e2e_document(staging)
    platform = doc["config"][PLATFORM]
    assert platform["workloads"]["waitForReady"] is False
    assert "install" not in platform["kueue"] and platform["prerequisites"]["kueue"] is True
    assert staging["config"][PLATFORM]["kueue"]["install"] == {}  # the committed document is untouched
    spec = spec_of(doc)  # still a valid stack
    assert uses_kueue(spec) and not spec.workloads.wait_for_ready
    # The local Kueue gets the configuration the stack's chart would have had.
    assert kueue_install_spec(spec_of(staging)) == KueueInstallSpec()


def test_the_prerequisites_prod_declares_are_created_with_placeholders() -> None:
    spec = spec_of(committed("prod"))
    objects = prerequisite_objects(spec)
    names = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects}
    assert ("Secret", "ray-serving", "hf-token") in names
    assert ("PersistentVolumeClaim", "ray-training", "pretrain-checkpoints") in names
    namespaces = {n for kind, _, n in names if kind == "Namespace"}
    assert {"ray-serving", "ray-training", "monitoring", "cert-manager"} <= namespaces
    (hf,) = [o for o in objects if o["metadata"]["name"] == "hf-token"]
    assert set(hf["stringData"]) == {"HF_TOKEN"}


def test_the_local_kueue_configuration_keeps_the_charts_and_changes_only_the_process_parts(tmp_path: Path) -> None:
    install = KueueInstallSpec(frameworks=["ray.io/rayjob"], feature_gates={"TopologyAwareScheduling": False})
    ports = {"health": 1, "metrics": 2, "webhook": 3}
    config = kueue_local.configuration(install, tmp_path, ports)
    chart = kueue_configuration(install)
    assert config["integrations"] == chart["integrations"] == {"frameworks": ["ray.io/rayjob"]}
    assert config["controller"] == chart["controller"] and config["clientConnection"] == chart["clientConnection"]
    assert config["webhook"] == {"port": 3, "host": "127.0.0.1", "certDir": str(tmp_path)}
    assert config["leaderElection"] == {"leaderElect": False}
    assert config["internalCertManagement"] == {"enable": False}
    gates = kueue_local.feature_gates(install)
    assert gates == "TopologyAwareScheduling=false,VisibilityOnDemand=false"


def test_the_webhook_certificate_serves_loopback(tmp_path: Path) -> None:
    ca = x509.load_pem_x509_certificate(kueue_local.serving_certificate(tmp_path))
    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    assert cert.issuer == ca.subject
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.1" in {str(ip) for ip in sans.get_values_for_type(x509.IPAddress)}
    assert (tmp_path / "tls.key").stat().st_mode & 0o077 == 0


@pytest.fixture(scope="module")
def kueue_module() -> Path:
    if shutil.which("go") is None:
        pytest.skip("needs go (Kueue's module)")
    from tools import toolchain

    tool = next(t for t in toolchain.CONTROL_PLANE if t.name == "kueue")
    return module_source("sigs.k8s.io/kueue", tool.version, tool.module_dir)


def test_only_kueues_ray_and_core_webhooks_are_registered_at_its_local_address(kueue_module: Path) -> None:
    configs = kueue_local.webhook_configurations(kueue_module, 9443, b"CA")
    assert [c["kind"] for c in configs] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    hooks = {h["name"]: h for c in configs for h in c["webhooks"]}
    assert {"mrayjob.kb.io", "vraycluster.kb.io", "vrayservice.kb.io", "vclusterqueue.kb.io"} <= set(hooks)
    assert not {"mpod.kb.io", "vpod.kb.io", "mjob.kb.io", "mdeployment.kb.io"} & set(hooks)
    for hook in hooks.values():
        assert hook["clientConfig"]["url"].startswith("https://127.0.0.1:9443/")
        assert hook["clientConfig"]["caBundle"] == "Q0E="
    assert {c["metadata"]["name"] for c in configs} == set(kueue_local.WEBHOOK_NAMES.values())
    assert all(c["kind"] == "CustomResourceDefinition" for c in kueue_local.crds(kueue_module))
