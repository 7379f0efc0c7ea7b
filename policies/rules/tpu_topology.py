"""tpu-topology-selectors: multi-host TPU groups select their slice's accelerator and topology.

Severity: mandatory everywhere.

Why: on GKE a multi-host TPU slice is a node pool with one accelerator type and topology; a worker
group with ``numOfHosts > 1`` and ``google.com/tpu`` must select both
``cloud.google.com/gke-tpu-accelerator`` and ``cloud.google.com/gke-tpu-topology`` or its hosts
land on nodes of different slices and the job never starts (seeds ch. 8.3; KubeRay TPU samples).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, group_accelerators, number, pod_groups
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

SELECTORS = ("cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-tpu-topology")


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        hosts = number(group.group.get("numOfHosts", 1)) or 1
        if group.role != "worker" or hosts <= 1 or "google.com/tpu" not in group_accelerators(group):
            continue
        selector = as_map(group.pod_spec.get("nodeSelector"))
        missing = [s for s in SELECTORS if s not in selector]
        if missing:
            yield (
                f"{group.path}.template.spec.nodeSelector: multi-host TPU group {group.name} "
                f"(numOfHosts {int(hosts)}) must select {' and '.join(missing)}"
            )


RULE = ResourceRule(
    name="tpu-topology-selectors",
    description="Multi-host TPU worker groups select gke-tpu-accelerator and gke-tpu-topology.",
    levels=MANDATORY,
    check=check,
)
