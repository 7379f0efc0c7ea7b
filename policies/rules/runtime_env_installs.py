"""runtime-env-installs: no package installs at run time in production.

Severity: advisory in dev and staging, mandatory in prod.

Why: ``pip``/``uv``/``conda`` in a runtime environment (a list, a ``{packages: ...}`` map, a
requirements file or an environment file, in a RayJob's ``runtimeEnvYAML`` or a serve
application's ``runtime_env``) and ``pip install`` in an entrypoint install from the network on
every start: slow, unreproducible, and broken when an index is down (seeds ch. 9.3, 9.5, 9.9).
Bake dependencies into the image.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import job_spec, job_spec_path
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext
from policies.rules.helpers import runtime_envs

INSTALLERS = ("pip", "uv", "conda")
_ENTRYPOINT_INSTALL = re.compile(r"\b(pip3?|uv\s+pip|conda|mamba)\s+install\b|\buv\s+(run|add)\b.*--with\b")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for where, env in runtime_envs(props):
        for key in INSTALLERS:
            if key in env and env[key] not in (None, [], {}, ""):
                yield (
                    f"{where}.{key}: installs packages at run time; bake them into the image "
                    "(runtime_env keeps env_vars and working_dir)"
                )
    job = job_spec(props)
    entrypoint = job.get("entrypoint") if job is not None else None
    if isinstance(entrypoint, str) and _ENTRYPOINT_INSTALL.search(entrypoint):
        yield f"{job_spec_path(props)}.entrypoint installs packages at run time; bake them into the image"


RULE = ResourceRule(
    name="runtime-env-installs",
    description="No pip/uv/conda installs in runtime environments or entrypoints in production.",
    levels=PROD_ONLY,
    check=check,
)
