"""``make bench``: the real engine's ``pulumi preview`` of each shipped stack against the floor of an
empty program with the same CLI, provider and policy pack, measured in the same run.

Each run is a fresh process, as ``make pulumi-preview`` starts it (``python -m tools pulumi-preview``
without ``--up``: the pinned CLI through the Automation API, the pinned Kubernetes provider in render
mode, the policy pack as an analyzer plugin, a local file backend). The floor
(``python -m tools.bench_engine floor``) goes through the same steps with a program that registers
only an explicit Kubernetes provider, so the engine starts the provider plugin and the pack judges
an empty stack. Where the real engine cannot be built (no Go), the section says so.
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.schema import REPO_ROOT

STACKS = ("dev", "staging", "prod")
QUIET = "prod, every policy off"
ROUNDS = 3
# Config secrets a stack reads, each from an environment variable the bench fills with a random value.
STACK_SECRETS = {
    "prod": {
        "kuberay-platform:redisGcsPassword": "BENCH_REDIS_PASSWORD",
        "kuberay-platform:qwenChatRayToken": "BENCH_RAY_TOKEN",
    },
}


def floor(engine_dir: Path, out: Path) -> int:
    """``pulumi preview`` of an empty program (one explicit Kubernetes provider, in render mode) with
    the policy pack, through the same steps as ``tools.real_engine.run``."""
    import pulumi
    import pulumi_kubernetes as k8s

    from tools import toolchain
    from tools.real_engine import RunPaths, open_stack, policy_launcher

    stack_file = engine_dir / "Pulumi.floor.yaml"
    stack_file.parent.mkdir(parents=True, exist_ok=True)
    stack_file.write_text("config: {}\n")
    paths = RunPaths("floor", "render", stack_file, engine_dir=engine_dir, out=out)

    def program() -> None:
        k8s.Provider("floor", render_yaml_to_directory=str(paths.rendered))
        pulumi.export("resources", 0)

    stack = open_stack(paths, toolchain.ensure(log=lambda line: None), {"config": {}}, {}, None, program)
    packs = [str(policy_launcher(paths))]
    configs = [str(REPO_ROOT / "policies" / "config" / "prod.json")]
    stack.preview(on_output=lambda line: None, policy_packs=packs, policy_pack_configs=configs)
    return 0


def _timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=REPO_ROOT, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])} failed: {proc.stderr.strip()[-2000:]}")
    return seconds


def section(shared: Path) -> tuple[list[str], bool]:
    """The table, and whether it could be measured."""
    from tools.toolchain import ToolchainError, ensure

    title = ["## Real engine: `pulumi preview` per stack against an empty program", ""]
    chart, kueue_chart = shared / "charts" / "kuberay-operator-1.7.0.tgz", shared / "charts" / "kueue-0.19.2.tgz"
    try:
        ensure(log=lambda line: None, groups=("engine",))
    except ToolchainError as exc:
        return [*title, f"Not measured: the real engine could not be built ({exc})."], False
    if not chart.is_file() or not kueue_chart.is_file():
        return [*title, f"Not measured: the offline charts are missing under {shared / 'charts'}."], False
    env = {**os.environ, **{var: secrets.token_hex(16) for v in STACK_SECRETS.values() for var in v.values()}}
    samples: dict[str, list[float]] = {name: [] for name in ("floor", *STACKS, QUIET)}
    with tempfile.TemporaryDirectory() as tmp:
        engine, out = Path(tmp) / "pulumi", Path(tmp) / "out"
        common = ["--engine-dir", str(engine), "--out", str(out), "--operator-chart", str(chart)]
        common += ["--kueue-chart", str(kueue_chart)]
        floor_args = ["-m", "tools.bench_engine", "floor", str(Path(tmp) / "floor"), str(out)]
        # prod judged by the pack with every policy off: the pack still receives every resource.
        policies = json.loads((REPO_ROOT / "policies" / "config" / "prod.json").read_text())
        for settings in policies.values():
            if isinstance(settings, dict):
                settings["enforcementLevel"] = "disabled"
        (Path(tmp) / "off.json").write_text(json.dumps(policies))
        runs = {
            "floor": floor_args,
            **{stack: _stack_args(stack, common) for stack in STACKS},
            QUIET: [*_stack_args("prod", common), "--policy-config", str(Path(tmp) / "off.json")],
        }
        for args in runs.values():  # first runs create the stacks and install the provider: not timed
            _timed(args, env)
        for _ in range(ROUNDS):
            for name, args in runs.items():
                samples[name].append(_timed(args, env))
    median = {name: statistics.median(runs) for name, runs in samples.items()}
    pack = median["prod"] - median[QUIET]
    lines = [
        *title,
        "Each `pulumi preview` in a fresh process as `make pulumi-preview` runs it without `--up` (the pinned CLI "
        "through the Automation API, the pinned Kubernetes provider in render mode, the policy pack as an analyzer "
        "plugin, a local file backend), against the floor: the same steps for a program that registers one explicit "
        f"Kubernetes provider and nothing else (`tools/bench_engine.py`). Stacks created and the provider installed by "
        f"an untimed first run; then {ROUNDS} rounds alternating floor and stacks, medians.",
        "",
        "| run | wall time | x floor |",
        "| --- | --- | --- |",
        f"| floor (empty program, same provider and policy pack) | {median['floor']:.1f} s | 1.0 |",
        *[f"| {stack} | {median[stack]:.1f} s | {median[stack] / median['floor']:.1f} |" for stack in STACKS],
        f"| {QUIET} | {median[QUIET]:.1f} s | {median[QUIET] / median['floor']:.1f} |",
        "",
        f"Of prod's {median['prod']:.1f} s, the policy pack's judging (schema validation and every rule of each "
        f"resource, in the pack's own process) is {pack:.1f} s ({pack / median['prod']:.0%}): prod with every policy "
        "off still sends each resource to the pack. The rest is the engine's own work over each resource: "
        "registering it, the provider's check and diff, rendering the operator's chart (and Kueue's in "
        "staging, which installs it), against one provider start in the floor. There is no target for this "
        "table (issue 17 asks for the figures); the offline preview is the fast path CI runs on every pull request.",
        "",
        *conversion_lines(shared),
    ]
    return lines, True


def _analyzer_requests(objects: list[dict[str, Any]]) -> list[Any]:
    from google.protobuf import json_format, struct_pb2
    from pulumi.runtime.proto import analyzer_pb2

    from policies.rules.base import resource_type

    requests = []
    for i, obj in enumerate(objects):
        props = struct_pb2.Struct()
        json_format.ParseDict(obj, props)
        rtype = resource_type(obj)
        urn = f"urn:pulumi:prod::kuberay-platform::{rtype}::r{i}"
        requests.append(analyzer_pb2.AnalyzeRequest(type=rtype, properties=props, urn=urn, name=f"r{i}"))
    return requests


def _analyze_seconds(requests: list[Any]) -> float:
    """Every resource through the pack's analyzer in this process, as the engine sends them."""
    from pulumi_policy.policy import EnforcementLevel, _PolicyAnalyzerServicer

    from policies.pack import PACK_NAME, build_policies

    config = json.loads((REPO_ROOT / "policies" / "config" / "prod.json").read_text())
    levels: dict[str, EnforcementLevel | dict[str, Any]] = {
        str(name): EnforcementLevel(settings["enforcementLevel"]) for name, settings in config.items()
    }
    analyzer = _PolicyAnalyzerServicer(PACK_NAME, "0.0.1", build_policies(), EnforcementLevel.ADVISORY, levels)
    start = time.perf_counter()
    for request in requests:
        analyzer.Analyze(request, None)  # type: ignore[no-untyped-call]
    return time.perf_counter() - start


def conversion_lines(shared: Path) -> list[str]:
    """The pack's analyzer over prod's objects and the operator chart's CRDs, in this process: with
    pulumi_policy's conversion of each resource once per policy, then shared (policies/property_cache.py)."""
    import tarfile

    import yaml

    from policies import property_cache
    from policies.pack import build_policies

    with tempfile.TemporaryDirectory() as tmp:
        _timed(["-m", "tools", "preview", "--stack", "prod", "--out", tmp], dict(os.environ))
        files = sorted((Path(tmp) / "prod" / "manifests").rglob("*.yaml"))
        objects = [d for f in files for d in yaml.safe_load_all(f.read_text()) if isinstance(d, dict)]
    crds: list[dict[str, Any]] = []
    with tarfile.open(shared / "charts" / "kuberay-operator-1.7.0.tgz") as chart:
        for member in chart.getmembers():
            if "/crds/" in member.name and member.name.endswith(".yaml") and (data := chart.extractfile(member)):
                crds += [d for d in yaml.safe_load_all(data.read()) if isinstance(d, dict)]
    property_cache.uninstall()
    _analyze_seconds(_analyzer_requests(objects))  # untimed: loads the schemas and compiles the CEL rules
    rows = []
    for label, group in ((f"prod's {len(objects)} objects", objects), (f"the chart's {len(crds)} CRDs", crds)):
        requests = _analyzer_requests(group)
        per_policy = _analyze_seconds(requests)
        property_cache.install()
        before = property_cache.conversions()["MessageToDict"]
        shared_seconds = _analyze_seconds(requests)
        converted = property_cache.conversions()["MessageToDict"] - before
        property_cache.uninstall()
        rows.append(f"| {label} | {per_policy:.2f} s | {shared_seconds:.2f} s | {per_policy / shared_seconds:.0f}x |")
        assert converted == len(requests), (converted, len(requests))
    return [
        f"Where the pack's time went: pulumi_policy 1.21.0 converts a resource's properties (protobuf to dict, "
        f"secrets, the unknown-checking proxy) once per policy, {len(build_policies())} times here, and the operator "
        "chart's CRDs are 250-490 KB each. `policies/property_cache.py` makes the analyzer convert each resource once "
        "for every policy (its tests prove the reports are byte-identical). The analyzer in-process over the same "
        "requests, prod's policy config:",
        "",
        "| resources | converted per policy | converted once | gain |",
        "| --- | --- | --- | --- |",
        *rows,
    ]


def _stack_args(stack: str, common: list[str]) -> list[str]:
    args = ["-m", "tools", "pulumi-preview", "--stack", stack, *common]
    for key, var in STACK_SECRETS.get(stack, {}).items():
        args += ["--secret-from-env", f"{key}={var}"]
    return args


if __name__ == "__main__":  # python -m tools.bench_engine floor <engine dir> <out>
    if sys.argv[1:2] == ["floor"]:
        sys.exit(floor(Path(sys.argv[2]), Path(sys.argv[3])))
    from tools.bench import SAMPLES

    text, _ = section(SAMPLES.parent)
    print("\n".join(text))
