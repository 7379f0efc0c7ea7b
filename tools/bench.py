"""``make bench``: the speed targets, measured and written to BENCHMARKS.md (never timed tests).

- lint throughput: every upstream sample copied until there are at least 2,000 objects, spread
  over files as users have them, linted in one run (YAML parsing, every resource and stack rule).
  Target: at least 1,000 manifests a second.
- offline preview of each stack: the real program under the mock engine, schema validation and
  rules, in one process per stack (as ``make preview`` runs it).
- install of each dependency group: its lock installed with hashes into a fresh virtualenv (as
  ``make`` and a fresh machine install it), timed, then its site-packages measured.
"""

from __future__ import annotations

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


def bench_preview(stack: str) -> float:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [sys.executable, "-m", "tools", "preview", "--stack", stack, "--out", out],
            cwd=REPO_ROOT,
            check=True,
            capture_output=True,
        )
    return time.perf_counter() - start


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


def main() -> int:
    from policies.rules.serve_config_schema import MODE_ENV

    if not SAMPLES.is_dir():
        print(f"error: the lint corpus {SAMPLES} is missing; set KUBERAY_PLATFORM_SHARED", file=sys.stderr)
        return 2

    # Measure what `make lint` and `make preview` run where they are installed (the checks group: no
    # Ray, serve configs against schemas/ray/), though this process runs in the dev group.
    os.environ[MODE_ENV] = "schema"
    count, times, findings = bench_lint()
    best, median = min(times), statistics.median(times)
    rate = count / median
    previews = {stack: bench_preview(stack) for stack in ("dev", "staging", "prod")}
    ok = rate >= TARGET_PER_SECOND
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`python -m tools.bench`); numbers from the last run. Speed targets live",
        "here, never in timed tests.",
        "",
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.system()} {platform.release()}.",
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
        "## `make preview` wall time (one process per stack, imports included)",
        "",
        "| stack | seconds |",
        "| --- | --- |",
        *[f"| {stack} | {seconds:.2f} |" for stack, seconds in previews.items()],
        "",
        *install_section(),
    ]
    (REPO_ROOT / "BENCHMARKS.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
