"""local-working-dir: a RayJob's ``working_dir`` is a remote package, not a path on the submitter.

Severity: advisory everywhere (it works only when the submitter's filesystem happens to hold it).

Why: a local ``working_dir`` in a RayJob's ``runtimeEnvYAML`` is zipped by whoever submits the job
and uploaded through the head: in KubeRay's default K8sJobMode that is a separate submitter pod
(``ray job submit``), so ``/app`` must exist there, and all of it travels through the GCS on every
run. Code baked into the image needs no packaging: put its directory on ``PYTHONPATH`` in
``env_vars`` (the platform's ``runtimeEnv.codeDir``) or use a remote URI (``s3://``, ``gs://``,
``https://.../code.zip``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import job_spec
from policies.rules.base import ResourceRule, RuleContext, levels
from policies.rules.helpers import runtime_envs

_URI = re.compile(r"^[a-z][a-z0-9+.-]*://")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if job_spec(props) is None:
        return  # serve apps' working_dir is resolved on the cluster itself
    for where, env in runtime_envs(props):
        working_dir = env.get("working_dir")
        if isinstance(working_dir, str) and working_dir and not _URI.match(working_dir):
            yield (
                f"{where}.working_dir {working_dir!r} is a local path: the job submitter zips it from its own "
                "filesystem and uploads it; for code in the image put it on PYTHONPATH (env_vars), or use a "
                "remote URI"
            )


RULE = ResourceRule(
    name="local-working-dir",
    description="A RayJob's runtime working_dir is a remote URI, not a path on the submitter.",
    levels=levels("advisory", "advisory", "advisory"),
    check=check,
)
