"""serving-without-gcs-ft: a RayService must have GCS fault tolerance.

Severity: advisory in dev and staging, mandatory in prod.

Why: without GCS fault tolerance a head restart loses the cluster state: workers cannot rejoin and
every Serve replica is lost, so serving stops (seeds ch. 8.2, 9.6 and the anti-pattern table in
9.9; KubeRay docs "GCS fault tolerance"). Redis (standalone, durable) or the embedded RocksDB
backend both qualify.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import annotations_of, dig
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayService" or dig(props, "spec", "rayClusterConfig") is None:
        return
    if dig(props, "spec", "rayClusterConfig", "gcsFaultToleranceOptions") is not None:
        return
    if str(annotations_of(props).get("ray.io/ft-enabled", "")).lower() == "true":
        return  # the legacy annotation form
    yield (
        "spec.rayClusterConfig.gcsFaultToleranceOptions: missing; a head restart would stop serving. "
        "Enable GCS fault tolerance (backend redis with a durable standalone Redis, or backend rocksdb)"
    )


RULE = ResourceRule(
    name="serving-without-gcs-ft",
    description="RayService needs GCS fault tolerance so a head restart does not stop serving.",
    levels=PROD_ONLY,
    check=check,
)
