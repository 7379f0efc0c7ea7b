"""worker-groups-by-hardware: one worker group per hardware type, and CPU groups off accelerator nodes.

Severity: advisory in dev and staging, mandatory in prod.

Why: groups scale independently only when each holds one kind of hardware; a group mixing GPU and
TPU pods cannot be sized for either, and a CPU-only group that tolerates accelerator taints or
selects accelerator nodes lets CPU work occupy (and keep awake) expensive GPU/TPU nodes
(seeds ch. 9.2 and the anti-pattern table in 9.9).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import ACCELERATOR_RESOURCES, as_list, as_map, group_accelerators, pod_groups
from policies.rules.base import PROD_ONLY, ResourceRule, RuleContext

ACCELERATOR_NODE_LABELS = (
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-tpu-accelerator",
    "cloud.google.com/gke-tpu-topology",
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.product",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-name",
)


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        if group.role != "worker":
            continue
        kinds = sorted(group_accelerators(group))
        if len(kinds) > 1:
            yield (
                f"{group.path} ({group.name}) mixes {' and '.join(kinds)} in one group: "
                "split it into one worker group per hardware type"
            )
        if kinds:
            continue
        for i, tol in enumerate(as_list(group.pod_spec.get("tolerations"))):
            key = as_map(tol).get("key")
            if key in ACCELERATOR_RESOURCES or (key is None and as_map(tol).get("operator") == "Exists"):
                yield (
                    f"{group.path}.template.spec.tolerations[{i}]: CPU-only group {group.name} tolerates "
                    f"{key or 'every taint'}, so CPU work can land on accelerator nodes; drop the toleration"
                )
        selector = as_map(group.pod_spec.get("nodeSelector"))
        for label in ACCELERATOR_NODE_LABELS:
            if label in selector:
                yield (
                    f"{group.path}.template.spec.nodeSelector: CPU-only group {group.name} selects accelerator "
                    f"nodes ({label}); select a CPU pool instead"
                )


RULE = ResourceRule(
    name="worker-groups-by-hardware",
    description="One worker group per hardware type; CPU-only groups stay off GPU/TPU nodes.",
    levels=PROD_ONLY,
    check=check,
)
