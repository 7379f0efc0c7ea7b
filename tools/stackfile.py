"""Reads a stack file (``stacks/Pulumi.<stack>.yaml``) the way the Pulumi CLI hands it to a program."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from components.errors import ConfigError
from tools.engine import SECRET_PLACEHOLDER

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser where PyYAML has it: the same documents, many times faster for a large fleet."""


def read_stack_document(path: Path, shown_as: str) -> dict[str, Any]:
    """The stack file as written (``config`` keys as given, ``secure:`` values kept), checked: YAML,
    a mapping, only the keys a stack file has, ``config`` a mapping."""
    if not path.is_file():
        raise ConfigError([f"{shown_as}: stack file not found (create it, or pick another STACK)"])
    try:
        doc = yaml.load(path.read_text(), Loader=SAFE_LOADER) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError([f"{shown_as}{where}: not valid YAML: {problem}"]) from None
    if not isinstance(doc, dict):
        raise ConfigError([f"{shown_as}: expected a mapping with a 'config' key"])
    unknown = sorted(set(doc) - {"config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment"})
    if unknown:
        raise ConfigError([f"{shown_as}: {key}: unknown stack file key (expected config)" for key in unknown])
    if not isinstance(doc.get("config") or {}, dict):
        raise ConfigError([f"{shown_as}: config: expected a mapping"])
    return doc


def read_stack_config(path: Path, shown_as: str) -> tuple[dict[str, Any], list[str]]:
    """(config, secret keys). ``secure:`` values cannot be decrypted offline: they become
    ``[secret]`` and are marked secret, as the CLI would mark them."""
    config = read_stack_document(path, shown_as).get("config") or {}
    out: dict[str, Any] = {}
    secret_keys: list[str] = []
    for key, value in config.items():
        full = key if ":" in key else f"kuberay-platform:{key}"
        if isinstance(value, dict) and set(value) == {"secure"}:
            out[full] = SECRET_PLACEHOLDER
            secret_keys.append(full)
        else:
            out[full] = value
    return out, secret_keys
