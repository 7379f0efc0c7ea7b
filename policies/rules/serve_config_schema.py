"""serve-config-schema: ``serveConfigV2`` is a config Ray Serve accepts.

Severity: mandatory everywhere (the RayService would never become ready).

Why: ``serveConfigV2`` is an opaque string to Kubernetes; a YAML error or a field Ray Serve rejects
surfaces only when the operator submits it to the running cluster, minutes after a "successful"
deploy. Ray's own models are the truth, in two layers:

1. Always: the JSON Schemas that ``make schemas`` generates from Ray Serve 2.60.0's pydantic models
   (``ServeDeploySchema``, the one the dashboard's REST API uses, and Ray Serve LLM's ``LLMConfig``
   for each ``llm_configs`` entry, which ServeDeploySchema cannot see inside ``args``), kept in
   ``schemas/ray/`` and pinned in ``schemas/pins.yaml``: types, required fields, enums (including
   the accelerator types ``LLMConfig`` accepts). No Ray needed: the policy pack and ``make lint``
   stay light.
2. Where Ray 2.60.0 itself is installed (the dev group; ``pip install "ray[serve]==2.60.0"
   pyarrow==26.0.1`` anywhere), the models run too, adding their cross-field validators (an
   import path's form, ``num_replicas`` with ``autoscaling_config``, ...). Set
   ``KUBERAY_PLATFORM_SERVE_VALIDATION=schema`` to use the first layer only.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs

from components.manifests.ray_objects import dig
from policies.rules.base import MANDATORY, ResourceRule, RuleContext
from policies.rules.helpers import llm_configs, parse_yaml

RAY_SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "ray"
"""The project's JSON Schemas of Ray's models (``make schemas``)."""
MODE_ENV = "KUBERAY_PLATFORM_SERVE_VALIDATION"
_ENUM_SHOWN = 8


@dataclass(frozen=True)
class _ModelSchema:
    version: str
    fast: Any
    full: jsonschema.protocols.Validator

    def errors(self, instance: Any, prefix: tuple[Any, ...]) -> list[str]:
        if self.fast.is_valid(instance):
            return []
        found = sorted(self.full.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
        return [f"{'.'.join(str(p) for p in (*prefix, *e.absolute_path)) or '<root>'}: {_message(e)}" for e in found]


def _message(err: jsonschema.ValidationError) -> str:
    if err.validator == "enum" and isinstance(err.validator_value, list) and len(err.validator_value) > _ENUM_SHOWN:
        shown = ", ".join(map(str, err.validator_value[:_ENUM_SHOWN]))
        return f"{err.instance!r} is not one of the {len(err.validator_value)} values Ray accepts ({shown}, ...)"
    if err.validator == "anyOf" and err.context:  # Optional[...] fields: report the non-null branch
        best = jsonschema.exceptions.best_match(err.context)
        return _message(best)
    return str(err.message)


@cache
def model_schema(name: str) -> _ModelSchema:
    """``serve-deploy`` or ``llm-config`` from ``schemas/ray/``."""
    entry = json.loads((RAY_SCHEMAS / f"{name}.json").read_text())
    schema = entry["schema"]
    fast = jsonschema_rs.Draft202012Validator(schema, validate_formats=False)
    return _ModelSchema(str(entry["source"]["version"]), fast, jsonschema.Draft202012Validator(schema))


def pinned_ray_version() -> str:
    return model_schema("serve-deploy").version


@lru_cache(maxsize=1)
def ray_models_available() -> bool:
    """Ray Serve at the pinned version is importable and not switched off."""
    if os.environ.get(MODE_ENV, "auto") == "schema":
        return False
    try:
        found = importlib.util.find_spec("ray.serve") is not None
        return found and metadata.version("ray") == pinned_ray_version()
    except (ImportError, ValueError, metadata.PackageNotFoundError):
        return False


@lru_cache(maxsize=1024)
def serve_config_errors(text: str) -> tuple[str, ...]:
    """Ray Serve's complaints about one serveConfigV2 string (cached: configs repeat)."""
    doc, error = parse_yaml(text)
    if error is not None:
        return (f"not valid YAML: {error}",)
    problems = model_schema("serve-deploy").errors(doc, ())
    for i, j, config in llm_configs(doc):
        problems += model_schema("llm-config").errors(config, ("applications", i, "args", "llm_configs", j))
    if not problems and ray_models_available():
        problems = _ray_model_errors(doc)
    return tuple(problems)


def _ray_model_errors(doc: Any) -> list[str]:
    from pydantic import ValidationError

    with warnings.catch_warnings():  # Ray's own models trip pydantic deprecation warnings
        warnings.simplefilter("ignore")
        from ray.serve.schema import ServeDeploySchema  # 1 s import: only when a serve config is checked

    try:
        ServeDeploySchema.model_validate(doc)
    except ValidationError as exc:
        return list(_described(exc, ()))
    problems: list[str] = []
    for i, j, config in llm_configs(doc):
        try:
            llm_config_model().model_validate(config)
        except ValidationError as exc:
            problems += _described(exc, ("applications", i, "args", "llm_configs", j))
    return problems


def _described(exc: Any, prefix: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(
        f"{'.'.join(str(p) for p in (*prefix, *err['loc'])) or '<root>'}: {err['msg'].removeprefix('Value error, ')}"
        for err in exc.errors(include_url=False)
    )


@lru_cache(maxsize=1)
def llm_config_model() -> Any:
    """Ray Serve LLM's ``LLMConfig``. ``ray.serve.llm`` re-exports it but imports vLLM on the way;
    the defining module (pinned Ray 2.60.0) does not."""
    quiet = logging.getLogger("ray")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # it logs that torch/transformers are absent: not needed to validate
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from ray.llm._internal.serve.core.configs.llm_config import LLMConfig
    finally:
        quiet.setLevel(level)
    return LLMConfig


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayService":
        return
    text = dig(props, "spec", "serveConfigV2")
    if text is None:
        return
    if not isinstance(text, str):
        yield "spec.serveConfigV2 must be a YAML string (use a block scalar: serveConfigV2: |)"
        return
    for problem in serve_config_errors(text):
        yield f"spec.serveConfigV2: {problem} (Ray Serve {pinned_ray_version()})"


RULE = ResourceRule(
    name="serve-config-schema",
    description="RayService serveConfigV2 passes Ray Serve's ServeDeploySchema.",
    levels=MANDATORY,
    check=check,
)
