"""image-ray-version: the Ray image's tag matches ``rayVersion``.

Severity: advisory in dev, mandatory in staging and prod.

Why: KubeRay configures the cluster (autoscaler, probes, features) for ``rayVersion``; an image of
another Ray release breaks autoscaling and GCS compatibility, and head and workers must run one
release (KubeRay docs; seeds ch. 9.3 "image tag matching the Ray version"). Checked for images
whose repository is a Ray image (``.../ray``, ``ray-ml``, ``ray-llm``) and whose tag starts with a
version; a missing ``rayVersion`` is reported too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import cluster_spec
from policies.rules.base import NOT_DEV, ResourceRule, RuleContext
from policies.rules.helpers import images, split_image

_VERSION_TAG = re.compile(r"^(\d+\.\d+\.\d+)(?:$|[-_.])")
_RAY_REPO = re.compile(r"(^|/)ray(-ml|-llm)?$")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    found = cluster_spec(props)
    if found is None:
        return
    base, spec = found
    version = spec.get("rayVersion")
    for path, image in images(props):
        repo, tag, _ = split_image(image)
        if not _RAY_REPO.search(repo) or tag is None:
            continue
        match = _VERSION_TAG.match(tag)
        if match is None:
            continue
        if not isinstance(version, str) or not version:
            yield f"{base}.rayVersion: missing; set it to the image's Ray version {match.group(1)}"
            return
        if match.group(1) != version:
            yield f"{path}: {image!r} is Ray {match.group(1)} but rayVersion is {version}; use one release for both"


RULE = ResourceRule(
    name="image-ray-version",
    description="Ray image tags match the cluster's rayVersion.",
    levels=NOT_DEV,
    check=check,
)
