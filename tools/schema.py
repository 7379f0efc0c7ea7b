"""Strict validation of Kubernetes objects against the real upstream schemas, offline.

- Core kinds: the strict schemas shipped with ``kubernetes-validate`` (unknown fields fail).
- Custom resources: ``jsonschema`` against the served version's ``openAPIV3Schema`` from the
  project's pinned schemas (``schemas/``, see ``tools/schema_store.py``; a folder of other CRDs can
  take precedence: ``--crds`` or ``$KUBERAY_PLATFORM_CRDS``), made as strict as the API
  server's field validation: ``additionalProperties: false`` wherever a schema lists properties and
  does not preserve unknown fields. Before validating, the object is prepared as the server would:
  ``null`` dropped where the schema is not nullable, schema ``default``s filled in. The CR's
  ``metadata`` is checked against the real ObjectMeta schema.
- The CRDs' CEL rules (``x-kubernetes-validations``) are evaluated with ``cel-python`` as the API
  server would on create; transition rules (those reading ``oldSelf``) only apply to updates and
  are left out.
- A kind with no schema at all is an error, never a skip.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from importlib import metadata
from importlib.resources import files
from pathlib import Path
from typing import Any, BinaryIO

import celpy
import jsonschema
import jsonschema_rs
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError
from referencing import Registry, Resource

from components.manifests.ray_objects import object_ref
from tools.schema_store import REPO_ROOT, Crd, SchemaStore, load_store, override_dir, yaml_load_all

__all__ = [
    "REPO_ROOT",
    "SchemaError",
    "Validator",
    "cel_violations",
    "custom_resource_errors",
    "custom_resource_schema",
    "prepare",
    "yaml_load_all",
]


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


@dataclass(frozen=True)
class SchemaError:
    ref: str
    """``Kind/namespace/name`` of the object."""
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.ref}: {self.path or '<root>'}: {self.message}"


# --- Core kinds (kubernetes-validate's strict schemas, cached) --------------------------------


def _core_schema_dir(kubernetes_version: str) -> Path:
    root = Path(str(files("kubernetes_validate").joinpath("kubernetes-json-schema")))
    wanted = tuple(int(x) for x in kubernetes_version.split("."))
    available = sorted(
        (tuple(int(x) for x in m.group(1).split(".")[:2]), p)
        for p in root.iterdir()
        if (m := re.match(r"^v(\d+\.\d+)\.\d+-local-strict$", p.name))
    )
    candidates = [p for v, p in available if v <= wanted]
    if not candidates:
        raise ValueError(f"no Kubernetes schemas for {kubernetes_version} (oldest is {available[0][1].name})")
    return candidates[-1]


@cache
def _core_registry(schema_dir: Path) -> Registry:
    definitions = json.loads((schema_dir / "_definitions.json").read_text())
    registry: Registry = Registry().with_resource("/api/_definitions.json", Resource.from_contents(definitions))
    return registry.crawl()


_CORE_BASE = "https://kubernetes.invalid/api/"
"""Base URI of the core schemas for jsonschema-rs: their ``$ref``s are ``/api/_definitions.json#...``."""


@cache
def _core_registry_rs(schema_dir: Path) -> jsonschema_rs.Registry:
    definitions = json.loads((schema_dir / "_definitions.json").read_text())
    return jsonschema_rs.Registry([(f"{_CORE_BASE}_definitions.json", definitions)])


@dataclass(frozen=True)
class _Checker:
    """One schema, two validators: jsonschema-rs answers "valid?" fast (most objects are); only an
    invalid object is walked again by ``jsonschema``, whose messages and paths the reports use. That
    one is built at the first invalid object: a core kind's needs the whole definitions file crawled
    (a tenth of a second each run, for nothing when every object is valid)."""

    fast: Any
    """None where jsonschema-rs refuses the schema: its ECMA-262 regex check rejects RE2's inline
    flags (``(?i)``), which the API server and Python accept."""
    make_full: Callable[[], jsonschema.protocols.Validator]

    @cached_property
    def full(self) -> jsonschema.protocols.Validator:
        return self.make_full()

    def errors(self, ref: str, instance: Any) -> list[SchemaError]:
        if self.fast is not None and self.fast.is_valid(instance):
            return []
        out = []
        for err in sorted(self.full.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path))):
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path).lstrip(".")
            out.append(SchemaError(ref, path, _message(err)))
        return out


@cache
def _core_validator(schema_dir: Path, kind: str, api_version: str) -> _Checker | None:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    path = schema_dir / f"{kind.lower()}-{group_version}.json"
    if not path.exists():
        return None
    schema = json.loads(path.read_text())
    fast = jsonschema_rs.Draft202012Validator(
        {**schema, "$id": f"{_CORE_BASE}{path.name}"}, registry=_core_registry_rs(schema_dir), validate_formats=False
    )
    return _Checker(fast, lambda: jsonschema.Draft202012Validator(schema, registry=_core_registry(schema_dir)))


# --- Custom resources -------------------------------------------------------------------------


def _strict(schema: Any) -> Any:
    """The API server's strict field validation and nullability, expressed in JSON Schema."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items() if k not in ("properties", "additionalProperties")}
    if "properties" in schema:
        out["properties"] = {k: _strict(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = _strict(schema["additionalProperties"])
    elif "additionalProperties" in schema:
        out["additionalProperties"] = schema["additionalProperties"]
    elif "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if schema.get("nullable") and isinstance(schema.get("type"), str):
        out["type"] = [schema["type"], "null"]
    if isinstance(schema.get("pattern"), str):
        out["pattern"] = python_pattern(schema["pattern"])
    return out


_LATE_FLAGS = re.compile(r"^\^(\(\?[aiLmsux]+\))")


def python_pattern(pattern: str) -> str:
    """A CRD ``pattern`` (Go RE2, as the API server runs it) for Python's ``re``, which wants inline
    flags first: ``^(?i)(abort|warn)?$`` (prometheus-operator, Kueue) becomes ``(?i)^(abort|warn)?$``."""
    return _LATE_FLAGS.sub(r"\1^", pattern)


def prepare(instance: Any, schema: Mapping[str, Any]) -> Any:
    """Drop non-nullable nulls and fill defaults, as the API server does before validating."""
    if isinstance(instance, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, value in instance.items():
            sub = props.get(key) or (extra if isinstance(extra, Mapping) else {})
            if value is None and not sub.get("nullable"):
                continue
            out[key] = prepare(value, sub)
        for key, sub in props.items():
            if key not in out and "default" in sub:
                out[key] = prepare(copy.deepcopy(sub["default"]), sub)
        return out
    if isinstance(instance, list):
        items = schema.get("items")
        return [prepare(v, items if isinstance(items, Mapping) else {}) for v in instance]
    return instance


@cache
def _cr_validator(crd: Crd, version: str) -> tuple[_Checker, _CelNode | None]:
    """The strict checker of one served version, and the tree of its CEL rules."""
    original = crd.versions[version]["schema"]
    schema = _strict(original)
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}  # checked against ObjectMeta
    try:
        fast = jsonschema_rs.Draft4Validator(schema, validate_formats=False)
    except jsonschema_rs.ValidationError:
        fast = None
    return _Checker(fast, lambda: jsonschema.Draft4Validator(schema)), _cel_tree(original)


class Validator:
    """Validates objects for one Kubernetes minor version and one CRD directory."""

    def __init__(self, kubernetes_version: str, crd_dir: Path | None = None) -> None:
        """``crd_dir``: a folder of upstream CRDs that take precedence over the project's schemas
        (default ``$KUBERAY_PLATFORM_CRDS``, else none)."""
        self.kubernetes_version = kubernetes_version
        self.core_dir = _core_schema_dir(kubernetes_version)
        self.store = load_store(crd_dir or override_dir())

    def has_schema(self, api_version: str, kind: str) -> bool:
        return _core_validator(self.core_dir, kind, api_version) is not None or self._crd(api_version, kind) is not None

    def _crd(self, api_version: str, kind: str) -> tuple[Crd, str] | None:
        return custom_resource_schema(self.store, api_version, kind)

    def describe(self) -> list[str]:
        """Which schemas this validator uses, one line per source."""
        return [
            f"Kubernetes {self.kubernetes_version} core kinds: kubernetes-validate "
            f"{_package_version('kubernetes-validate')} ({self.core_dir.name})",
            *self.store.describe(),
        ]

    def validate(self, obj: Mapping[str, Any]) -> list[SchemaError]:
        ref = object_ref(obj)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return [SchemaError(ref, "", "apiVersion and kind must be strings")]
        core = _core_validator(self.core_dir, kind, api_version)
        if core is not None:
            return core.errors(ref, obj)
        found = self._crd(api_version, kind)
        if found is None:
            where = "the project's schemas" + (f" or {self.store.override}" if self.store.override else "")
            return [
                SchemaError(
                    ref, "", f"no schema for {api_version} {kind} in Kubernetes {self.kubernetes_version} or {where}"
                )
            ]
        errors = custom_resource_errors(*found, obj)
        meta_check = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj.get("metadata")}
        meta_validator = _core_validator(self.core_dir, "ConfigMap", "v1")
        assert meta_validator is not None
        errors += [e for e in meta_validator.errors(ref, meta_check) if e.path.startswith("metadata")]
        return errors


def custom_resource_errors(crd: Crd, version: str, obj: Mapping[str, Any]) -> list[SchemaError]:
    """A custom resource against its CRD version: defaults filled and nulls dropped as the API
    server does, then the strict schema, then (if structurally valid) the CEL rules. Its
    ``metadata`` is left to the ObjectMeta check of :class:`Validator`."""
    ref = object_ref(obj)
    schema = crd.versions[version]["schema"]
    checker, rules = _cr_validator(crd, version)
    prepared = prepare(dict(obj), schema)
    errors = checker.errors(ref, prepared)
    if not errors and rules is not None:  # CEL rules assume a structurally valid object, as the API server's do
        errors += [SchemaError(ref, path, message) for path, message in cel_violations(rules, prepared)]
    return errors


def custom_resource_schema(store: SchemaStore, api_version: str, kind: str) -> tuple[Crd, str] | None:
    """The CRD and served version of ``apiVersion``/``kind`` in ``store``, or None."""
    if "/" not in api_version:
        return None
    group, version = api_version.split("/", 1)
    crd = store.crd(group, kind)
    if crd is None or version not in crd.versions:
        return None
    return crd, version


# --- CEL (x-kubernetes-validations) -----------------------------------------------------------


def _cel_parser_file() -> Path:
    """The saved parser in the project's cache (the toolchain's; safe to delete), keyed by celpy's
    grammar and the celpy and lark versions. (Only the parser: unpickling a CRD's parsed rules,
    position metadata and all, takes longer than parsing them.)"""
    from tools.toolchain import cache_root

    key = hashlib.sha256((files("celpy") / "cel.lark").read_bytes())
    key.update(f"\0{_package_version('cel-python')}\0{_package_version('lark')}".encode())
    return cache_root() / "cel" / f"parser-{key.hexdigest()[:16]}.pickle"


def _save(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write a cache file whole or not at all (a concurrent run reads the old file or the new one);
    a read-only home only costs the next run the time again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        with partial.open("wb") as f:
            write(f)
        partial.replace(path)
    except OSError:
        pass


@cache
def _cel_parser() -> None:
    """celpy's CEL parser, its LALR tables read from the cache (``Lark.save``/``Lark.load``, lark's
    own way of caching a parser) instead of computed: a third of a second at each run's first CEL
    rule. Computed and saved by celpy itself where the cache is missing or unreadable."""
    from celpy.celparser import CELParser
    from lark import Lark

    path = _cel_parser_file()
    try:
        with path.open("rb") as f:
            CELParser.CEL_PARSER = Lark.load(f)
        return
    except Exception:  # missing, truncated or from another version: build it as celpy does
        CELParser.CEL_PARSER = None
    CELParser()
    built = CELParser.CEL_PARSER
    assert built is not None
    _save(path, built.save)


@cache
def _cel_program(rule: str) -> Any:
    _cel_parser()
    env = celpy.Environment()
    return env.program(env.compile(rule))


@dataclass(frozen=True)
class _CelNode:
    """The part of a schema that leads to CEL rules: the walk over an object visits only these."""

    rules: tuple[Mapping[str, Any], ...]
    properties: Mapping[str, _CelNode]
    declared: frozenset[str]
    """Every property the schema names (``additionalProperties`` applies to the others only)."""
    additional: _CelNode | None
    items: _CelNode | None


def _cel_tree(schema: Mapping[str, Any]) -> _CelNode | None:
    """The schema's CEL rules (transition rules, which read ``oldSelf``, left out: they only apply to
    updates) as a tree, or None when there are none below ``schema``."""
    rules = tuple(r for r in schema.get("x-kubernetes-validations") or [] if "oldSelf" not in r.get("rule", ""))
    props = {}
    for key, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping) and (node := _cel_tree(sub)) is not None:
            props[key] = node
    extra = schema.get("additionalProperties")
    additional = _cel_tree(extra) if isinstance(extra, Mapping) else None
    items = _cel_tree(schema["items"]) if isinstance(schema.get("items"), Mapping) else None
    if not (rules or props or additional or items):
        return None
    return _CelNode(rules, props, frozenset(schema.get("properties") or ()), additional, items)


@lru_cache(maxsize=8192)
def _cel_problem(rule: str, value_json: str) -> str | None:
    """:func:`_cel_evaluate` memoised per (rule, value): CEL is pure, and the small values rules judge
    (a ``managedBy`` string, a ``deletionStrategy``) repeat across a fleet's manifests, while
    cel-python's interpreter costs about a millisecond a call."""
    return _cel_evaluate(rule, json.loads(value_json))


def _cel_evaluate(rule: str, value: Any) -> str | None:
    """None when ``rule`` holds for the value, ``""`` when it fails, else why it could not be evaluated."""
    try:
        result = _cel_program(rule).evaluate({"self": json_to_cel(value)})
    except Exception as exc:
        return f"CEL rule could not be evaluated ({type(exc).__name__}: {exc}): {rule}"
    if isinstance(result, CELEvalError):
        return f"CEL rule could not be evaluated ({result}): {rule}"
    return None if bool(result) else ""


def cel_violations(node: _CelNode, instance: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, message) of every CEL rule the instance breaks, walking the rule tree and the instance
    together."""
    for rule in node.rules:
        text = rule.get("rule", "")
        try:
            problem = _cel_problem(text, json.dumps(instance, sort_keys=True))
        except (TypeError, ValueError):  # not JSON (a YAML date, mixed key types): evaluate unmemoised
            problem = _cel_evaluate(text, instance)
        if problem == "":
            yield path, str(rule.get("message") or f"failed CEL rule: {text}")
        elif problem is not None:
            yield path, problem
    if isinstance(instance, Mapping) and (node.properties or node.additional):
        for key, value in instance.items():
            sub = node.properties.get(key) if key in node.declared else node.additional
            if sub is not None:
                yield from cel_violations(sub, value, f"{path}.{key}" if path else str(key))
    elif isinstance(instance, list) and node.items is not None:
        for i, item in enumerate(instance):
            yield from cel_violations(node.items, item, f"{path}[{i}]")


def _message(err: jsonschema.ValidationError) -> str:
    msg = str(err.message)
    return msg if len(msg) <= 300 else msg[:297] + "..."
