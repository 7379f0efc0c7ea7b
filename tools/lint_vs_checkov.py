"""``make bench``: ``make lint`` beside checkov (PyPI ``checkov``, its Kubernetes framework) on the
same KubeRay manifests, in the same run: wall time and peak memory of each as a user runs it (a
fresh process over a folder), and which Ray anti-patterns each catches.

- Corpus: the upstream KubeRay samples (``shared/samples/kuberay``), every object as upstream wrote
  it, cycled until there are exactly N objects, spread over files as the samples are.
- ``make lint``: ``python -m tools lint --env prod --format json <folder>`` in a fresh interpreter,
  with its by-content caches off (serve configs, model sizes: a cycled corpus repeats them, real
  repositories less so), so a repeated sample costs what a distinct manifest would.
- checkov: ``checkov -d <folder> --framework kubernetes -o json --quiet --compact --skip-download``
  from its own virtualenv (``.venv-checkov``, ``requirements/checkov.txt``).
- Peak memory: each tool runs under a small launcher that reports its children's maximum RSS
  (``RUSAGE_CHILDREN``), so the bench's own memory is never counted.
- Anti-patterns: the violating fixtures of the policy tests (``tests/policy_fixtures.py``: a golden
  RayCluster, RayJob and RayService, each changed to break exactly one rule), one file each. ``make
  lint`` catches one when its rule fires on that object; checkov when it fails a check on the
  violating file that it does not fail on the golden object of the same kind.
"""

from __future__ import annotations

import copy
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tools.schema import REPO_ROOT
from tools.schema_store import yaml_load_all

SIZES = (300, 1000)
ROUNDS = 3
TARGETS = {300: 5.0, 1000: 10.0}
"""``make lint`` at least 5x faster than checkov at 300 manifests and 10x at 1,000 (issue 17)."""
CHECKOV = REPO_ROOT / ".venv-checkov" / "bin" / "checkov"
CHECKOV_ARGS = ["--framework", "kubernetes", "-o", "json", "--quiet", "--compact", "--skip-download"]
_LAUNCHER = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
    "seconds = time.perf_counter() - start\n"
    "sys.stderr.write(f'{seconds} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {proc.returncode}\\n')\n"
    "sys.stdout.buffer.write(proc.stdout)\n"
)
LINT_CODE = (
    "import sys\n"
    "from tools.bench import _without_content_caches\n"
    "_without_content_caches()\n"
    "from tools.__main__ import main\n"
    "sys.exit(main(['lint', '--env', 'prod', '--format', 'json', *sys.argv[2:], sys.argv[1]]))\n"
)


def _sample_files(samples: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    files = []
    for path in sorted((samples / "kuberay").rglob("*.yaml")):
        docs = [d for d in yaml_load_all(path.read_text()) if isinstance(d, dict) and "kind" in d]
        if docs:
            files.append((path.name, docs))
    return files


def write_corpus(samples: Path, count: int, directory: Path) -> int:
    """Exactly ``count`` upstream KubeRay objects in ``directory`` (samples cycled, one file per sample
    and copy); the number of files."""
    files = _sample_files(samples)
    written = objects = 0
    copy_number = 0
    while objects < count:
        for name, docs in files:
            take = docs[: count - objects]
            if not take:
                break
            (directory / f"c{copy_number:02d}-{name}").write_text(yaml.safe_dump_all(take, sort_keys=False))
            objects += len(take)
            written += 1
        copy_number += 1
    return written


def _run(command: list[str]) -> tuple[float, int, int, str]:
    """(seconds, peak RSS in bytes, exit code, stdout) of ``command`` under the launcher."""
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *command], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    seconds, peak_kib, code = proc.stderr.split()[-3:]
    return float(seconds), int(peak_kib) * 1024, int(code), proc.stdout


def run_lint(folder: Path, policy_config: Path | None = None) -> tuple[float, int, list[dict[str, Any]]]:
    config = ["--policy-config", str(policy_config)] if policy_config else []
    seconds, peak, code, out = _run([sys.executable, "-c", LINT_CODE, str(folder), *config])
    if code not in (0, 1):
        raise RuntimeError(f"make lint exited {code} on {folder}")
    return seconds, peak, json.loads(out)["violations"]


def run_checkov(folder: Path) -> tuple[float, int, list[dict[str, Any]]]:
    seconds, peak, code, out = _run([str(CHECKOV), "-d", str(folder), *CHECKOV_ARGS])
    if code not in (0, 1):
        raise RuntimeError(f"checkov exited {code} on {folder}")
    return seconds, peak, list(_failed_checks(json.loads(out) if out.strip() else {}))


def _failed_checks(report: Any) -> Iterator[dict[str, Any]]:
    for part in report if isinstance(report, list) else [report]:
        if isinstance(part, dict):
            yield from part.get("results", {}).get("failed_checks", [])


# --- Anti-patterns -------------------------------------------------------------------------------


def anti_patterns() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """(file stem -> object, ``<rule>-<n>`` -> its rule): the goldens as ``golden-<kind>``, and every
    violating fixture of every rule (``tests/policy_fixtures.py``), each named after its rule."""
    sys.path.insert(0, str(REPO_ROOT))
    fixtures = importlib.import_module("tests.policy_fixtures")  # the tests' own anti-patterns, not a copy
    cases, golden = fixtures.CASES, fixtures.golden

    objects: dict[str, dict[str, Any]] = {}
    for kind in ("raycluster", "rayjob", "rayservice"):
        obj = golden(kind)
        obj["metadata"]["name"] = f"golden-{kind}"
        objects[f"golden-{kind}"] = obj
    rules = {}
    for rule, changes in sorted(cases.items()):
        for n, (kind, change, _) in enumerate(changes, start=1):
            obj = golden(kind)
            change(obj)
            stem = f"{rule}-{n}"
            obj = copy.deepcopy(obj)
            obj["metadata"]["name"] = stem
            objects[stem] = obj
            rules[stem] = rule
    return objects, rules


def every_rule_on(directory: Path) -> Path:
    """prod's policy config with the rules it leaves off (opt-in ones, such as ``image-digest``) on as
    advisory: the table asks what each tool can catch."""
    config = json.loads((REPO_ROOT / "policies" / "config" / "prod.json").read_text())
    for settings in config.values():
        if isinstance(settings, dict) and settings.get("enforcementLevel") == "disabled":
            settings["enforcementLevel"] = "advisory"
    path = directory / "every-rule-on.json"
    path.write_text(json.dumps(config))
    return path


def catches(directory: Path) -> tuple[list[tuple[str, str, str, bool, list[str]]], float, float]:
    """Per fixture: (name, rule, kind, make lint catches it, checkov checks failed only on the
    violating object); and the share each tool catches."""
    objects, rules = anti_patterns()
    manifests = directory / "manifests"
    manifests.mkdir()
    for stem, obj in objects.items():
        (manifests / f"{stem}.yaml").write_text(yaml.safe_dump(obj, sort_keys=False))
    _, _, found = run_lint(manifests, every_rule_on(directory))
    _, _, failed = run_checkov(manifests)
    by_file: dict[str, set[str]] = {}
    for check in failed:
        by_file.setdefault(Path(str(check.get("file_path", ""))).stem, set()).add(str(check["check_id"]))
    rows = []
    for stem, rule in rules.items():
        kind = objects[stem]["kind"]
        lint_caught = any(v["name"] == stem and v["policy"] == rule for v in found)
        extra = sorted(by_file.get(stem, set()) - by_file.get(f"golden-{kind.lower()}", set()))
        rows.append((stem, rule, kind, lint_caught, extra))
    return rows, sum(r[3] for r in rows) / len(rows), sum(bool(r[4]) for r in rows) / len(rows)


# --- Where make lint's time goes -----------------------------------------------------------------

PHASES_CODE = """
import json, sys, time
t0 = time.perf_counter()
from tools.bench import _without_content_caches
_without_content_caches()
from tools.lint import RuleContext, Validator, evaluate_resources, expand, read_objects, resolve, resource_type
from tools.lint import schema_findings
t1 = time.perf_counter()
located, _ = read_objects(expand([sys.argv[1]]))
t2 = time.perf_counter()
validator = Validator('1.33')
seen, first, rest = set(), 0.0, 0.0
for item in located:
    key = (item.obj.get('apiVersion'), item.obj.get('kind'))
    begin = time.perf_counter()
    schema_findings(validator, item.obj)
    if key in seen:
        rest += time.perf_counter() - begin
    else:
        seen.add(key)
        first += time.perf_counter() - begin
t3 = time.perf_counter()
resources = [(resource_type(i.obj), i.obj) for i in located]
evaluate_resources(resources, RuleContext(environment='prod'), resolve(None, 'prod'))
t4 = time.perf_counter()
print(json.dumps({'imports': t1 - t0, 'read': t2 - t1, 'first': first, 'rest': rest, 'rules': t4 - t3}))
"""
PHASE_NAMES = {
    "start": "interpreter start-up",
    "imports": "imports (rules, validators, YAML, CEL)",
    "read": "reading and parsing the YAML",
    "first": "first object of each kind: its schema read, validators built, CEL rules compiled",
    "rest": "every other object's schema validation",
    "rules": "every policy rule",
}


def lint_phases(folder: Path) -> dict[str, float]:
    """Seconds of each phase of one lint run in a fresh interpreter (medians of the rounds), plus the
    interpreter's own start-up."""
    runs = []
    for _ in range(ROUNDS):
        out = subprocess.run(
            [sys.executable, "-c", PHASES_CODE, str(folder)], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        runs.append({"start": time.perf_counter() - start, **json.loads(out)})
    return {name: statistics.median(r[name] for r in runs) for name in PHASE_NAMES}


# --- The section ---------------------------------------------------------------------------------


def section(samples: Path) -> tuple[list[str], bool]:
    if not CHECKOV.exists():
        return [
            "## `make lint` beside checkov",
            "",
            f"Not measured: {CHECKOV} is missing (`make checkov-venv`).",
        ], False
    version = subprocess.run([str(CHECKOV), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    results: dict[int, dict[str, Any]] = {}
    checkov_checks: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n in SIZES:
            folder = Path(tmp) / f"corpus-{n}"
            folder.mkdir()
            files = write_corpus(samples, n, folder)
            lint_runs, checkov_runs = [], []
            for _ in range(ROUNDS):  # alternating, so both see the same machine
                lint_runs.append(run_lint(folder))
                checkov_runs.append(run_checkov(folder))
            if n == SIZES[0]:
                checkov_checks = Counter(
                    str(c["check_id"]) + " " + str(c.get("check_name", "")) for c in checkov_runs[0][2]
                )
            results[n] = {
                "files": files,
                "lint": (statistics.median(r[0] for r in lint_runs), statistics.median(r[1] for r in lint_runs)),
                "checkov": (
                    statistics.median(r[0] for r in checkov_runs),
                    statistics.median(r[1] for r in checkov_runs),
                ),
                "lint_findings": len(lint_runs[0][2]),
                "checkov_findings": len(checkov_runs[0][2]),
            }
        phases = lint_phases(Path(tmp) / f"corpus-{SIZES[0]}")
        patterns_dir = Path(tmp) / "anti-patterns"
        patterns_dir.mkdir()
        rows, lint_share, checkov_share = catches(patterns_dir)
    ok = True
    lines = [
        "## `make lint` beside checkov",
        "",
        f"The same folders linted by `make lint ENV=prod FORMAT=json` and by {version and 'checkov ' + version} "
        "(`checkov -d <folder> " + " ".join(CHECKOV_ARGS) + "`), each in a fresh process as a user or CI runs "
        f"it, alternating, {ROUNDS} rounds, medians. The folders hold the upstream KubeRay samples cycled to "
        "exactly N objects (`tools/lint_vs_checkov.py`); `make lint` runs with its by-content caches off, so "
        "repeated samples cost it what distinct ones would. Peak memory is the tool process's maximum RSS "
        "(checkov's largest process where it forks).",
        "",
        "| manifests | files | make lint | checkov | speed-up | target | lint peak RSS | checkov peak RSS "
        "| lint findings | checkov failed checks |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, r in results.items():
        speedup = r["checkov"][0] / r["lint"][0]
        met = speedup >= TARGETS[n]
        ok = ok and met
        lines.append(
            f"| {n:,} | {r['files']} | {r['lint'][0]:.2f} s | {r['checkov'][0]:.2f} s | {speedup:.1f}x | "
            f">= {TARGETS[n]:g}x: {'met' if met else 'MISSED'} | {r['lint'][1] / 2**20:.0f} MiB | "
            f"{r['checkov'][1] / 2**20:.0f} MiB | {r['lint_findings']:,} | {r['checkov_findings']:,} |"
        )
    total = sum(phases.values())
    fixed = phases["start"] + phases["imports"] + phases["first"]
    per_manifest = (results[SIZES[-1]]["lint"][0] - results[SIZES[0]]["lint"][0]) / (SIZES[-1] - SIZES[0])
    lines += [
        "",
        f"### Where `make lint`'s time goes at {SIZES[0]} manifests",
        "",
        "One run in a fresh interpreter, each phase timed (medians of the rounds). The fixed part, paid once per "
        "run whatever the number of files, is the interpreter, the imports and the first object of each kind; "
        f"at {SIZES[0]} manifests it is {fixed:.2f} s of {total:.2f} s ({fixed / total:.0%}), and each further "
        f"manifest costs about {per_manifest * 1000:.1f} ms (from the two folder sizes), so the speed-up grows "
        "with the folder. "
        + " ".join(
            f"At {n:,} manifests the target needs `make lint` within {results[n]['checkov'][0] / TARGETS[n]:.2f} s "
            f"(checkov's {results[n]['checkov'][0]:.2f} s / {TARGETS[n]:g}); it takes {results[n]['lint'][0]:.2f} s."
            for n in SIZES
            if results[n]["checkov"][0] / results[n]["lint"][0] < TARGETS[n]
        )
        + " What is left is Python's: importing the rules, validators and celpy, and building each kind's "
        "validators and CEL programs at its first object (the CEL interpreter evaluates a rule in about a "
        "millisecond, the Gateway API's dozens included); the per-object work after that is small.",
        "",
        "| phase | seconds | share |",
        "| --- | --- | --- |",
        *[f"| {PHASE_NAMES[name]} | {seconds:.2f} | {seconds / total:.0%} |" for name, seconds in phases.items()],
        "",
        f"### Ray anti-patterns caught ({len(rows)} violating fixtures of {len({r[1] for r in rows})} rules)",
        "",
        "Every violating fixture of the policy tests (a golden RayCluster, RayJob or RayService changed to break "
        "exactly one rule) in one folder beside the goldens, linted with prod's levels and the opt-in rules on "
        f"(`image-digest`). `make lint` catches {lint_share:.0%}, checkov {checkov_share:.0%}: a checkov check "
        "counts only when it fails on the violating object and passes on the golden one of the same kind. "
        "`make lint` runs as the checks group does (no Ray): a fixture only Ray Serve's own models refuse (an "
        "import path without a module) is caught where Ray is installed (`make test`, the dev group).",
        "",
        "| fixture | rule | kind | make lint | checkov |",
        "| --- | --- | --- | --- | --- |",
        *[
            f"| {stem} | `{rule}` | {kind} | {'caught' if caught else 'missed'} | {', '.join(extra) or 'missed'} |"
            for stem, rule, kind, caught, extra in rows
        ],
        "",
        f"### What checkov reports on the {SIZES[0]} upstream manifests",
        "",
        "Generic Kubernetes hygiene (every check it failed, with its count); none of it reads Ray's own fields "
        "(rayStartParams, group replicas, serve configs, GCS fault tolerance, Kueue queues).",
        "",
        "| checkov check | failed |",
        "| --- | --- |",
        *[f"| {check} | {count} |" for check, count in checkov_checks.most_common()],
    ]
    return lines, ok and lint_share > checkov_share


if __name__ == "__main__":  # python -m tools.lint_vs_checkov: this section alone
    from tools.bench import SAMPLES

    text, met = section(SAMPLES)
    print("\n".join(text))
    sys.exit(0 if met else 1)
