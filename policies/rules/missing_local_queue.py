"""missing-local-queue (stack rule): a queue label names a LocalQueue that exists.

Severity: mandatory everywhere.

Why: a workload labelled ``kueue.x-k8s.io/queue-name: q`` waits (suspended) until Kueue admits it
through LocalQueue ``q`` in its namespace; if there is no such LocalQueue it waits forever, with no
error on the workload. Checked when the resources define Kueue queues (a platform that manages
Kueue); with no LocalQueue among them the queues live elsewhere and cannot be checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.manifests.ray_objects import QUEUE_LABEL, metadata_of, queue_name
from policies.rules.base import MANDATORY, Resource, RuleContext, StackRule, as_object


def check(resources: list[Resource], ctx: RuleContext) -> Iterator[tuple[int, str]]:
    objects = [as_object(rtype, props) for rtype, props in resources]
    queues = {
        (str(metadata_of(o).get("namespace") or "default"), str(metadata_of(o).get("name")))
        for o in objects
        if o.get("kind") == "LocalQueue" and str(o.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
    }
    if not queues:
        return
    for i, obj in enumerate(objects):
        queue = queue_name(obj)
        namespace = str(metadata_of(obj).get("namespace") or "default")
        if queue is not None and (namespace, queue) not in queues:
            known = sorted(q for ns, q in queues if ns == namespace)
            yield (
                i,
                (
                    f"metadata.labels.{QUEUE_LABEL}: no LocalQueue {queue!r} in namespace {namespace} "
                    f"(there: {', '.join(known) or 'none'}); the workload would wait forever"
                ),
            )


RULE = StackRule(
    name="missing-local-queue",
    description="Kueue queue labels name an existing LocalQueue in the workload's namespace.",
    levels=MANDATORY,
    check=check,
)
