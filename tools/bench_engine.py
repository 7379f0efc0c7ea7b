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
    ]
    return lines, True


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
