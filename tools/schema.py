"""Strict validation of Kubernetes objects against the real upstream schemas, offline.

- Core kinds: the strict schemas shipped with ``kubernetes-validate`` (unknown fields fail).
- Custom resources: ``jsonschema`` against the served version's ``openAPIV3Schema`` of the CRDs in
  the CRD directory (``../shared/crds`` or ``$KUBERAY_PLATFORM_CRDS``), made as strict as the API
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
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError
from importlib_resources import files
from referencing import Registry, Resource

from components.manifests.ray_objects import object_ref

REPO_ROOT = Path(__file__).resolve().parent.parent
CRDS_ENV = "KUBERAY_PLATFORM_CRDS"
_CRD_HEAD = re.compile(r"^kind:\s*CustomResourceDefinition\s*$", re.M)


def default_crd_dir() -> Path:
    """``$KUBERAY_PLATFORM_CRDS`` if set, else ``../shared/crds`` beside the repository."""
    env = os.environ.get(CRDS_ENV)
    return Path(env) if env else REPO_ROOT.parent / "shared" / "crds"


def yaml_load_all(text: str) -> Iterator[Any]:
    return yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


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


@cache
def _core_validator(schema_dir: Path, kind: str, api_version: str) -> jsonschema.protocols.Validator | None:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    path = schema_dir / f"{kind.lower()}-{group_version}.json"
    if not path.exists():
        return None
    schema = json.loads(path.read_text())
    return jsonschema.Draft202012Validator(schema, registry=_core_registry(schema_dir))


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
    return out


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


class CrdIndex:
    """The CRDs of a directory, indexed by (apiVersion, kind); each file parsed on first use."""

    def __init__(self, crd_dir: Path) -> None:
        if not crd_dir.is_dir():
            raise FileNotFoundError(
                f"CRD directory {crd_dir} not found; set {CRDS_ENV} to the folder holding the upstream CRDs"
            )
        self.crd_dir = crd_dir
        self._files: dict[tuple[str, str], Path] = {}
        for path in sorted(crd_dir.rglob("*.y*ml")):
            with path.open() as fh:
                head = fh.read(16384)
            if not _CRD_HEAD.search(head):
                continue
            group = re.search(r"^  group:\s*(\S+)", head, re.M)
            kind = re.search(r"^    kind:\s*(\S+)", head, re.M)
            if group and kind:
                self._files[(group.group(1), kind.group(1))] = path
            else:  # unusual layout: parse it now
                for doc in yaml_load_all(path.read_text()):
                    if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                        self._files[(doc["spec"]["group"], doc["spec"]["names"]["kind"])] = path

    def kinds(self) -> list[tuple[str, str]]:
        return sorted(self._files)

    def schema(self, api_version: str, kind: str) -> tuple[dict[str, Any], jsonschema.protocols.Validator] | None:
        """(openAPIV3Schema, strict validator) of the served version, or None if unknown."""
        if "/" not in api_version:
            return None
        group, version = api_version.split("/", 1)
        path = self._files.get((group, kind))
        if path is None or _served_schema(path, group, kind, version) is None:
            return None
        schema, _deprecated = _served_schema(path, group, kind, version)  # type: ignore[misc]
        return schema, _cr_validator(path, group, kind, version)


@cache
def _served_schema(path: Path, group: str, kind: str, version: str) -> tuple[dict[str, Any], bool] | None:
    for doc in _parsed(path):
        if not (isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"):
            continue
        if doc["spec"]["group"] != group or doc["spec"]["names"]["kind"] != kind:
            continue
        for v in doc["spec"]["versions"]:
            if v["name"] == version and v.get("served", False):
                return v["schema"]["openAPIV3Schema"], bool(v.get("deprecated", False))
    return None


@cache
def _parsed(path: Path) -> list[Any]:
    return list(yaml_load_all(path.read_text()))


@cache
def _cr_validator(path: Path, group: str, kind: str, version: str) -> jsonschema.protocols.Validator:
    found = _served_schema(path, group, kind, version)
    assert found is not None
    schema = _strict(found[0])
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}  # checked against ObjectMeta
    return jsonschema.Draft4Validator(schema)


class Validator:
    """Validates objects for one Kubernetes minor version and one CRD directory."""

    def __init__(self, kubernetes_version: str, crd_dir: Path | None = None) -> None:
        self.kubernetes_version = kubernetes_version
        self.core_dir = _core_schema_dir(kubernetes_version)
        self.crds = CrdIndex(crd_dir or default_crd_dir())

    def validate(self, obj: Mapping[str, Any]) -> list[SchemaError]:
        ref = object_ref(obj)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return [SchemaError(ref, "", "apiVersion and kind must be strings")]
        core = _core_validator(self.core_dir, kind, api_version)
        if core is not None:
            return self._errors(ref, core, obj)
        found = self.crds.schema(api_version, kind)
        if found is None:
            return [
                SchemaError(
                    ref,
                    "",
                    f"no schema for {api_version} {kind} in Kubernetes {self.kubernetes_version} "
                    f"or in {self.crds.crd_dir}",
                )
            ]
        schema, validator = found
        prepared = prepare(dict(obj), schema)
        errors = self._errors(ref, validator, prepared)
        if not errors:  # CEL rules assume a structurally valid object, as the API server's do
            errors += [SchemaError(ref, path, message) for path, message in cel_violations(schema, prepared)]
        meta_check = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj.get("metadata")}
        meta_validator = _core_validator(self.core_dir, "ConfigMap", "v1")
        assert meta_validator is not None
        errors += [e for e in self._errors(ref, meta_validator, meta_check) if e.path.startswith("metadata")]
        return errors

    @staticmethod
    def _errors(ref: str, validator: jsonschema.protocols.Validator, instance: Any) -> list[SchemaError]:
        out = []
        for err in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path))):
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path).lstrip(".")
            out.append(SchemaError(ref, path, _message(err)))
        return out


# --- CEL (x-kubernetes-validations) -----------------------------------------------------------


@cache
def _cel_program(rule: str) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(rule))


def cel_violations(schema: Mapping[str, Any], instance: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, message) of every CEL rule the instance breaks, walking schema and instance together."""
    for rule in schema.get("x-kubernetes-validations") or []:
        text = rule.get("rule", "")
        if "oldSelf" in text:
            continue  # a transition rule: only meaningful on update
        try:
            result = _cel_program(text).evaluate({"self": json_to_cel(instance)})
        except Exception as exc:
            yield path, f"CEL rule could not be evaluated ({type(exc).__name__}: {exc}): {text}"
            continue
        if isinstance(result, CELEvalError):
            yield path, f"CEL rule could not be evaluated ({result}): {text}"
        elif not bool(result):
            yield path, str(rule.get("message") or f"failed CEL rule: {text}")
    if isinstance(instance, Mapping):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, value in instance.items():
            sub = props.get(key) or (extra if isinstance(extra, Mapping) else None)
            if isinstance(sub, Mapping):
                yield from cel_violations(sub, value, f"{path}.{key}" if path else str(key))
    elif isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(instance):
            yield from cel_violations(schema["items"], item, f"{path}[{i}]")


def _message(err: jsonschema.ValidationError) -> str:
    msg = str(err.message)
    return msg if len(msg) <= 300 else msg[:297] + "..."
