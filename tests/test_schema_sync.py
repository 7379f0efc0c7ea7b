"""``make schemas``: the project's own pinned schemas, verified against their pins and upstream."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from components.errors import ConfigError
from components.spec import OperatorSpec
from components.spec.base import KUBERAY_VERSION
from tests.conftest import REPO, UPSTREAM_CRDS, needs_shared
from tools.schema_store import SCHEMAS_DIR, SchemaStore, strip_descriptions, yaml_load_all
from tools.schema_sync import differences, fetch, generate, read_pins, sync

INDEX = json.loads((SCHEMAS_DIR / "index.json").read_text())
UPSTREAMS, PINS = read_pins()


def test_every_schema_file_matches_the_sha256_recorded_when_it_was_generated() -> None:
    generated = sorted(p.relative_to(SCHEMAS_DIR).as_posix() for p in SCHEMAS_DIR.glob("*/*.json"))
    assert generated == sorted(INDEX["sha256"])
    for rel, digest in INDEX["sha256"].items():
        assert hashlib.sha256((SCHEMAS_DIR / rel).read_bytes()).hexdigest() == digest, f"{rel} was edited by hand"


def test_every_schema_file_comes_from_its_current_pin() -> None:
    """A pin changed without `make schemas` (or a file from an old pin) fails here."""
    pins = {(p.url, p.sha256, p.version, p.license) for p in PINS}
    for rel in INDEX["sha256"]:
        source = json.loads((SCHEMAS_DIR / rel).read_text())["source"]
        assert (source["url"], source["sha256"], source["version"], source["license"]) in pins, rel
    assert {u["name"]: u["version"] for u in INDEX["upstreams"]} == {u["name"]: u["version"] for u in UPSTREAMS}


def test_every_pin_is_a_release_tag_url_with_a_license() -> None:
    for up in UPSTREAMS:
        owner_repo = up["repository"].removeprefix("https://github.com/")
        for pin in (p for p in PINS if p.upstream == up["name"]):
            assert pin.url.startswith(f"https://raw.githubusercontent.com/{owner_repo}/{up['tag']}/"), pin.url
            assert len(pin.sha256) == 64 and pin.license == "Apache-2.0"


def test_the_pinned_versions_in_the_spec_agree_with_the_schemas() -> None:
    """The chart and image the program deploys are the release the schemas come from."""
    kuberay = next(u for u in UPSTREAMS if u["name"] == "kuberay")
    operator = OperatorSpec()
    assert kuberay["version"] == KUBERAY_VERSION
    assert operator.chart_version == kuberay["version"]
    assert operator.image.tag == kuberay["tag"]
    charts = {name: json.loads((SCHEMAS_DIR / rel).read_text())["version"] for name, rel in INDEX["charts"].items()}
    assert charts["kuberay-operator"] == operator.chart_version


def test_the_expected_upstream_releases_are_pinned() -> None:
    assert {u["name"]: u["version"] for u in UPSTREAMS} == {
        "kuberay": "1.7.0",
        "kueue": "v0.19.2",
        "prometheus-operator": "v0.93.0",
        "cert-manager": "v1.21.1",
        "kube-prometheus-stack": "88.6.1",
        "gateway-api": "v1.6.1",
        "pulumi-kubernetes-operator": "2.9.0",
        "ray": "2.60.0",
    }
    store = SchemaStore()
    for group, kind in [
        ("ray.io", "RayCluster"),
        ("ray.io", "RayJob"),
        ("ray.io", "RayService"),
        ("ray.io", "RayCronJob"),
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("monitoring.coreos.com", "PodMonitor"),
        ("cert-manager.io", "ClusterIssuer"),
        ("gateway.networking.k8s.io", "HTTPRoute"),
        ("pulumi.com", "Stack"),
    ]:
        assert store.crd(group, kind) is not None, (group, kind)
    assert sorted(INDEX["charts"]) == [
        "cert-manager",
        "kube-prometheus-stack",
        "kuberay-operator",
        "kueue",
        "pulumi-kubernetes-operator",
    ]
    assert INDEX["models"] == {"llm-config": "ray/llm-config.json", "serve-deploy": "ray/serve-deploy.json"}


def test_the_prometheus_stack_chart_the_spec_installs_is_the_pinned_one() -> None:
    from components.spec.monitoring import PrometheusStackInstall

    charts = {name: json.loads((SCHEMAS_DIR / rel).read_text())["version"] for name, rel in INDEX["charts"].items()}
    assert PrometheusStackInstall().chart_version == charts["kube-prometheus-stack"] == "88.6.1"


def test_a_pin_missing_from_the_mirror_comes_from_its_go_module(tmp_path: Path) -> None:
    """kube-prometheus-stack's values are not in the workplace mirror: `make schemas` reads the same
    bytes from the chart repository's commit on the Go module proxy and checks their sha256."""
    if shutil.which("go") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("go is not installed (the Go toolchain `make toolchain` builds with)")
        pytest.skip("needs go (the Go module proxy)")
    (pin,) = [p for p in PINS if p.gomodule]
    assert fetch(pin, tmp_path).startswith(b"# Default values for kube-prometheus-stack.")
    wrong = dataclasses.replace(pin, gopath="charts/kube-prometheus-stack/Chart.yaml")
    with pytest.raises(ConfigError, match="does not match the pin"):
        fetch(wrong, tmp_path)
    missing = dataclasses.replace(pin, gopath="charts/no-such-chart/values.yaml")
    with pytest.raises(ConfigError, match="no such file in the module"):
        fetch(missing, tmp_path)


def test_the_ray_version_the_workloads_run_is_the_one_the_serve_schemas_come_from() -> None:
    from components.spec.base import RAY_VERSION

    ray = next(u for u in UPSTREAMS if u["name"] == "ray")
    assert ray["version"] == RAY_VERSION


def test_descriptions_are_dropped_but_a_property_named_description_is_kept() -> None:
    crd = SchemaStore().crd("kueue.x-k8s.io", "WorkloadPriorityClass")
    assert crd is not None
    schema = crd.versions["v1beta2"]["schema"]
    assert "description" in schema["properties"]  # WorkloadPriorityClass.description, a real field
    assert "description" not in schema["properties"]["description"]
    node = {
        "description": "x",
        "properties": {"description": {"type": "string", "description": "y"}},
        "default": {"description": "data"},
        "items": {"description": "z", "type": "integer"},
        "anyOf": [{"description": "w"}],
    }
    assert strip_descriptions(node) == {
        "properties": {"description": {"type": "string"}},
        "default": {"description": "data"},
        "items": {"type": "integer"},
        "anyOf": [{}],
    }


# --- Against the upstream files (the workplace's mirror, or downloads) -------------------------


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    needs_shared(UPSTREAM_CRDS)
    return generate(UPSTREAMS, PINS, UPSTREAM_CRDS)


def test_the_schemas_are_exactly_what_the_pinned_upstream_files_give(generated: dict[str, str]) -> None:
    assert differences(SCHEMAS_DIR, generated) == []


def test_generation_is_deterministic_and_keeps_every_cel_rule(upstream_crds: Path, generated: dict[str, str]) -> None:
    first = generated
    assert generate(UPSTREAMS, PINS, upstream_crds) == first
    upstream_rules = sum(
        json.dumps(v["schema"]).count('"rule":')
        for pin in PINS
        if pin.kind == "crd"
        for doc in yaml_load_all((upstream_crds / pin.local).read_text())
        if isinstance(doc, dict)
        for v in doc["spec"]["versions"]
        if v.get("served")
    )
    ours = sum(text.count('"rule":') for rel, text in first.items() if rel.startswith("crds/"))
    assert ours == upstream_rules > 100


def test_a_mirror_file_that_differs_from_its_pin_is_refused(upstream_crds: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    shutil.copytree(upstream_crds, mirror)
    target = mirror / "kuberay" / "ray.io_rayjobs.yaml"
    target.chmod(0o644)
    target.write_text(target.read_text().replace("rayjobs", "rayjobz", 1))
    with pytest.raises(ConfigError) as err:
        generate(UPSTREAMS, PINS, mirror)
    (line,) = err.value.lines
    assert line.startswith(f"{target}: sha256 ") and "does not match the pin 01a5cf3b" in line


def test_a_stale_or_edited_schema_folder_is_reported(
    upstream_crds: Path, generated: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "schemas"
    shutil.copytree(SCHEMAS_DIR, folder)
    (folder / "crds" / "ray.io_rayjobs.json").write_text("{}\n")
    (folder / "crds" / "extra.json").write_text("{}\n")
    files = generated
    assert differences(folder, files) == [
        f"{folder}/crds/ray.io_rayjobs.json: differs from what its pin generates",
        f"{folder}/crds/extra.json: not generated from any pin (remove it)",
    ]
    assert sync(folder, upstream_crds) == [] and differences(folder, files) == []
    assert not (folder / "crds" / "extra.json").exists()


@pytest.fixture()
def upstream_server(upstream_crds: Path) -> Iterator[str]:
    """The mirror served over HTTP on loopback, standing in for raw.githubusercontent.com."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(upstream_crds))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_without_a_mirror_the_pinned_urls_are_downloaded(upstream_server: str, tmp_path: Path) -> None:
    folder = tmp_path / "schemas"
    folder.mkdir()
    pins = yaml.safe_load((SCHEMAS_DIR / "pins.yaml").read_text())
    for up in pins["upstreams"]:
        for f in up["files"]:
            f["url"] = f"{upstream_server}/{f['local']}"
    (folder / "pins.yaml").write_text(yaml.safe_dump(pins))
    assert sync(folder) == []
    for rel in INDEX["crds"].values():
        ours = json.loads((SCHEMAS_DIR / rel).read_text())
        downloaded = json.loads((folder / rel).read_text())
        assert downloaded["versions"] == ours["versions"], rel


def test_make_schemas_is_wired_to_the_sync_tool() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert "python -m tools schemas" in makefile


def test_an_unreachable_pin_is_a_config_error_naming_the_url(upstream_server: str) -> None:
    from tools.schema_sync import Pin, fetch

    pin = next(p for p in PINS if p.kind == "crd")
    missing = Pin(**{**pin.__dict__, "url": f"{upstream_server}/no/such/file.yaml"})
    with pytest.raises(ConfigError) as err:
        fetch(missing, None)
    (line,) = err.value.lines
    assert line.startswith(f"{upstream_server}/no/such/file.yaml: cannot download (HTTP Error 404")
