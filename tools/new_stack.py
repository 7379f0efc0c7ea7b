"""``make new-stack NAME=<stack> FROM=<template> [ENVIRONMENT=dev|staging|prod]``: a new environment
(or a team's own dev stack) from an existing stack file, then its offline preview.

The new ``stacks/Pulumi.<NAME>.yaml`` has the template's config and the schema modeline. Encrypted
values (``secure:``) are not copied: they are encrypted with the template stack's key, so the new
stack's own ``pulumi config set --secret`` commands are printed instead. An existing file is never
overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from components.errors import ConfigError
from tools.stackfile import read_stack_document

ROOT = Path(__file__).resolve().parent.parent
STACKS = ROOT / "stacks"
PLATFORM = "kuberay-platform:platform"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
ENVIRONMENTS = ("dev", "staging", "prod")
MODELINE = "# yaml-language-server: $schema=stack.schema.json\n"


def create(name: str, template: str, environment: str | None = None, stacks: Path = STACKS) -> tuple[Path, list[str]]:
    """Write ``stacks/Pulumi.<name>.yaml``; returns it and the secret config keys left for the user."""
    target, source = stacks / f"Pulumi.{name}.yaml", stacks / f"Pulumi.{template}.yaml"
    shown = f"stacks/Pulumi.{name}.yaml"
    if not NAME.match(name):
        raise ConfigError([f"NAME={name}: a stack name is letters, digits, '-', '_' and '.' (e.g. dev-alice)"])
    if target.exists():
        raise ConfigError([f"{shown}: exists already; pick another NAME or edit that file"])
    if environment is not None and environment not in ENVIRONMENTS:
        raise ConfigError([f"ENVIRONMENT={environment}: one of {', '.join(ENVIRONMENTS)}"])
    document = read_stack_document(source, f"stacks/Pulumi.{template}.yaml (FROM={template})")
    config: dict[str, Any] = {}
    secrets: list[str] = []
    for key, value in (document.get("config") or {}).items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            secrets.append(key)
        else:
            config[key] = value
    platform = config.get(PLATFORM)
    if not isinstance(platform, dict):
        raise ConfigError([f"stacks/Pulumi.{template}.yaml: config.{PLATFORM}: missing; FROM must be a platform stack"])
    if environment is not None:
        platform["environment"] = environment
    header = (
        MODELINE
        + f"# Created from stacks/Pulumi.{template}.yaml by `make new-stack`. Check names that must differ\n"
        + "# between stacks sharing a cluster (namespaces, queues), then `make preview STACK="
        + name
        + "`.\n"
    )
    target.write_text(header + yaml.safe_dump({"config": config}, sort_keys=False, allow_unicode=True))
    return target, secrets


def run(name: str, template: str, environment: str | None) -> int:
    target, secrets = create(name, template, environment)
    print(f"created {target.relative_to(ROOT)} from stacks/Pulumi.{template}.yaml")
    for key in secrets:
        print(f"  not copied (encrypted for {template}): pulumi config set --secret {key} <value> --stack {name}")
    return 0
