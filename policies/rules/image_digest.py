"""image-digest: images are referenced by digest where you require it.

Severity: disabled by default. A platform that requires digests switches it on per environment in
``policies/config/<env>.json`` (``"enforcementLevel": "mandatory"``), the file that
``pulumi preview --policy-pack-config``, ``make preview`` and ``make lint`` all read.

Why: a tag can be re-pushed; only a digest (``repo:tag@sha256:...``) guarantees every node runs the
bytes that were scanned and tested (supply-chain practice; SLSA, Kubernetes image docs).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from policies.rules.base import ResourceRule, RuleContext, levels
from policies.rules.helpers import images, split_image


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for path, image in images(props):
        if split_image(image)[2] is None:
            yield f"{path}: {image!r} has no digest; reference it as repository:tag@sha256:<digest>"


RULE = ResourceRule(
    name="image-digest",
    description="Images are pinned by digest (where required).",
    levels=levels("disabled", "disabled", "disabled"),
    check=check,
)
