"""``make stack-schema``: the JSON Schema of a stack file and the reference of every key, generated
from the spec models (``components.spec``), so editors validate and complete
``stacks/Pulumi.<stack>.yaml`` and the docs never drift from the code.

- ``stacks/stack.schema.json``: JSON Schema (draft 2020-12) of the whole stack file; each stack file
  names it in its first line (``# yaml-language-server: $schema=stack.schema.json``, read by the YAML
  language server in VS Code, Neovim, JetBrains and others).
- ``docs/reference.md``: every key of ``kuberay-platform:platform`` with its type, default and
  description (the field's docstring).
- ``docs/environments.md``: what dev, staging and prod each choose, read from the shipped stacks.

``--check`` compares instead of writing (exit 1 on drift); a test does the same.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
import types
import typing
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from components.spec import CONFIG_KEY, PlatformSpec, parse_platform

REPO_ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = REPO_ROOT / "stacks" / "stack.schema.json"
REFERENCE_FILE = REPO_ROOT / "docs" / "reference.md"
ENVIRONMENTS_FILE = REPO_ROOT / "docs" / "environments.md"
PROJECT = "kuberay-platform"


def _strip_titles(node: Any) -> Any:
    """pydantic's generated ``title``s ("Ownoperator") help no one; property names stay."""
    if isinstance(node, dict):
        return {
            k: (_strip_titles(v) if k != "properties" else {p: _strip_titles(s) for p, s in v.items()})
            for k, v in node.items()
            if k != "title"
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


@cache
def field_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of ``model`` and its bases (what pydantic's
    ``use_attribute_docstrings`` reads, read here only: the models do not pay for it at import)."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, body.body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def description(model: type[BaseModel], name: str) -> str | None:
    return model.model_fields[name].description or field_docs(model).get(name)


def _spec_models(model: type[BaseModel], seen: set[type[BaseModel]]) -> Iterator[type[BaseModel]]:
    if model in seen:
        return
    seen.add(model)
    yield model
    for field in model.model_fields.values():
        for _, nested in _models(field.annotation):
            yield from _spec_models(nested, seen)


def _describe_fields(platform: dict[str, Any], defs: dict[str, Any]) -> None:
    """Each property's description from its field's docstring, in the generated JSON Schema."""
    for model in _spec_models(PlatformSpec, set()):
        node = platform if model is PlatformSpec else defs[model.__name__]
        # A model with a shorthand (``auth: token``) is an anyOf of the shorthand and the object.
        (properties,) = [n["properties"] for n in (node, *node.get("anyOf", [])) if "properties" in n]
        for name, field in model.model_fields.items():
            text = description(model, name)
            if text:
                properties[field.alias or name]["description"] = text


def stack_schema() -> dict[str, Any]:
    platform = _strip_titles(PlatformSpec.model_json_schema(by_alias=True, mode="validation"))
    defs = platform.pop("$defs", {})
    _describe_fields(platform, defs)
    secret = {
        "type": "object",
        "properties": {"secure": {"type": "string"}},
        "required": ["secure"],
        "additionalProperties": False,
        "description": "A config secret, encrypted by `pulumi config set --secret`.",
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://kuberay-platform.invalid/stack.schema.json",
        "title": "kuberay-platform stack file (stacks/Pulumi.<stack>.yaml)",
        "description": "Generated from components/spec by `make stack-schema`; do not edit (docs/reference.md).",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": {f"{PROJECT}:{CONFIG_KEY}": platform},
                "required": [f"{PROJECT}:{CONFIG_KEY}"],
                "additionalProperties": {"anyOf": [{"type": ["string", "number", "boolean"]}, secret]},
            },
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "encryptionsalt": {"type": "string"},
        },
        "required": ["config"],
        "additionalProperties": False,
        "$defs": defs,
    }


# --- The reference page --------------------------------------------------------------------------


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        names = [_type_name(a) for a in get_args(annotation) if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in get_args(annotation) else "")
    if origin is Literal:
        return "one of " + ", ".join(f"`{a}`" for a in get_args(annotation))
    if origin is typing.Annotated:
        return _type_name(get_args(annotation)[0])
    if origin in (list, tuple):
        args = get_args(annotation)
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"map of {_type_name(get_args(annotation)[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation.__name__
    return getattr(annotation, "__name__", str(annotation))


def _models(annotation: Any) -> Iterator[tuple[str, type[BaseModel]]]:
    """Nested models of a field's type, with the path suffix that reaches them."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType, typing.Annotated):
        for arg in get_args(annotation)[:1] if origin is typing.Annotated else get_args(annotation):
            yield from _models(arg)
    elif origin in (list, tuple):
        for arg in get_args(annotation)[:1]:
            yield from (("[]" + suffix, model) for suffix, model in _models(arg))
    elif origin is dict:
        yield from ((".<name>" + suffix, model) for suffix, model in _models(get_args(annotation)[1]))
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield "", annotation


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(see below)"
    if value in ({}, [], None):
        return "-" if value is None else f"`{json.dumps(value)}`"
    return f"`{json.dumps(value, default=str)}`"


def _rows(model: type[BaseModel], prefix: str, seen: tuple[type[BaseModel], ...]) -> Iterator[str]:
    for name, field in model.model_fields.items():
        key = f"{prefix}.{field.alias or name}"
        text = " ".join((description(model, name) or "").split()).replace("|", "\\|")
        yield f"| `{key}` | {_type_name(field.annotation)} | {_default(field)} | {text} |"
        for suffix, nested in _models(field.annotation):
            if nested not in seen:
                yield from _rows(nested, key + suffix, (*seen, nested))


def reference_markdown() -> str:
    lines = [
        "# Stack file reference",
        "",
        "Every key of `config.kuberay-platform:platform` in `stacks/Pulumi.<stack>.yaml`, generated from",
        "the spec models (`components/spec`) by `make stack-schema`; do not edit. Editors validate and",
        "complete stack files with `stacks/stack.schema.json` (each stack file's first line names it).",
        "`[]` is an item of a list, `<name>` a key of a map. Unknown keys are errors.",
        "",
        "Beside it, every stack sets `kubernetes:enableSecretMutable: true` (a rotated password or token updates",
        "its Secret in place; the program requires it where prod's in-cluster Redis password comes from config)",
        "and may set `kubernetes:context` (the kubeconfig context to use).",
        "",
        "| key | type | default | description |",
        "| --- | --- | --- | --- |",
        *_rows(PlatformSpec, "platform", (PlatformSpec,)),
        "",
    ]
    return "\n".join(lines)


# --- The environments at a glance -------------------------------------------------------------------


def _choices(spec: PlatformSpec) -> dict[str, str]:
    """One line per choice an environment makes, read from its parsed spec."""
    w = spec.workloads
    workloads = [wl for _, wl in w.all()]
    pools = sorted({p.type for p in w.pools.values()})
    ft = sorted({wl.gcs_fault_tolerance.backend for wl in workloads if wl.gcs_fault_tolerance is not None})

    def installed(install: object, prerequisite: bool, what: str = "installed by the stack") -> str:
        return what if install is not None else "already installed" if prerequisite else "-"

    kueue = spec.kueue
    monitoring = spec.monitoring
    cm = spec.cert_manager
    network = spec.network_policies
    tokens = sorted({wl.auth.mode + (" (own token)" if wl.auth.token else "") for wl in workloads})
    return {
        "operator": f"scale `{spec.operator.scale}`, {spec.operator.replicas} replica(s), watches "
        + (", ".join(f"`{n}`" for n in spec.operator.watch_namespaces) if spec.operator.watch_namespaces else "all"),
        "workloads": f"{len(w.ray_clusters)} RayCluster, {len(w.ray_jobs)} RayJob, {len(w.ray_services)} RayService",
        "pools": ", ".join(pools) if pools else "cpu (default)",
        "GCS fault tolerance": ", ".join(ft) or "-",
        "Kueue": installed(kueue.install, spec.prerequisites.kueue)
        + (f"; {len(kueue.cluster_queues)} ClusterQueue(s)" if kueue.cluster_queues else ""),
        "monitoring": "-"
        if monitoring is None
        else installed(monitoring.install, spec.prerequisites.prometheus_operator, "kube-prometheus-stack installed")
        + "; alerts and dashboards",
        "NetworkPolicies": "default deny per Ray namespace" if network is not None else "-",
        "cert-manager": installed(cm.install if cm else None, spec.prerequisites.cert_manager)
        + (f"; issuers: {', '.join(i for i in ('ca', 'acme') if getattr(cm, i) is not None)}" if cm else ""),
        "mTLS": f"{sum(wl.mtls for wl in workloads)} workload(s)" if any(wl.mtls for wl in workloads) else "-",
        "auth": ", ".join(tokens) or "-",
        "teams": ", ".join(
            n + "".join(f" ({x})" for x, on in (("untrusted", not t.trusted), ("own operator", t.own_operator)) if on)
            for n, t in spec.teams.items()
        )
        or "-",
    }


def environments_markdown() -> str:
    from tools.stackfile import read_stack_document

    specs = {}
    for name in ("dev", "staging", "prod"):
        path = REPO_ROOT / "stacks" / f"Pulumi.{name}.yaml"
        doc = read_stack_document(path, f"stacks/Pulumi.{name}.yaml")
        specs[name] = parse_platform(doc["config"][f"{PROJECT}:{CONFIG_KEY}"], f"stacks/Pulumi.{name}.yaml")
    table = {name: _choices(spec) for name, spec in specs.items()}
    rows = list(next(iter(table.values())))
    lines = [
        "# The environments at a glance",
        "",
        "What each shipped stack chooses, read from `stacks/Pulumi.<stack>.yaml` by `make stack-schema`;",
        "do not edit (a test fails when this page and the stacks disagree). What each one deploys in",
        'detail: README, "What each stack deploys"; every key: [reference.md](reference.md).',
        "",
        "| | " + " | ".join(table) + " |",
        "| --- | " + " | ".join("---" for _ in table) + " |",
        *(f"| {row} | " + " | ".join(table[env][row].replace("|", "\\|") for env in table) + " |" for row in rows),
        "",
    ]
    return "\n".join(lines)


def generated() -> dict[Path, str]:
    return {
        SCHEMA_FILE: json.dumps(stack_schema(), indent=2, sort_keys=True) + "\n",
        REFERENCE_FILE: reference_markdown(),
        ENVIRONMENTS_FILE: environments_markdown(),
    }


def stack_files() -> list[Path]:
    """The shipped stacks and the examples."""
    return [*sorted((REPO_ROOT / "stacks").glob("Pulumi.*.yaml")), *sorted((REPO_ROOT / "examples").glob("*.yaml"))]


def modeline(path: Path) -> str:
    """The YAML language server's schema line for a stack file, relative to it."""
    relative = Path("..") / "stacks" / SCHEMA_FILE.name if path.parent != SCHEMA_FILE.parent else Path(SCHEMA_FILE.name)
    return f"# yaml-language-server: $schema={relative.as_posix()}"


def run(check: bool) -> int:
    stale = [path for path, text in generated().items() if not path.is_file() or path.read_text() != text]
    missing_modeline = [p for p in stack_files() if not p.read_text().startswith(modeline(p))]
    if check:
        for path in stale:
            print(f"{path.relative_to(REPO_ROOT)}: stale; run `make stack-schema`")
        for path in missing_modeline:
            print(f"{path.relative_to(REPO_ROOT)}: first line must be `{modeline(path)}`")
        return 1 if stale or missing_modeline else 0
    for path, text in generated().items():
        path.write_text(text)
    for path in missing_modeline:
        path.write_text(f"{modeline(path)}\n{path.read_text()}")
    return 0
