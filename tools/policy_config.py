"""Reads a policy config (the ``--policy-pack-config`` file of ``pulumi preview``) for the offline
preview and lint, so all three paths judge with the same levels and tunables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from components.errors import ConfigError
from policies.rules import RESOURCE_RULES, STACK_RULES
from policies.rules.base import SCHEMA_POLICY, Rule
from tools.schema import REPO_ROOT

LEVELS = ("mandatory", "advisory", "disabled")


def default_path(environment: str) -> Path:
    return REPO_ROOT / "policies" / "config" / f"{environment}.json"


def load_policy_config(path: Path, environment: str) -> dict[str, dict[str, Any]]:
    """Rule name -> settings. Raises ConfigError naming the file and key for any mistake."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError([f"{path}: policy config not found"]) from None
    except json.JSONDecodeError as exc:
        raise ConfigError([f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"]) from None
    if not isinstance(doc, dict):
        raise ConfigError([f"{path}: expected an object of policy name -> settings"])
    every: list[Rule] = [*RESOURCE_RULES, *STACK_RULES]
    rules = {r.name: r for r in every}
    problems = []
    for name, entry in doc.items():
        if name == "all":
            continue
        if name not in rules and name != SCHEMA_POLICY:
            problems.append(f"{path}: {name}: unknown policy (see POLICIES.md)")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{path}: {name}: expected an object")
            continue
        level = entry.get("enforcementLevel")
        if level is not None and level not in LEVELS:
            problems.append(f"{path}: {name}.enforcementLevel: expected one of {', '.join(LEVELS)} (got {level!r})")
        env = entry.get("environment", environment)
        if env != environment:
            problems.append(f"{path}: {name}.environment: {env!r} but judging for {environment!r}")
        known = set(rules[name].options if name in rules else ()) | {"enforcementLevel", "environment"}
        problems += [f"{path}: {name}.{key}: unknown setting" for key in entry if key not in known]
    if problems:
        raise ConfigError(problems)
    return {k: v for k, v in doc.items() if k != "all"}


def resolve(path: str | None, environment: str) -> dict[str, dict[str, Any]]:
    """The config given, else the environment's checked-in one, else none (rule defaults)."""
    if path:
        return load_policy_config(Path(path), environment)
    default = default_path(environment)
    return load_policy_config(default, environment) if default.exists() else {}
