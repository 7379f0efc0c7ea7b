"""The pinned upstream schemas the product validates against: the project's own ``schemas/``.

``make schemas`` (``tools/schema_sync.py``) extracts them from the upstream files pinned in
``schemas/pins.yaml``; this module reads them. Layout:

- ``schemas/index.json``: which file holds each CRD (``group/Kind``) and chart's values, the
  upstream releases they come from, and the sha256 of every generated file;
- ``schemas/crds/<group>_<plural>.json``: one CRD, every served version's ``openAPIV3Schema``
  (with its ``x-kubernetes-validations``; ``description`` texts dropped), plus its pin;
- ``schemas/charts/<chart>.json``: a chart's default values, keys upstream documents only as
  commented-out YAML included (as ``null``), plus its pin.

An override folder (``$KUBERAY_PLATFORM_CRDS`` or ``--crds``) of raw upstream CRD YAML, e.g. a
newer KubeRay release, takes precedence for the kinds it defines; a chart values file in it at the
upstream mirror's path (``kuberay/kuberay-operator-values.yaml``) replaces that chart's values.
Everything else still comes from the project's schemas, and :meth:`SchemaStore.describe` says which
source each kind came from.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMAS_DIR = REPO_ROOT / "schemas"
INDEX_FILE = "index.json"
CRDS_ENV = "KUBERAY_PLATFORM_CRDS"
_CRD_HEAD = re.compile(r"^kind:\s*CustomResourceDefinition\s*$", re.M)

# chart name -> its default values file in an upstream mirror (the folder layout pins.yaml's
# ``local`` paths use), so an override folder can bring a chart's newer values too.
OVERRIDE_VALUES_FILES = {
    "kuberay-operator": "kuberay/kuberay-operator-values.yaml",
    "kueue": "kueue/kueue-chart-values.yaml",
    "cert-manager": "cert-manager/cert-manager-chart-values.yaml",
    "pulumi-kubernetes-operator": "pulumi-kubernetes-operator/pulumi-operator-chart-values.yaml",
}


def yaml_load_all(text: str) -> Iterator[Any]:
    return yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def dumps(value: Any) -> str:
    """The one serialisation of generated files: compact, sorted, so the bytes never vary."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


# --- Extraction (shared by ``make schemas`` and override folders) -----------------------------

_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs")
_SCHEMA_ONE = ("additionalProperties", "additionalItems", "items", "not")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def strip_descriptions(node: Mapping[str, Any]) -> dict[str, Any]:
    """A schema without its ``description`` texts (half the size of some CRDs; validation never
    reads them). Walks schema positions only: a property *named* ``description`` (Kueue's
    WorkloadPriorityClass has one) and data such as ``default``/``enum`` values are kept."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: strip_descriptions(sub) for name, sub in value.items()}
        elif key in _SCHEMA_ONE and isinstance(value, Mapping):
            out[key] = strip_descriptions(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [strip_descriptions(sub) for sub in value]
        else:
            out[key] = value
    return out


def extract_crd(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What validation needs from one CustomResourceDefinition: names, scope and the schema of
    every served version."""
    spec = doc["spec"]
    return {
        "group": spec["group"],
        "kind": spec["names"]["kind"],
        "plural": spec["names"]["plural"],
        "scope": spec.get("scope", "Namespaced"),
        "versions": [
            {
                "name": v["name"],
                "storage": bool(v.get("storage", False)),
                "deprecated": bool(v.get("deprecated", False)),
                "schema": strip_descriptions(v["schema"]["openAPIV3Schema"]),
            }
            for v in spec["versions"]
            if v.get("served", False)
        ],
    }


def crd_documents(text: str) -> Iterator[Mapping[str, Any]]:
    for doc in yaml_load_all(text):
        if isinstance(doc, Mapping) and doc.get("kind") == "CustomResourceDefinition":
            yield doc


_KEY = re.compile(r"^( *)([A-Za-z][A-Za-z0-9_-]*):")
_COMMENTED_KEY = re.compile(r"^( *)# ?([a-z][A-Za-z0-9]*):")


def extract_chart_values(text: str) -> dict[str, Any]:
    """A chart's documented values. Keys that upstream documents only as commented-out YAML
    (``# watchNamespace:``, ``  # requests:``) count as existing, with free-form contents (null)."""
    values = yaml.safe_load(text) or {}
    for parent, key in commented_keys(text):
        node: Any = values
        for part in parent:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.setdefault(key, None)
    return dict(values)


def commented_keys(text: str) -> list[tuple[list[str], str]]:
    """(parent path, key) of each commented-out key, placed by its indentation."""
    found = []
    stack: list[tuple[int, str]] = []  # (indent, key) of the real keys enclosing the current line
    for line in text.splitlines():
        real = _KEY.match(line)
        commented = None if real else _COMMENTED_KEY.match(line)
        match = real or commented
        if match is None:
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if real:
            stack.append((indent, match.group(2)))
        else:
            found.append(([k for _, k in stack], match.group(2)))
    return found


# --- Reading ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Crd:
    group: str
    kind: str
    versions: Mapping[str, Mapping[str, Any]]
    """served version name -> ``{"schema", "storage", "deprecated"}``"""
    source: str
    """Where it came from, for reports: ``KubeRay 1.7.0`` or an override file's path."""


@dataclass
class SchemaStore:
    """The project's schemas, optionally overlaid by a folder of raw upstream CRDs."""

    directory: Path = SCHEMAS_DIR
    override: Path | None = None
    _index: dict[str, Any] = field(default_factory=dict, repr=False)
    _overridden: dict[tuple[str, str], Path] = field(default_factory=dict, repr=False)
    _crds: dict[tuple[str, str], Crd | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        index_path = self.directory / INDEX_FILE
        if not index_path.is_file():
            raise FileNotFoundError(f"{index_path} not found: the project's schemas are missing; run `make schemas`")
        self._index = json.loads(index_path.read_text())
        if self.override is not None:
            if not self.override.is_dir():
                raise FileNotFoundError(
                    f"CRD folder {self.override} not found (from --crds or ${CRDS_ENV}); "
                    "point it at a folder of upstream CRD YAML files, or unset it to use the project's schemas"
                )
            self._overridden = _scan_crd_folder(self.override)

    @property
    def upstreams(self) -> list[Mapping[str, Any]]:
        return list(self._index.get("upstreams", []))

    def crd(self, group: str, kind: str) -> Crd | None:
        key = (group, kind)
        if key not in self._crds:
            self._crds[key] = self._load(group, kind)
        return self._crds[key]

    def _load(self, group: str, kind: str) -> Crd | None:
        path = self._overridden.get((group, kind))
        if path is not None:
            for doc in crd_documents(path.read_text()):
                entry = extract_crd(doc)
                if (entry["group"], entry["kind"]) == (group, kind):
                    return _crd(entry, str(path))
        rel = self._index.get("crds", {}).get(f"{group}/{kind}")
        if rel is None:
            return None
        entry = json.loads((self.directory / rel).read_text())
        pin = entry["source"]
        return _crd(entry, f"{pin['title']} {pin['version']}")

    def chart_values(self, chart: str) -> dict[str, Any] | None:
        """The chart's default values (commented-out keys included as null), or None."""
        if self.override is not None and chart in OVERRIDE_VALUES_FILES:
            path = self.override / OVERRIDE_VALUES_FILES[chart]
            if path.is_file():
                return extract_chart_values(path.read_text())
        rel = self._index.get("charts", {}).get(chart)
        if rel is None:
            return None
        return dict(json.loads((self.directory / rel).read_text())["values"])

    def describe(self) -> list[str]:
        """One line per source of schemas, for summaries: which upstream releases were used."""
        lines = [
            "project schemas (`schemas/`, pinned in `schemas/pins.yaml`): "
            + ", ".join(f"{u['title']} {u['version']}" for u in self.upstreams)
        ]
        if self.override is not None:
            kinds = ", ".join(f"{g}/{k}" for g, k in sorted(self._overridden)) or "no CRDs"
            lines.append(f"overridden from `{self.override}` (--crds / ${CRDS_ENV}): {kinds}")
        return lines


def _crd(entry: Mapping[str, Any], source: str) -> Crd:
    versions = {
        v["name"]: {"schema": v["schema"], "storage": v["storage"], "deprecated": v["deprecated"]}
        for v in entry["versions"]
    }
    return Crd(entry["group"], entry["kind"], versions, source)


def _scan_crd_folder(folder: Path) -> dict[tuple[str, str], Path]:
    """(group, kind) -> file, for every CRD in the YAML files under ``folder``: a file with one CRD
    in the usual layout is read cheaply from its head; bundles (``standard-install.yaml``,
    ``cert-manager.crds.yaml``) and unusual layouts are parsed whole."""
    found: dict[tuple[str, str], Path] = {}
    for path in sorted(folder.rglob("*.y*ml")):
        text = path.read_text(errors="replace")
        count = len(_CRD_HEAD.findall(text))
        if count == 0:
            continue
        head = text[:16384]
        group = re.search(r"^  group:\s*(\S+)", head, re.M)
        kind = re.search(r"^    kind:\s*(\S+)", head, re.M)
        if count == 1 and group and kind:
            found[(group.group(1), kind.group(1))] = path
        else:
            for doc in crd_documents(text):
                found[(doc["spec"]["group"], doc["spec"]["names"]["kind"])] = path
    return found


def override_dir() -> Path | None:
    """``$KUBERAY_PLATFORM_CRDS``, when set: a folder of CRDs that take precedence."""
    env = os.environ.get(CRDS_ENV)
    return Path(env) if env else None


def load_store(override: Path | None = None) -> SchemaStore:
    """The store for an override folder (or none), parsed once per process for as long as the
    folder's files stay the same."""
    if override is None or not override.is_dir():
        return _store(override, ())
    files = tuple(
        (str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(override.rglob("*.y*ml")) if p.is_file()
    )
    return _store(override, files)


@cache
def _store(override: Path | None, fingerprint: tuple[tuple[str, int, int], ...]) -> SchemaStore:
    return SchemaStore(SCHEMAS_DIR, override)
