"""``make lint ENV=<env> FILES="..."``: schema validation and the policy rules over any Kubernetes/KubeRay YAML.

Reads files and folders (``.yaml``, ``.yml``, ``.json``), multi-document files and ``kind: List``.
Every object is first validated as ``make preview`` validates (strict schemas, CEL rules; the
project's pinned schemas, or ``--crds``): each schema error is a mandatory finding of policy
``schema`` naming the field path; a kind with no schema is an advisory ``schema`` finding that says
it was not validated. Then the policy rules judge all objects together.
Findings print as ``path: Kind/name: rule-name: message`` (or JSON with ``--format json``).
Exit codes (of ``python -m tools lint``): 0 no mandatory violation, 1 mandatory violations,
2 unreadable input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from components.errors import ConfigError
from components.spec.platform import DEFAULT_KUBERNETES_VERSION
from policies.rules.base import SCHEMA_POLICY, RuleContext, Violation, resource_type
from policies.rules.engine import evaluate_resources, violation
from tools.policy_config import resolve
from tools.schema import Validator, yaml_load_all

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


def lint(
    paths: list[str],
    environment: str,
    policy_config: str | None = None,
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
    crd_dir: Path | None = None,
) -> list[tuple[str, Violation]]:
    """Findings over every object of ``paths``: schema findings per object, then the rules judging
    all objects together (stack rules see all of them), with the levels of ``policy_config``
    (default ``policies/config/<env>.json``). Ordered by file and object."""
    config = resolve(policy_config, environment)
    located = load_objects(expand(paths))
    try:
        validator = Validator(kubernetes_version, crd_dir)
    except ValueError as exc:  # a version kubernetes-validate has no schemas for
        raise ConfigError([f"--kubernetes-version {kubernetes_version}: {exc}"]) from None
    level = str(config.get(SCHEMA_POLICY, {}).get("enforcementLevel") or "mandatory")
    found = []
    if level != "disabled":
        found = [(i, v) for i, item in enumerate(located) for v in schema_findings(validator, item.obj, level)]
    resources = [(resource_type(item.obj), item.obj) for item in located]
    found += evaluate_resources(resources, RuleContext(environment=environment), config)
    found.sort(key=lambda pair: pair[0])  # stable: an object's schema findings come before its rules'
    return [(located[i].path, v) for i, v in found]


def schema_findings(
    validator: Validator, obj: Mapping[str, Any], level: Literal["mandatory", "advisory"] | str = "mandatory"
) -> list[Violation]:
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    rtype = resource_type(obj)
    if isinstance(kind, str) and isinstance(api_version, str) and not validator.has_schema(api_version, kind):
        message = (
            f"not validated: no schema for {api_version} {kind} in Kubernetes {validator.kubernetes_version} "
            "or the project's schemas (pass --crds <folder> with its CRD to validate it)"
        )
        return [violation(SCHEMA_POLICY, "advisory", obj, rtype, message)]
    enforcement = "advisory" if level == "advisory" else "mandatory"
    return [
        violation(SCHEMA_POLICY, enforcement, obj, rtype, f"{e.path or '<root>'}: {e.message}")
        for e in validator.validate(obj)
    ]


def render(findings: list[tuple[str, Violation]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"violations": [v.to_json() for _, v in findings]}, indent=2)
    return "\n".join(f"{path}: {v.kind}/{v.name}: {v.policy}: {v.message} [{v.enforcement}]" for path, v in findings)
