"""``make lint ENV=<env> FILES="..."``: the policy rules over any Kubernetes/KubeRay YAML.

Reads files and folders (``.yaml``, ``.yml``, ``.json``), multi-document files and ``kind: List``.
Findings print as ``path: Kind/name: rule-name: message`` (or JSON with ``--format json``).
Exit codes (of ``python -m tools lint``): 0 no mandatory violation, 1 mandatory violations,
2 unreadable input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.errors import ConfigError
from policies.rules.base import RuleContext, Violation, resource_type
from policies.rules.engine import evaluate_resources
from tools.policy_config import resolve
from tools.schema import yaml_load_all

SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Located:
    path: str
    obj: Mapping[str, Any]


def expand(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    problems = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            problems.append(f"{raw}: no such file or folder")
    if problems:
        raise ConfigError(problems)
    return files


def load_objects(files: list[Path]) -> list[Located]:
    found: list[Located] = []
    problems = []
    for path in files:
        try:
            docs = list(yaml_load_all(path.read_text()))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
            problems.append(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}")
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read: {exc}")
            continue
        found += [Located(str(path), obj) for obj in _objects(docs)]
    if problems:
        raise ConfigError(problems)
    return found


def _objects(docs: list[Any]) -> Iterator[Mapping[str, Any]]:
    for doc in docs:
        if not isinstance(doc, Mapping):
            continue
        if isinstance(doc.get("kind"), str) and doc["kind"].endswith("List") and isinstance(doc.get("items"), list):
            yield from _objects(doc["items"])
        elif "kind" in doc:
            yield doc


def lint(paths: list[str], environment: str, policy_config: str | None = None) -> list[tuple[str, Violation]]:
    """Findings over every object of ``paths`` judged together (stack rules see all of them), with
    the levels of ``policy_config`` (default ``policies/config/<env>.json``)."""
    config = resolve(policy_config, environment)
    located = load_objects(expand(paths))
    resources = [(resource_type(item.obj), item.obj) for item in located]
    found = evaluate_resources(resources, RuleContext(environment=environment), config)
    return [(located[i].path, v) for i, v in found]


def render(findings: list[tuple[str, Violation]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"violations": [v.to_json() for _, v in findings]}, indent=2)
    return "\n".join(f"{path}: {v.kind}/{v.name}: {v.policy}: {v.message} [{v.enforcement}]" for path, v in findings)
