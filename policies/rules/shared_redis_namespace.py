"""shared-redis-storage-namespace (stack rule): clusters sharing a Redis keep their GCS state apart.

Severity: mandatory everywhere.

Why: GCS fault tolerance stores each cluster's state under ``externalStorageNamespace`` in Redis;
two clusters with the same Redis and the same namespace overwrite each other's state and recover
the wrong cluster after a head restart (seeds ch. 8.2: "different RayClusters use different
externalStorageNamespace"). Without an explicit namespace KubeRay uses the cluster's UID, which
is unique, so only explicit collisions are reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.manifests.ray_objects import as_map, cluster_spec, object_ref
from policies.rules.base import MANDATORY, Resource, RuleContext, StackRule, as_object


def check(resources: list[Resource], ctx: RuleContext) -> Iterator[tuple[int, str]]:
    owners: dict[tuple[str, str], str] = {}
    for i, (rtype, props) in enumerate(resources):
        obj = as_object(rtype, props)
        found = cluster_spec(obj)
        if found is None:
            continue
        base, spec = found
        ft = as_map(spec.get("gcsFaultToleranceOptions"))
        address, namespace = ft.get("redisAddress"), ft.get("externalStorageNamespace")
        if not (isinstance(address, str) and isinstance(namespace, str) and address and namespace):
            continue
        key = (address, namespace)
        if key in owners:
            yield (
                i,
                (
                    f"{base}.gcsFaultToleranceOptions.externalStorageNamespace {namespace!r} on Redis {address} is "
                    f"already used by {owners[key]}; give each cluster its own namespace"
                ),
            )
        else:
            owners[key] = object_ref(obj)


RULE = StackRule(
    name="shared-redis-storage-namespace",
    description="No two clusters share one Redis externalStorageNamespace.",
    levels=MANDATORY,
    check=check,
)
