"""serve-config-schema: ``serveConfigV2`` is a config Ray Serve accepts.

Severity: mandatory everywhere (the RayService would never become ready).

Why: ``serveConfigV2`` is an opaque string to Kubernetes; a YAML error or a field Ray Serve rejects
surfaces only when the operator submits it to the running cluster, minutes after a "successful"
deploy. It is validated here with Ray Serve's own schema, ``ray.serve.schema.ServeDeploySchema``
(Ray 2.60.0), the one the dashboard's REST API uses; and each Ray Serve LLM app's ``llm_configs``
with Ray's ``LLMConfig`` (unsupported accelerator types, bad autoscaling bounds, unknown keys),
which ServeDeploySchema cannot see inside ``args``.

Ray (and pyarrow) are installed only by the dev group (``requirements/dev.txt``: ``make test``); the
program, policy pack and checks installs leave them out. Without Ray the config is still checked to
be YAML, and a ``RuntimeWarning`` on stderr says that Ray's schemas were skipped.
"""

from __future__ import annotations

import importlib.util
import logging
import warnings
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from components.manifests.ray_objects import as_list, as_map, dig
from policies.rules.base import MANDATORY, ResourceRule, RuleContext
from policies.rules.helpers import parse_yaml


@lru_cache(maxsize=1024)
def serve_config_errors(text: str) -> tuple[str, ...]:
    """Ray Serve's complaints about one serveConfigV2 string (cached: configs repeat)."""
    doc, error = parse_yaml(text)
    if error is not None:
        return (f"not valid YAML: {error}",)
    if not ray_installed():
        warnings.warn(RAY_MISSING, RuntimeWarning, stacklevel=2)
        return ()
    from pydantic import ValidationError

    with warnings.catch_warnings():  # Ray's own models trip pydantic deprecation warnings
        warnings.simplefilter("ignore")
        from ray.serve.schema import ServeDeploySchema  # 1 s import: only when a serve config is checked

    try:
        ServeDeploySchema.model_validate(doc)
    except ValidationError as exc:
        return _described(exc, ())
    problems: list[str] = []
    for i, app in enumerate(as_list(as_map(doc).get("applications"))):
        if as_map(app).get("import_path") != LLM_IMPORT_PATH:
            continue
        for j, config in enumerate(as_list(dig(app, "args", "llm_configs"))):
            try:
                llm_config_model().model_validate(config)
            except ValidationError as exc:
                problems += _described(exc, ("applications", i, "args", "llm_configs", j))
    return tuple(problems)


LLM_IMPORT_PATH = "ray.serve.llm:build_openai_app"
RAY_MISSING = (
    "serve-config-schema: Ray is not installed, so serveConfigV2 is checked as YAML only, not against "
    "Ray Serve's ServeDeploySchema and LLMConfig (install requirements/dev.txt, e.g. `make test`, for the full check)"
)


def ray_installed() -> bool:
    """Whether Ray Serve's models can be imported (only the dev group installs Ray)."""
    return importlib.util.find_spec("ray") is not None


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
        checked_by = f" (Ray Serve {_ray_version()} ServeDeploySchema)" if ray_installed() else ""
        yield f"spec.serveConfigV2: {problem}{checked_by}"


@lru_cache(maxsize=1)
def _ray_version() -> str:
    import ray

    return str(ray.__version__)


RULE = ResourceRule(
    name="serve-config-schema",
    description="RayService serveConfigV2 passes Ray Serve's ServeDeploySchema.",
    levels=MANDATORY,
    check=check,
)
