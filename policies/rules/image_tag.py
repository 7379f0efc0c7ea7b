"""image-tag: every Ray pod image is pinned to a release tag.

Severity: advisory in dev, mandatory in staging and prod.

Why: ``latest``, ``nightly`` or no tag at all means each node may pull a different build; a head and
its workers on different Ray builds fail in confusing ways, and a rollback has nothing to return to
(seeds ch. 9.3; KubeRay docs: image tag must match rayVersion).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from policies.rules.base import NOT_DEV, ResourceRule, RuleContext
from policies.rules.helpers import images, split_image

MOVING_TAGS = ("latest", "nightly")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for path, image in images(props):
        _, tag, digest = split_image(image)
        if digest:
            continue
        if tag is None:
            yield f"{path}: {image!r} has no tag (means latest); pin a release tag such as 2.60.0-py311"
        elif tag.startswith(MOVING_TAGS):  # latest, latest-gpu, nightly, nightly-py311, ...
            yield f"{path}: {image!r} uses the moving tag {tag!r}; pin a release tag such as 2.60.0-py311"


RULE = ResourceRule(
    name="image-tag",
    description="Ray images are pinned to a release tag (not latest, nightly or untagged).",
    levels=NOT_DEV,
    check=check,
)
