"""``make schemas [FROM=<mirror>]``: extract the pinned upstream schemas into ``schemas/``.

Reads ``schemas/pins.yaml``; for every pinned file, takes its bytes from a local mirror
(``--from <dir>``, the file's ``local`` path) or downloads its ``url`` (the release tag), verifies
its sha256, and writes what validation needs (``tools/schema_store.py`` says what that is). Then
``schemas/index.json`` lists every generated file with its sha256. The output depends only on the
pinned bytes: the same pins always give the same files, byte for byte. ``--check`` compares
instead of writing (exit 1 on any difference).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
import subprocess
import tempfile
import urllib.request
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.errors import ConfigError
from tools.schema_store import (
    INDEX_FILE,
    SCHEMAS_DIR,
    crd_documents,
    dumps,
    extract_chart_values,
    extract_crd,
    strip_descriptions,
)

PINS_FILE = "pins.yaml"
GENERATED_DIRS = ("crds", "charts", "ray")
DOWNLOAD_TIMEOUT_SECONDS = 60
GO_DOWNLOAD_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class Pin:
    upstream: str
    title: str
    version: str
    url: str
    local: str
    sha256: str
    license: str
    kind: str
    chart: str | None = None
    model: str | None = None
    """``module:Model`` of a pydantic model (kind ``pydantic-model``)."""
    output: str | None = None
    enums: Mapping[str, Mapping[str, Any]] | None = None
    """field -> ``{values: module:Enum, aliases: [...]}``: values a validator accepts, as an enum."""
    gomodule: str | None = None
    """``module@version`` on the Go module proxy holding the same file at ``gopath``: the source when the
    mirror lacks it (a Git repository's commit is a module even without a go.mod)."""
    gopath: str | None = None

    def source(self) -> dict[str, Any]:
        """The pin as recorded in each generated file."""
        return {
            "upstream": self.upstream,
            "title": self.title,
            "version": self.version,
            "url": self.url,
            "sha256": self.sha256,
            "license": self.license,
        }


def read_pins(directory: Path = SCHEMAS_DIR) -> tuple[list[dict[str, Any]], list[Pin]]:
    """(upstream releases, every pinned file) from ``pins.yaml``."""
    path = directory / PINS_FILE
    data = yaml.safe_load(path.read_text())
    upstreams, pins = [], []
    for up in data["upstreams"]:
        upstreams.append({k: str(up[k]) for k in ("name", "title", "version", "repository", "tag")})
        for f in up["files"]:
            if f["kind"] not in ("crd", "chart-values", "pydantic-model"):
                raise ConfigError([f"{path}: upstreams[{up['name']}].files: unknown kind {f['kind']!r}"])
            pins.append(
                Pin(
                    upstream=str(up["name"]),
                    title=str(up["title"]),
                    version=str(up["version"]),
                    url=str(f["url"]),
                    local=str(f["local"]),
                    sha256=str(f["sha256"]),
                    license=str(f["license"]),
                    kind=str(f["kind"]),
                    chart=f.get("chart"),
                    model=f.get("model"),
                    output=f.get("output"),
                    enums=f.get("enums"),
                    gomodule=f.get("gomodule"),
                    gopath=f.get("gopath"),
                )
            )
    return upstreams, pins


def fetch(pin: Pin, mirror: Path | None) -> bytes:
    """The pinned file's bytes, verified against its sha256."""
    if pin.gomodule and (mirror is None or not (mirror / pin.local).is_file()):
        data, where = go_module_file(pin)
    elif mirror is not None:
        path = mirror / pin.local
        if not path.is_file():
            raise ConfigError([f"{path}: not found in the mirror (pins.yaml local: {pin.local})"])
        data = path.read_bytes()
        where = str(path)
    else:
        try:
            with urllib.request.urlopen(pin.url, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
                data = response.read()
        except OSError as exc:  # URLError, HTTPError, timeouts
            raise ConfigError(
                [f"{pin.url}: cannot download ({exc}); fix the URL in schemas/pins.yaml or use FROM=<local mirror>"]
            ) from None
        where = pin.url
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise ConfigError([f"{where}: sha256 {digest} does not match the pin {pin.sha256} (schemas/pins.yaml)"])
    return data


def go_module_file(pin: Pin) -> tuple[bytes, str]:
    """``gopath`` in the pin's Go module, through ``go mod download`` (the Go module proxy)."""
    where = f"{pin.gomodule} {pin.gopath}"
    try:
        done = subprocess.run(
            ["go", "mod", "download", "-json", str(pin.gomodule)],
            capture_output=True,
            text=True,
            timeout=GO_DOWNLOAD_TIMEOUT_SECONDS,
            cwd=tempfile.gettempdir(),
            env={**os.environ, "GO111MODULE": "on"},
        )
        info = json.loads(done.stdout or "{}")
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        raise ConfigError(
            [f"{where}: cannot download with go ({exc}); use FROM=<mirror holding {pin.local}>"]
        ) from None
    if done.returncode != 0 or "Dir" not in info:
        reason = info.get("Error") or done.stderr.strip() or f"exit {done.returncode}"
        raise ConfigError([f"{where}: go mod download failed: {reason}"])
    path = Path(info["Dir"]) / str(pin.gopath)
    if not path.is_file():
        raise ConfigError([f"{where}: no such file in the module"])
    return path.read_bytes(), where


def generate(upstreams: list[dict[str, Any]], pins: list[Pin], mirror: Path | None) -> dict[str, str]:
    """Relative path -> file contents of everything ``schemas/`` holds besides ``pins.yaml``."""
    files: dict[str, str] = {}
    crds: dict[str, str] = {}
    charts: dict[str, str] = {}
    models: dict[str, str] = {}
    for pin in pins:
        if pin.kind == "pydantic-model":
            rel = f"{pin.upstream}/{pin.output}.json"
            files[rel] = dumps({"source": pin.source(), "model": pin.model, "schema": model_schema(pin)})
            models[str(pin.output)] = rel
            continue
        text = fetch(pin, mirror).decode()
        if pin.kind == "crd":
            docs = list(crd_documents(text))
            if not docs:
                raise ConfigError([f"{pin.url}: no CustomResourceDefinition in it"])
            for doc in docs:
                entry = extract_crd(doc)
                rel = f"crds/{entry['group']}_{entry['plural']}.json"
                files[rel] = dumps({"source": pin.source(), **entry})
                crds[f"{entry['group']}/{entry['kind']}"] = rel
        else:
            chart = pin.chart or pin.upstream
            rel = f"charts/{chart}.json"
            values = extract_chart_values(text)
            files[rel] = dumps({"source": pin.source(), "chart": chart, "version": pin.version, "values": values})
            charts[chart] = rel
    index = {
        "about": "Generated by `make schemas` from pins.yaml; do not edit (tools/schema_sync.py).",
        "upstreams": [{k: u[k] for k in ("name", "title", "version")} for u in upstreams],
        "crds": crds,
        "charts": charts,
        "models": models,
        "sha256": {rel: hashlib.sha256(text.encode()).hexdigest() for rel, text in sorted(files.items())},
    }
    files[INDEX_FILE] = dumps(index)
    return files


def model_schema(pin: Pin) -> dict[str, Any]:
    """The JSON Schema of a pinned pydantic model (validation mode), from the installed package after
    checking that its source is the pinned file."""
    module_name, _, attr = str(pin.model).partition(":")
    try:
        spec = importlib.util.find_spec(module_name)
    except ModuleNotFoundError:
        spec = None
    if spec is None or spec.origin is None:
        raise ConfigError(
            [f"{pin.model}: not installed; `make schemas` needs {pin.title} {pin.version} (the dev group)"]
        )
    digest = hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()
    if digest != pin.sha256:
        raise ConfigError(
            [f"{spec.origin}: sha256 {digest} does not match the pin {pin.sha256} (not {pin.title} {pin.version}?)"]
        )
    with warnings.catch_warnings():  # Ray's models trip pydantic's deprecation and non-serialisable-default warnings
        warnings.simplefilter("ignore")
        logging.getLogger("ray").setLevel(logging.ERROR)  # "could not import torch": not needed for a schema
        model = getattr(importlib.import_module(module_name), attr)
        schema = strip_descriptions(model.model_json_schema(mode="validation"))
    for field_name, enum in (pin.enums or {}).items():
        enum_module, _, enum_attr = str(enum["values"]).partition(":")
        values = [m.value for m in getattr(importlib.import_module(enum_module), enum_attr)]
        allowed = {"enum": [*values, *enum.get("aliases", [])]}
        prop = schema["properties"][field_name]
        variants = prop.get("anyOf", [prop])
        prop["anyOf"] = [allowed if v.get("type") == "string" else v for v in variants]
        prop.pop("type", None)
    return schema


def differences(directory: Path, files: Mapping[str, str]) -> list[str]:
    """What differs between ``directory`` and freshly generated ``files`` (stale, edited, extra)."""
    problems = []
    for rel, text in sorted(files.items()):
        path = directory / rel
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif path.read_text() != text:
            problems.append(f"{path}: differs from what its pin generates")
    for path in sorted(p for sub in GENERATED_DIRS for p in (directory / sub).glob("*.json")):
        if path.relative_to(directory).as_posix() not in files:
            problems.append(f"{path}: not generated from any pin (remove it)")
    return problems


def sync(directory: Path = SCHEMAS_DIR, mirror: Path | None = None, check: bool = False) -> list[str]:
    """Write (or with ``check`` compare) the generated files; returns the problems found."""
    upstreams, pins = read_pins(directory)
    files = generate(upstreams, pins, mirror)
    if check:
        return differences(directory, files)
    for sub in GENERATED_DIRS:
        for stale in (directory / sub).glob("*.json"):
            if stale.relative_to(directory).as_posix() not in files:
                stale.unlink()
    for rel, text in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return []
