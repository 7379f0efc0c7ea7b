"""The pinned toolchain: what the tools modules pin, and the keyed cache that makes a second
``make toolchain`` with nothing changed a no-op."""

from __future__ import annotations

import json
import re
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest

from tools import toolchain
from tools.toolchain import KUBERNETES, PULUMI, TOOLCHAIN_DIR

GO = "go1.26.8 linux amd64"


def required(module_dir: Path, module: str) -> str:
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(module)} (\S+)", (module_dir / "go.mod").read_text(), re.M)
    assert match, f"{module} is not required in {module_dir}/go.mod"
    return match.group(1)


def test_the_cli_module_pins_the_stamped_release_and_is_at_least_the_python_sdk() -> None:
    assert required(TOOLCHAIN_DIR / "pulumi", "github.com/pulumi/pulumi/pkg/v3") == PULUMI.version
    assert f"tool {PULUMI.package}" in (TOOLCHAIN_DIR / "pulumi" / "go.mod").read_text()
    cli = tuple(int(x) for x in PULUMI.version.lstrip("v").split("."))
    sdk = tuple(int(x) for x in version("pulumi").split("."))
    assert cli >= sdk, "the CLI must be at or above the pulumi SDK the program runs with"


def test_the_provider_module_pins_the_release_commit_of_the_sdk_version() -> None:
    pinned = required(TOOLCHAIN_DIR / "kubernetes", "github.com/pulumi/pulumi-kubernetes/provider/v4")
    # v4.25.0's release commit (the module has no provider/ tags: a pseudo-version names it).
    assert pinned == "v4.0.0-20260115033456-f47bc2d6f199"
    assert KUBERNETES.version == "v" + version("pulumi-kubernetes")
    assert f"tool {KUBERNETES.package}" in (TOOLCHAIN_DIR / "kubernetes" / "go.mod").read_text()


@pytest.fixture()
def tools_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "toolchain"
    shutil.copytree(TOOLCHAIN_DIR, copy)
    monkeypatch.setattr(toolchain, "TOOLCHAIN_DIR", copy)
    monkeypatch.setenv("KUBERAY_PLATFORM_CACHE", str(tmp_path / "cache"))
    return copy


def test_the_cache_key_follows_every_pin(tools_copy: Path) -> None:
    base = toolchain.cache_key(PULUMI, GO)
    assert toolchain.cache_key(PULUMI, GO) == base  # stable
    assert toolchain.cache_key(PULUMI, "go1.27.3 linux amd64") != base
    (tools_copy / "pulumi" / "go.sum").write_text((tools_copy / "pulumi" / "go.sum").read_text() + "\n")
    assert toolchain.cache_key(PULUMI, GO) != base
    assert toolchain.cache_key(KUBERNETES, GO) != toolchain.cache_key(PULUMI, GO)


def test_a_built_tool_is_reused_without_running_go(tools_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    final = toolchain.tool_dir(PULUMI, GO)
    assert str(final).startswith(str(tools_copy.parent / "cache" / "toolchain" / "pulumi-v3.274.1-"))
    (final / "bin").mkdir(parents=True)
    (final / "bin" / "pulumi").write_text("#!/bin/sh\n")
    (final / "build.json").write_text(json.dumps({"build_seconds": 1.0}))

    def no_go(*args: object, **kwargs: object) -> str:
        raise AssertionError("go must not run for a cached tool")

    monkeypatch.setattr(toolchain, "_go", no_go)
    built = toolchain.build(PULUMI, GO, log=lambda line: None)
    assert built.reused and built.path == final / "bin" / "pulumi"


def test_a_half_built_directory_is_not_taken_for_a_build(tools_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    final = toolchain.tool_dir(PULUMI, GO)
    (final / "bin").mkdir(parents=True)  # no binary, no build.json: an interrupted copy
    calls: list[list[str]] = []

    def fake_go(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
        calls.append(args)
        out = Path(args[args.index("-o") + 1])
        out.write_text("built")
        return ""

    monkeypatch.setattr(toolchain, "_go", fake_go)
    built = toolchain.build(PULUMI, GO, log=lambda line: None)
    assert not built.reused and built.path.read_text() == "built"
    assert calls and calls[0][:2] == ["build", "-trimpath"] and PULUMI.ldflags in calls[0]
    assert json.loads((final / "build.json").read_text())["version"] == PULUMI.version


def test_the_control_plane_module_maps_every_staging_module_to_its_release() -> None:
    """k8s.io/kubernetes replaces its staging modules with ./staging/...; a dependent module must map
    each to the release of the same line, or Go resolves mismatched versions."""
    go_mod = (TOOLCHAIN_DIR / "controlplane" / "go.mod").read_text()
    assert required(TOOLCHAIN_DIR / "controlplane", "k8s.io/kubernetes") == toolchain.KUBERNETES_VERSION
    replaced = dict(re.findall(r"^\s*(k8s\.io/[\w-]+) => \1 (v\S+)$", go_mod, re.M))
    assert len(replaced) == 33 and {"k8s.io/api", "k8s.io/cri-streaming", "k8s.io/streaming"} <= set(replaced)
    assert set(replaced.values()) == {"v0." + toolchain.KUBERNETES_VERSION.removeprefix("v1.")}
    for tool in toolchain.CONTROL_PLANE:
        assert tool.module_dir.is_dir() and f"{tool.package}" in (tool.module_dir / "go.mod").read_text()


def test_kubernetes_binaries_report_their_release() -> None:
    """Unstamped, Kubernetes reports v0.0.0-master and Kueue refuses the server's version."""
    (apiserver,) = [t for t in toolchain.CONTROL_PLANE if t.binary == "kube-apiserver"]
    flags = apiserver.ldflags
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        assert f"-X {package}.gitVersion=v1.36.3" in flags and f"-X {package}.gitMinor=36" in flags
    assert PULUMI.ldflags == "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v3.274.1"
    # One directory per program, though three share the control-plane module.
    dirs = {toolchain.tool_dir(t, GO).name.rsplit("-", 1)[0] for t in toolchain.CONTROL_PLANE}
    assert len(dirs) == len(toolchain.CONTROL_PLANE)


def test_make_toolchain_builds_the_engine_and_the_checks_not_the_control_plane() -> None:
    groups = {t.binary: t.group for t in toolchain.TOOLS}
    assert groups["pulumi"] == groups["pulumi-resource-kubernetes"] == "engine"
    assert groups["podsecurity"] == "checks"
    assert {groups[b] for b in ("etcd", "kube-apiserver", "kwok", "kueue")} == {"controlplane"}
