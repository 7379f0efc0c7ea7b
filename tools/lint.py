"""``make lint ENV=<env> FILES="..."``: schema validation and the policy rules over any Kubernetes/KubeRay YAML.

Reads files and folders (``.yaml``, ``.yml``, ``.json``), multi-document files and ``kind: List``.
Every object is first validated as ``make preview`` validates (strict schemas, CEL rules; the
project's pinned schemas, or ``--crds``): each schema error is a mandatory finding of policy
``schema`` naming the field path; a kind with no schema is an advisory ``schema`` finding that says
it was not validated. Then the policy rules judge all objects together.
Findings print as ``path: Kind/name: rule-name: message`` (or JSON with ``--format json``).
Exit codes (of ``python -m tools lint``): 0 no mandatory violation, 1 mandatory violations,
2 input that cannot be linted (unreadable, not YAML, not Kubernetes objects, over 10 MiB, alias
bombs): one line per such file on stderr, and the other files are still linted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from components.errors import ConfigError
from components.upstream import DEFAULT_KUBERNETES_VERSION
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


MAX_FILE_BYTES = 10 * 2**20
"""Bigger files are refused unread: PyYAML holds a document's whole tree (tens of times the text)."""
MAX_EXPANDED_NODES = 1_000_000
"""Documents whose aliases expand beyond this many nodes are refused (an alias bomb: nine nested
aliases of nine each are 387 million nodes for anything that walks the tree)."""


MAX_DEPTH = 100
"""Deeper documents are refused: Kubernetes objects nest a few dozen levels at most, and the schema
validator and the rules walk trees recursively."""


def _shape(text: str) -> tuple[int, int]:
    """(nodes with every alias expanded, deepest nesting) of a YAML stream, from the parser's events
    without building the tree; stops early once either is past its limit."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    sizes: dict[str, int] = {}
    open_nodes: list[list[Any]] = []  # [anchor, expanded size] of each open sequence or mapping
    total = deepest = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            open_nodes.append([event.anchor, 1])
            deepest = max(deepest, len(open_nodes))
            if deepest > MAX_DEPTH:
                break
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, size = open_nodes.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, size = None, sizes.get(event.anchor or "", 1)
        else:
            continue
        if anchor:
            sizes[anchor] = size
        if open_nodes:
            open_nodes[-1][1] += size
        else:
            total += size
        if total > MAX_EXPANDED_NODES or (open_nodes and open_nodes[-1][1] > MAX_EXPANDED_NODES):
            return MAX_EXPANDED_NODES + 1, deepest
    return total, deepest


def _deeper_than(docs: list[Any], limit: int) -> bool:
    """Whether any document nests more than ``limit`` mappings and lists (walked without recursion)."""
    stack = [(doc, 1) for doc in docs if isinstance(doc, dict | list)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack += [(child, depth + 1) for child in children if isinstance(child, dict | list)]
    return False


def read_objects(files: list[Path]) -> tuple[list[Located], list[str]]:
    """Every object of ``files``, and one line per file (or document) that cannot be linted: the
    other files are still read and linted."""
    found: list[Located] = []
    problems = []
    for path in files:
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                problems.append(f"{path}: {size / 2**20:.0f} MiB is over the lint limit of 10 MiB; split it")
                continue
            text = path.read_text()
            # Aliases (which need an anchor, "&") can make a small file a huge tree: measured from the
            # parser's events before any is built. Without one, the tree is as big as the text.
            nodes, depth = _shape(text) if "&" in text else (0, 0)
            if nodes > MAX_EXPANDED_NODES:
                problems.append(
                    f"{path}: its YAML aliases expand to over {MAX_EXPANDED_NODES:,} nodes (an alias bomb): refused"
                )
                continue
            docs = [] if depth > MAX_DEPTH else list(yaml_load_all(text))
            if depth > MAX_DEPTH or _deeper_than(docs, MAX_DEPTH):
                problems.append(f"{path}: nested over {MAX_DEPTH} levels deep: refused (not a Kubernetes object)")
                continue
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
            problems.append(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}")
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read: {exc}")
            continue
        except RecursionError:
            problems.append(f"{path}: nested too deeply to read")
            continue
        for number, doc in enumerate(docs, start=1):
            if doc is None:  # an empty document (or file): nothing to lint
                continue
            if not isinstance(doc, Mapping):
                problems.append(f"{path}: document {number}: not a Kubernetes object (a YAML {type(doc).__name__})")
            elif "kind" not in doc:
                problems.append(f"{path}: document {number}: no kind (not a Kubernetes object)")
            else:
                found += [Located(str(path), obj) for obj in _objects([doc])]
    return found, problems


def load_objects(files: list[Path]) -> list[Located]:
    """Every object of ``files``; ConfigError naming each file that cannot be linted."""
    found, problems = read_objects(files)
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
    (default ``policies/config/<env>.json``). Ordered by file and object. ConfigError when a file
    cannot be linted (``lint_files`` reports those beside the findings of the others)."""
    findings, problems = lint_files(paths, environment, policy_config, kubernetes_version, crd_dir)
    if problems:
        raise ConfigError(problems)
    return findings


def lint_files(
    paths: list[str],
    environment: str,
    policy_config: str | None = None,
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
    crd_dir: Path | None = None,
) -> tuple[list[tuple[str, Violation]], list[str]]:
    """(findings over every object that could be read, one line per file that could not)."""
    config = resolve(policy_config, environment)
    located, problems = read_objects(expand(paths))
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
    return [(located[i].path, v) for i, v in found], problems


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
