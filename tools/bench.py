"""``make bench``: the speed targets, measured and written to BENCHMARKS.md (never timed tests).

- lint throughput: every upstream sample copied until there are at least 2,000 objects, spread
  over files as users have them, linted in one run (YAML parsing, every resource and stack rule).
  Target: at least 1,000 manifests a second.
- offline preview of each stack: the real program under the mock engine, schema validation and
  rules, in one process per stack (as ``make preview`` runs it), against the floor of an empty
  program under the same mock engine, measured in the same run (target: within 2x, wall time and
  peak memory), with a cProfile breakdown of prod's preview by phase.
- install of each dependency group: its lock installed with hashes into a fresh virtualenv (as
  ``make`` and a fresh machine install it), timed, then its site-packages measured.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import bench_engine, lint_vs_checkov
from tools.lint import expand, lint, load_objects
from tools.schema import REPO_ROOT

SAMPLES = Path(os.environ.get("KUBERAY_PLATFORM_SHARED", REPO_ROOT.parent / "shared")) / "samples"
"""The upstream samples (a benchmark corpus, read by this dev tool only, never by the product)."""

TARGET_PER_SECOND = 1000
MIN_OBJECTS = 2000
ROUNDS = 5
# label -> lock, smallest first; what each is for is in the Makefile's header.
INSTALL_GROUPS = {
    "Pulumi program (`pulumi up`)": "requirements.txt",
    "policy pack (`policies/venv`)": "policies/requirements.txt",
    "checks (`make preview`, `make lint`)": "requirements/checks.txt",
    "dev (`make test`, `make bench`)": "requirements/dev.txt",
}
INSTALL = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes", "--no-deps", "-r"]


def _corpus(directory: Path) -> int:
    samples = sorted(SAMPLES.rglob("*.yaml"))
    per_copy = len(load_objects(samples))
    copies = -(-MIN_OBJECTS // per_copy)
    for i in range(copies):
        target = directory / f"copy-{i}"
        target.mkdir()
        for sample in samples:
            shutil.copy(sample, target / f"{sample.parent.name}-{sample.name}")
    return per_copy * copies


def _without_content_caches() -> None:
    """The corpus repeats each sample; switch off the by-content caches (serveConfigV2 parsing,
    Ray Serve validation, model sizes) so every copy costs what a distinct manifest would."""
    from components.manifests import capacity
    from policies.rules import helpers, serve_config_schema

    capacity._model_unit_of = capacity._model_unit_of.__wrapped__  # type: ignore[assignment]

    helpers._parse_yaml = helpers._parse_yaml.__wrapped__  # type: ignore[assignment]
    serve_config_schema.serve_config_errors = serve_config_schema.serve_config_errors.__wrapped__  # type: ignore[assignment]


def bench_lint() -> tuple[int, list[float], int]:
    _without_content_caches()
    with tempfile.TemporaryDirectory() as tmp:
        count = _corpus(Path(tmp))
        lint([str(Path(tmp) / "copy-0")], "prod")  # warm-up: imports (Ray Serve's schema) happen once
        times = []
        findings = 0
        for _ in range(ROUNDS):
            start = time.perf_counter()
            findings = len(lint([tmp], "prod"))
            times.append(time.perf_counter() - start)
        assert len(load_objects(expand([tmp]))) == count
    return count, times, findings


PREVIEW_ROUNDS = 3
SAME_IMPORTS = "import tools.__main__, tools.preview, components.platform\n"
"""What ``make preview`` imports before it runs the program: its own modules and the program's."""
PREVIEW_TARGET = 2.0
"""Each stack's offline preview within 2x of the empty-program floor (issue 17), wall time and memory."""
FLOOR_PROGRAM = '''"""An empty Pulumi program: it imports what the platform's program imports and registers nothing."""

import pulumi  # noqa: F401
import pulumi_kubernetes  # noqa: F401
'''
# The process's own high-water mark (VmHWM, in kB). Not getrusage: Linux carries a parent's maximum RSS
# across fork and exec into the child's ru_maxrss, so every child would report at least the bench's.
_PEAK = (
    "\nimport re\nwith open('/proc/self/status') as status:\n"
    "    print(re.search(r'VmHWM:\\s+(\\d+)', status.read()).group(1))"
)


_TIMED = "\nimport time\nstart = time.perf_counter()\n{body}\nprint(time.perf_counter() - start)"


def _measure(code: str, body: str | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of a fresh interpreter running ``code`` from the repository;
    with ``body``, the seconds of ``body`` alone, run after ``code`` (imports and setup excluded)."""
    timed = "" if body is None else _TIMED.format(body=body)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code + timed + _PEAK], cwd=REPO_ROOT, check=True, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    printed = proc.stdout.split()
    return (wall if body is None else float(printed[-2])), int(printed[-1]) * 1024


def bench_preview(stack: str, out: str) -> tuple[float, int]:
    """``make preview STACK=<stack>`` as one process: the program under the mock engine, validation,
    rules, the connectivity table and the outputs."""
    return _measure(f"from tools.__main__ import main\nmain(['preview', '--stack', {stack!r}, '--out', {out!r}])")


def bench_floor(program: str, imports: str = "") -> tuple[float, int]:
    """The floor: the same interpreter and mock engine (``tools.engine.run_program``) running an empty
    program, after ``imports``."""
    run = "from pathlib import Path\nfrom tools.engine import run_program\n"
    run += f"run_program(Path({program!r}), 'floor', {{}})"
    return _measure(imports + run)


def preview_section() -> tuple[list[str], bool]:
    """Each stack's preview against the floor, measured in the same run (medians of rounds that
    alternate between them), and where the time goes (phases timed under cProfile)."""
    stacks = ("dev", "staging", "prod")
    samples: dict[str, list[tuple[float, int]]] = {name: [] for name in ("floor", "tools", *stacks)}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "floor").mkdir()
        (Path(tmp) / "floor" / "__main__.py").write_text(FLOOR_PROGRAM)
        (Path(tmp) / "floor" / "Pulumi.yaml").write_text("name: floor\nruntime: python\n")
        for _ in range(PREVIEW_ROUNDS):
            samples["floor"].append(bench_floor(str(Path(tmp) / "floor")))
            samples["tools"].append(bench_floor(str(Path(tmp) / "floor"), SAME_IMPORTS))
            for stack in stacks:
                samples[stack].append(bench_preview(stack, str(Path(tmp) / "out")))
    median = {name: (statistics.median(t for t, _ in runs), statistics.median(m for _, m in runs))
              for name, runs in samples.items()}  # fmt: skip
    bare_time, bare_mem = median["floor"]
    floor_time, floor_mem = median["tools"]
    lines = [
        "## `make preview` against the empty-program floor",
        "",
        f"Each stack's offline preview in a fresh interpreter (as `make preview` runs it: program, validation, rules, "
        f"connectivity table, outputs) against the floor: the same interpreter and mock engine running a Pulumi "
        f"program that registers nothing, after the same imports (the preview's `tools.preview` and the program's "
        f"`components.platform`). The bare floor imports only `pulumi` and `pulumi_kubernetes`. Medians of "
        f"{PREVIEW_ROUNDS} rounds, floors and stacks alternating in each round. Peak memory is the process's own "
        "high-water mark (VmHWM; the connectivity analyzer runs in a child process of its own, not counted). "
        f"Target: within {PREVIEW_TARGET:g}x of the floor, time and memory.",
        "",
        "| run | wall time | x floor | x bare floor | peak RSS | x floor | target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| bare floor (`pulumi`, `pulumi_kubernetes`) | {bare_time:.2f} s | {bare_time / floor_time:.1f} | 1.0 | "
        f"{bare_mem / 2**20:.0f} MiB | {bare_mem / floor_mem:.1f} | |",
        f"| floor (the same imports, nothing registered) | {floor_time:.2f} s | 1.0 | {floor_time / bare_time:.1f} | "
        f"{floor_mem / 2**20:.0f} MiB | 1.0 | |",
    ]
    ok = True
    for stack in stacks:
        seconds, memory = median[stack]
        met = seconds <= PREVIEW_TARGET * floor_time and memory <= PREVIEW_TARGET * floor_mem
        ok = ok and met
        lines.append(
            f"| {stack} | {seconds:.2f} s | {seconds / floor_time:.1f} | {seconds / bare_time:.1f} | "
            f"{memory / 2**20:.0f} MiB | {memory / floor_mem:.1f} | {'met' if met else 'MISSED'} |"
        )
    lines += [
        "",
        f"Importing what a preview needs costs {floor_time - bare_time:.2f} s over the bare floor (the spec's pydantic "
        "models, the validators, the rules, celpy); the phases below show where prod's remaining time goes.",
    ]
    return [*lines, "", *phases_section()], ok


FLEET_SIZES = (10, 100, 1000)
FLEET_ROUNDS = 3
FLEET_SECONDS, FLEET_BYTES = 60.0, 2 * 2**30
"""1,000 clusters previewed in under a minute and 2 GiB; 1,000 within 11x of 100 (linear); the
program within 1.5x of bare pulumi_kubernetes registering the same resources (issue 17)."""


def fleet_section() -> tuple[list[str], bool]:
    """Generated fleets of 10, 100 and 1,000 RayClusters (``tools.fleet``): the whole preview, and the
    program alone against bare ``pulumi_kubernetes`` registering the same resources."""
    from tools.fleet import write_bare_program, write_fleet_stack

    rows: dict[int, dict[str, tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in FLEET_SIZES:
            stack_file = write_fleet_stack(n, root)
            stack, out = f"fleet-{n}", root / "out"
            args = ["preview", "--stack", stack, "--stack-file", str(stack_file), "--out", str(out)]
            preview = [_measure(f"from tools.__main__ import main\nmain({args!r})") for _ in range(FLEET_ROUNDS)]
            bare = write_bare_program(out / stack / "plan.json", root / f"bare-{n}")
            setup = (
                "from pathlib import Path\nfrom tools.engine import run_program\nfrom tools.stackfile import "
                f"read_stack_config\nconfig, keys = read_stack_config(Path({str(stack_file)!r}), 'fleet')\n"
                "import components.platform, pulumi_kubernetes\n"
            )
            ours = [
                _measure(setup, f"run_program(Path({str(REPO_ROOT)!r}), {stack!r}, config, keys)")
                for _ in range(FLEET_ROUNDS)
            ]
            theirs = [
                _measure(setup, f"run_program(Path({str(bare)!r}), {stack!r}, {{}})") for _ in range(FLEET_ROUNDS)
            ]
            objects = sum(1 for _ in (out / stack / "manifests").iterdir())
            rows[n] = {
                name: (statistics.median(t for t, _ in runs), statistics.median(m for _, m in runs))
                for name, runs in (("preview", preview), ("program", ours), ("bare", theirs))
            }
            rows[n]["objects"] = (float(objects), 0.0)
    big, mid = rows[FLEET_SIZES[-1]], rows[FLEET_SIZES[-2]]
    growth = big["preview"][0] / mid["preview"][0]
    last, before = FLEET_SIZES[-1], FLEET_SIZES[-2]
    checks = {
        f"{last:,} clusters previewed in under {FLEET_SECONDS:.0f} s": big["preview"][0] < FLEET_SECONDS,
        f"{last:,} clusters previewed in under {FLEET_BYTES / 2**30:.0f} GiB": big["preview"][1] < FLEET_BYTES,
        f"{last:,} within 11x of {before:,} (x{growth:.1f})": growth <= 11,
    }
    for n, r in rows.items():
        ratio = r["program"][0] / r["bare"][0]
        checks[f"program within 1.5x of bare pulumi_kubernetes at {n:,} (x{ratio:.2f})"] = ratio <= 1.5
    lines = [
        "## Fleet scaling (`tools/fleet.py`)",
        "",
        "A staging stack with N RayClusters over ten namespaces, each with three worker groups (CPU, high-memory "
        "CPU, L4 GPU), queued in Kueue (a ClusterQueue and LocalQueue per namespace, Kueue installed by the "
        "stack), monitored (PodMonitors, alert rules, dashboards) and policed (default deny with the platform's "
        "allowances, one policy per cluster). *preview*: `make preview` in a fresh interpreter (render, strict "
        "validation, every rule, the connectivity table where it fits the analyzer's budget, the outputs). "
        "*program*: `tools.engine.run_program` of the platform's program alone (imports done). *bare*: the same "
        "mock engine registering the same resources (type, name, parent, inputs from the preview's `plan.json`) "
        f"with plain `pulumi.CustomResource` calls. Medians of {FLEET_ROUNDS} rounds; peak RSS as VmHWM.",
        "",
        "| clusters | objects | preview | preview peak RSS | program | bare pulumi_kubernetes | program / bare |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, r in rows.items():
        lines.append(
            f"| {n:,} | {r['objects'][0]:,.0f} | {r['preview'][0]:.1f} s | {r['preview'][1] / 2**20:.0f} MiB | "
            f"{r['program'][0]:.2f} s | {r['bare'][0]:.2f} s | {r['program'][0] / r['bare'][0]:.2f} |"
        )
    lines += ["", "| target | result |", "| --- | --- |"]
    lines += [f"| {what} | {'met' if ok else 'MISSED'} |" for what, ok in checks.items()]
    lines += [
        "",
        "What the program adds to bare registration is its own work: validating the spec (pydantic), building "
        "each object, and the dependencies it declares (each Ray object waits for the operator, its namespace's "
        "queue, policies, Secrets and claims; bare registration declares none). Both grow linearly with the "
        "fleet; the ratio moves by about a tenth between runs on this machine. Of the preview's time at 1,000 "
        "clusters, the program is the larger part; validation, rules and writing `out/` follow it.",
    ]
    return lines, all(checks.values())


SCHEMA_CODE = """
import json, sys, time
start = time.perf_counter()
from tools.lint import expand, load_objects
from tools.schema import Validator
imported = time.perf_counter()
objects = [item.obj for item in load_objects(expand([sys.argv[1]]))]
validator = Validator('1.33')
times = []
for _ in range(2):
    begin = time.perf_counter()
    for obj in objects:
        validator.validate(obj)
    times.append(time.perf_counter() - begin)
kinds = len({(o.get('apiVersion'), o.get('kind')) for o in objects})
print(json.dumps([imported - start, times[0], times[1], len(objects), kinds]))
"""


def schema_section() -> list[str]:
    """Schema loading: the first validation of every upstream sample in a fresh interpreter (each
    kind's schema read, its validator and CEL programs built) against the same objects again."""
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", SCHEMA_CODE, str(SAMPLES)],
                cwd=REPO_ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for _ in range(PREVIEW_ROUNDS)
    ]
    imports, cold, warm = (statistics.median(r[i] for r in runs) for i in range(3))
    objects, kinds = runs[0][3], runs[0][4]
    return [
        "## Schema loading, cold and warm",
        "",
        f"Every upstream sample ({objects} objects of {kinds} kinds) validated strictly (`tools.schema.Validator`, "
        f"Kubernetes 1.33) in a fresh interpreter, twice; medians of {PREVIEW_ROUNDS} interpreters. Cold: the first "
        "pass, which reads each kind's schema (the project's `schemas/` and kubernetes-validate's core schemas), "
        "builds its validators and compiles its CEL rules. Warm: the same objects again, everything cached.",
        "",
        "| import (`tools.schema`, `tools.lint`) | cold pass | warm pass | cold per object | warm per object |",
        "| --- | --- | --- | --- | --- |",
        f"| {imports:.2f} s | {cold:.2f} s | {warm:.3f} s | {cold / objects * 1000:.1f} ms | "
        f"{warm / objects * 1000:.2f} ms |",
    ]


PHASES = {
    "tools.engine:run_program": "the program under the mock engine",
    "tools.schema:Validator.__init__": "loading the schemas",
    "tools.schema:Validator.validate": "schema validation",
    "tools.preview:check_chart_values": "chart values against the charts' values.yaml",
    "policies.rules.engine:evaluate_resources": "policy rules",
    "tools.preview:start_connectivity": "starting the connectivity analyzer (its input files, the child process)",
    "tools.preview:PendingConnectivity.lines": "waiting for the connectivity table (network-config-analyzer)",
    "tools.preview:write_outputs": "writing out/",
}


def phases_section() -> list[str]:
    """Where prod's preview spends its time: cumulative seconds of each phase under cProfile, in a
    fresh interpreter, the rest being imports and start-up."""
    code = (
        "import cProfile, pstats, sys, tempfile, time\n"
        "start = time.perf_counter()\n"
        "profile = cProfile.Profile()\n"
        "profile.enable()\n"
        "from tools.__main__ import main\n"
        "with tempfile.TemporaryDirectory() as out:\n"
        "    main(['preview', '--stack', 'prod', '--out', out])\n"
        "profile.disable()\n"
        "total = time.perf_counter() - start\n"
        "stats = pstats.Stats(profile).stats\n"
        "for (file, _, func), (_, _, _, cum, _) in stats.items():\n"
        "    print('PHASE', file, func, cum)\n"
        "print('TOTAL', total)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True, capture_output=True, text=True)
    total = 0.0
    found: dict[str, float] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts[:1] == ["TOTAL"]:
            total = float(parts[1])
        elif parts[:1] == ["PHASE"] and len(parts) == 4:
            module = Path(parts[1]).with_suffix("").as_posix().replace("/", ".")
            for key in PHASES:
                name, func = key.split(":")
                if module.endswith(name) and func.rsplit(".", 1)[-1] == parts[2]:
                    found[key] = max(found.get(key, 0.0), float(parts[3]))
    lines = [
        "### Where prod's preview spends its time (cProfile, cumulative per phase)",
        "",
        "| phase | seconds | share |",
        "| --- | --- | --- |",
    ]
    for key, what in PHASES.items():
        seconds = found.get(key, 0.0)
        lines.append(f"| {what} | {seconds:.2f} | {seconds / total:.0%} |")
    rest = total - sum(found.values())
    lines.append(f"| imports, start-up and the rest | {rest:.2f} | {rest / total:.0%} |")
    lines.append(f"| total under the profiler | {total:.2f} | 100% |")
    return lines


def bench_install(lock: str) -> tuple[float, int, int]:
    """Seconds to install ``lock`` into a fresh virtualenv, its site-packages in bytes (as ``du``
    counts them, the venv's own pip included) and the number of packages in the lock."""
    packages = len(re.findall(r"^[A-Za-z0-9][^ ]*==", (REPO_ROOT / lock).read_text(), re.MULTILINE))
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        start = time.perf_counter()
        subprocess.run([python, *INSTALL, str(REPO_ROOT / lock)], check=True)
        seconds = time.perf_counter() - start
        subprocess.run([python, "-m", "pip", "check"], check=True, capture_output=True)
        purelib = subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        kib = subprocess.run(["du", "-sk", purelib], check=True, capture_output=True, text=True).stdout.split()[0]
    return seconds, int(kib) * 1024, packages


def install_section() -> list[str]:
    results = {label: bench_install(lock) for label, lock in INSTALL_GROUPS.items()}
    cache = "off (`PIP_NO_CACHE_DIR` was set)" if os.environ.get("PIP_NO_CACHE_DIR") else "on, as it was"
    return [
        "## Install size and time per dependency group",
        "",
        "Each lock installed into a fresh virtualenv in a temporary folder with "
        "`pip install --require-hashes --no-deps -r <lock>` (what `make` runs), then `pip check`; the time is the "
        "`pip install` alone, the size is `du` of the virtualenv's site-packages (the venv's own pip included). "
        f"pip's cache: {cache}. `make bench` runs after `make test` has installed `requirements/dev.txt`, so "
        "every wheel is normally in pip's cache already: these are warm-cache times (unpack and byte-compile; "
        "pip still asks PyPI for the index pages). A first install on a fresh machine adds the download. "
        "Run `PIP_NO_CACHE_DIR=1 make bench` to measure with downloads.",
        "",
        "| group | lock | packages | install time | site-packages |",
        "| --- | --- | --- | --- | --- |",
        *[
            f"| {label} | `{lock}` | {results[label][2]} | {results[label][0]:.1f} s | "
            f"{results[label][1] / 2**20:,.0f} MiB |"
            for label, lock in INSTALL_GROUPS.items()
        ],
        "",
    ]


REFERENCE_CODE = (
    "import time\nt = time.perf_counter()\ns = 0\nfor i in range(10_000_000):\n    s += i\n"
    "print(time.perf_counter() - t)"
)


def reference_seconds() -> float:
    """The machine's speed for pure Python: a loop of 10 million additions in a fresh interpreter
    (median of three). Development machines differ from session to session; compare runs by it."""
    runs = [
        float(subprocess.run([sys.executable, "-c", REFERENCE_CODE], check=True, capture_output=True, text=True).stdout)
        for _ in range(3)
    ]
    return statistics.median(runs)


def main() -> int:
    from policies.rules.serve_config_schema import MODE_ENV

    if not SAMPLES.is_dir():
        print(f"error: the lint corpus {SAMPLES} is missing; set KUBERAY_PLATFORM_SHARED", file=sys.stderr)
        return 2

    # Measure what `make lint` and `make preview` run where they are installed (the checks group: no
    # Ray, serve configs against schemas/ray/), though this process runs in the dev group.
    os.environ[MODE_ENV] = "schema"
    reference = reference_seconds()
    count, times, findings = bench_lint()
    best, median = min(times), statistics.median(times)
    rate = count / median
    preview_lines, previews_ok = preview_section()
    fleet_lines, fleet_ok = fleet_section()
    checkov_lines, checkov_ok = lint_vs_checkov.section(SAMPLES)
    engine_lines, _ = bench_engine.section(SAMPLES.parent)
    schema_lines = schema_section()
    ok = rate >= TARGET_PER_SECOND
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`python -m tools.bench`); numbers from the last run. Speed targets live",
        "here, never in timed tests.",
        "",
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs. Its speed for pure Python: a loop of 10 "
        f"million additions takes {reference:.2f} s (medians of three; compare runs made on different machines by it).",
        "",
        "## `make lint` throughput",
        "",
        f"Every upstream sample (`shared/samples/`) copied until there are {count:,} objects in "
        f"{count // max(1, len(load_objects(sorted(SAMPLES.rglob('*.yaml'))))):,} "
        "folders, linted together in one in-process run for `ENV=prod` (YAML parsing, strict schema validation "
        "of every object with CEL rules, all resource rules, all stack rules, serve configs against the schemas "
        "generated from Ray Serve's models as the checks group runs them, by-content caches off except CEL results, "
        "memoised per rule and value: the small values CEL rules judge repeat across distinct manifests too); imports "
        f"warmed up once, then {ROUNDS} rounds.",
        "",
        "| objects | findings | median | best | manifests/s (median) | target | result |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| {count:,} | {findings:,} | {median:.3f} s | {best:.3f} s | {rate:,.0f} | >= {TARGET_PER_SECOND:,} | "
        f"{'met' if ok else 'MISSED'} |",
        "",
        *(
            []
            if ok
            else [
                f"Missed on this machine: the run is pure Python from end to end (YAML construction, validation, "
                f"rules), and this machine runs the reference loop above in {reference:.2f} s. Where the time "
                "goes is in the phases of `make lint` below.",
                "",
            ]
        ),
        *preview_lines,
        "",
        *fleet_lines,
        "",
        *checkov_lines,
        "",
        *schema_lines,
        "",
        *engine_lines,
        "",
        *install_section(),
    ]
    (REPO_ROOT / "BENCHMARKS.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if ok and previews_ok and fleet_ok and checkov_ok else 1


if __name__ == "__main__":
    sys.exit(main())
