"""The pinned Go toolchain of the real-engine runs, built from source into a cache outside the clone.

``toolchain/<name>/go.mod`` + ``go.sum`` pin each program with a ``tool`` directive; this module
builds each one into ``<cache>/toolchain/<name>-<version>-<key>/`` where the key hashes everything
that decides the bytes (Go version and platform, go.mod, go.sum, package, ldflags, recipe). A
second run with nothing changed finds the directory and returns at once. Builds go through a
temporary directory renamed into place, so an interrupted build leaves nothing that looks done.

Two modules, not one: the Kubernetes provider needs the Pulumi packages it was released with
(v3.215.0) while the CLI needs v3.274.1, and one module would force one version on both.

The provider embeds two generated, git-ignored files (``schema-embed.json``,
``terraform-mapping-embed.json``). They are made by the provider's own ``generate.go`` in a
writable copy of the module (verified against go.sum by ``go mod download``), which the build
then uses through a ``replace`` in a copy of ``toolchain/kubernetes/go.mod``: generated build
inputs, no upstream file changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from components.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
TOOLCHAIN_DIR = ROOT / "toolchain"
RECIPE = "1"  # bump when the build steps below change what they produce


@dataclass(frozen=True)
class Tool:
    """One pinned program: its tools module, main package, stamped version and output name."""

    name: str
    binary: str
    package: str
    version: str
    version_var: str | None
    """The variable ``-X`` stamps the version into; None for a program of this project's own."""
    env: dict[str, str] = field(default_factory=dict)
    generate_module: str | None = None  # module whose main package needs its generate.go run first
    stamps: tuple[tuple[str, str], ...] = ()
    """More ``-X var=value`` stamps (Kubernetes reports its version through several variables)."""
    module: str | None = None
    """The tools module under ``toolchain/`` when it is not ``name`` (several programs of one module)."""
    group: str = "engine"
    """``engine``: the real Pulumi engine (``make toolchain``); ``controlplane``: the local Kubernetes
    control plane (``make controlplane-toolchain``); ``checks``: tools the tests run."""

    @property
    def module_dir(self) -> Path:
        return TOOLCHAIN_DIR / (self.module or self.name)

    @property
    def ldflags(self) -> str:
        stamps = ([(self.version_var, self.version)] if self.version_var else []) + list(self.stamps)
        return " ".join(["-s -w", *(f"-X {var}={value}" for var, value in stamps)])

    def sources(self) -> list[Path]:
        """What decides the binary besides the Go version: go.mod, go.sum and the module's own Go files."""
        return [self.module_dir / "go.mod", self.module_dir / "go.sum", *sorted(self.module_dir.glob("*.go"))]


PULUMI = Tool(
    name="pulumi",
    binary="pulumi",
    package="github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",
    version="v3.274.1",
    version_var="github.com/pulumi/pulumi/sdk/v3/go/common/version.Version",
)
KUBERNETES = Tool(
    name="kubernetes",
    binary="pulumi-resource-kubernetes",
    package="github.com/pulumi/pulumi-kubernetes/provider/v4/cmd/pulumi-resource-kubernetes",
    version="v4.25.0",
    version_var="github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version",
    env={"CGO_ENABLED": "0"},
    generate_module="github.com/pulumi/pulumi-kubernetes/provider/v4",
)
PODSECURITY = Tool(
    name="podsecurity",
    binary="podsecurity",
    package=".",
    version="v0.36.6",
    version_var=None,
    env={"CGO_ENABLED": "0"},
    group="checks",
)
"""The Pod Security Standards checks of the API server's admission plugin (k8s.io/pod-security-admission
v0.36.6, the Kubernetes 1.36 line), run over the pod templates the platform writes by a small driver
of this project's (``toolchain/podsecurity/main.go``)."""
KUBERNETES_VERSION = "v1.36.3"
"""The control plane's Kubernetes: the v1.36 line KubeRay 1.7.0, Kueue v0.19.2 and kwok v0.8.0 build
against. ``toolchain/controlplane/go.mod`` maps each staging module k8s.io/kubernetes replaces with
``./staging/...`` to its v0.36.3 release."""
_KUBE_STAMPS = tuple(
    (f"{package}.{var}", value)
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
    for var, value in (
        ("gitVersion", KUBERNETES_VERSION),
        ("gitMajor", "1"),
        ("gitMinor", KUBERNETES_VERSION.split(".")[1]),
        ("gitTreeState", "clean"),
    )
)
_KUBE_BINARIES = tuple(
    Tool(
        name=binary,
        module="controlplane",
        binary=binary,
        package=f"k8s.io/kubernetes/cmd/{binary}",
        version=KUBERNETES_VERSION,
        version_var=None,
        env={"CGO_ENABLED": "0"},
        stamps=_KUBE_STAMPS,
        group="controlplane",
    )
    for binary in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
)
CONTROL_PLANE = (
    *_KUBE_BINARIES,
    Tool(
        name="etcd",
        binary="etcd",
        package="go.etcd.io/etcd/server/v3",
        version="v3.6.16",
        version_var=None,
        env={"CGO_ENABLED": "0"},
        group="controlplane",
    ),
    Tool(
        name="kwok",
        binary="kwok",
        package="sigs.k8s.io/kwok/cmd/kwok",
        version="v0.8.0",
        version_var=None,
        env={"CGO_ENABLED": "0"},
        group="controlplane",
    ),
    Tool(
        name="kueue",
        binary="kueue",
        package="sigs.k8s.io/kueue/cmd/kueue",
        version="v0.19.2",
        version_var="sigs.k8s.io/kueue/pkg/version.GitVersion",
        env={"CGO_ENABLED": "0"},
        group="controlplane",
    ),
)
TOOLS = (PULUMI, KUBERNETES, PODSECURITY, *CONTROL_PLANE)

# Not here: the Python language host (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3),
# which the Go module proxy refuses for every version (README, "The real engine, offline").


def cache_root() -> Path:
    """``$KUBERAY_PLATFORM_CACHE``, else ``$XDG_CACHE_HOME/kuberay-platform``, else ``~/.cache/...``."""
    if env := os.environ.get("KUBERAY_PLATFORM_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kuberay-platform"


def _go(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    go = shutil.which("go")
    if go is None:
        raise ConfigError(["toolchain: `go` is not on PATH (Go 1.26 is needed to build the pinned toolchain)"])
    full_env = {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=readonly", **(env or {})}
    proc = subprocess.run([go, *args], cwd=cwd, env=full_env, text=True, capture_output=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise ToolchainError(f"toolchain: `go {' '.join(args)}` failed in {cwd}:\n{tail}")
    return proc.stdout or ""


class ToolchainError(Exception):
    """A build step failed; the message names the command and the tail of its output."""


def go_identity() -> str:
    """Go's version and target platform: part of every cache key."""
    return _go(["env", "GOVERSION", "GOOS", "GOARCH"], cwd=ROOT).replace("\n", " ").strip()


def cache_key(tool: Tool, go: str) -> str:
    h = hashlib.sha256()
    for part in (
        RECIPE,
        go,
        tool.package,
        tool.ldflags,
        json.dumps(tool.env, sort_keys=True),
        *(path.read_text() for path in tool.sources()),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def tool_dir(tool: Tool, go: str) -> Path:
    return cache_root() / "toolchain" / f"{tool.name}-{tool.version}-{cache_key(tool, go)}"


@dataclass
class Built:
    tool: Tool
    path: Path
    reused: bool
    record: dict[str, object]


def _writable_copy(src: Path, dst: Path) -> None:
    """Module cache files are read-only: copy them out and make the copy writable."""
    shutil.copytree(src, dst, symlinks=False)
    for path in [dst, *dst.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IWUSR | (stat.S_IXUSR if path.is_dir() else 0))


def _prepare_generated(tool: Tool, work: Path) -> Path:
    """A build module whose copy of the provider carries the two generated embed files."""
    assert tool.generate_module is not None
    work.mkdir()
    for name in ("go.mod", "go.sum"):
        shutil.copy2(tool.module_dir / name, work / name)
        (work / name).chmod(0o644)
    info = json.loads(_go(["mod", "download", "-json", tool.generate_module], cwd=work))
    if info.get("Error"):
        raise ToolchainError(f"toolchain: {tool.generate_module}: {info['Error']}")
    copy = work / "src"
    _writable_copy(Path(info["Dir"]), copy)
    _go(["mod", "edit", f"-replace={tool.generate_module}=./src"], cwd=work)
    main_dir = copy / tool.package.removeprefix(tool.generate_module + "/")
    # Upstream's generator, compiled in the build module (which has its imports) and run in the copy.
    shutil.copy2(main_dir / "generate.go", work / "generate.go")
    _go(["build", "-o", str(work / "generate"), "./generate.go"], cwd=work)
    proc = subprocess.run(
        [str(work / "generate")],
        cwd=main_dir,
        env={**os.environ, "VERSION": tool.version.removeprefix("v")},
        text=True,
        capture_output=True,
    )
    if proc.returncode != 0:
        raise ToolchainError(f"toolchain: {tool.name}: generate.go failed: {proc.stderr.strip()[-2000:]}")
    (work / "generate").unlink()
    (work / "generate.go").unlink()
    return work


def build(tool: Tool, go: str, log: Callable[[str], None] = print) -> Built:
    """Build ``tool`` into its keyed cache directory, or reuse it if it is already there."""
    final = tool_dir(tool, go)
    record_path = final / "build.json"
    if (final / "bin" / tool.binary).is_file() and record_path.is_file():
        return Built(tool, final / "bin" / tool.binary, True, json.loads(record_path.read_text()))
    final.parent.mkdir(parents=True, exist_ok=True)
    log(f"toolchain: building {tool.name} {tool.version} (cold builds take minutes; see README)")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f".build-{tool.name}-", dir=final.parent) as tmp:
        tmpdir = Path(tmp)
        out = tmpdir / "out"
        (out / "bin").mkdir(parents=True)
        work = _prepare_generated(tool, tmpdir / "module") if tool.generate_module else tool.module_dir
        _go(
            ["build", "-trimpath", "-ldflags", tool.ldflags, "-o", str(out / "bin" / tool.binary), tool.package],
            cwd=work,
            env=tool.env,
        )
        seconds = time.monotonic() - start
        record = {
            "tool": tool.name,
            "package": tool.package,
            "version": tool.version,
            "go": go,
            "key": final.name.rsplit("-", 1)[-1],
            "build_seconds": round(seconds, 1),
            "peak_child_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (out / "build.json").write_text(json.dumps(record, indent=2) + "\n")
        if final.exists():  # a half-finished directory from an older recipe: replace it
            shutil.rmtree(final)
        out.rename(final)
    return Built(tool, final / "bin" / tool.binary, False, record)


def ensure(log: Callable[[str], None] = print, groups: tuple[str, ...] = ("engine", "checks")) -> dict[str, Path]:
    """Build or reuse the pinned programs of ``groups``; returns ``{binary name: path}``."""
    go = go_identity()
    paths: dict[str, Path] = {}
    for tool in (t for t in TOOLS if t.group in groups):
        built = build(tool, go, log=log)
        how = "reused" if built.reused else f"built in {built.record['build_seconds']}s"
        log(f"toolchain: {tool.binary} {tool.version} {how}: {built.path}")
        paths[tool.binary] = built.path
    return paths
