"""accelerator-params: ``rayStartParams`` and accelerator resources agree.

Severity: mandatory everywhere (a cluster configured this way schedules work that cannot run).

Why: Ray schedules GPU tasks by ``num-gpus``; KubeRay fills it from the container's
``nvidia.com/gpu`` (or ``amd.com/gpu``) limit. A ``num-gpus`` without GPU resources makes Ray
place GPU work on pods that have none; a different explicit value over- or under-books the GPUs
the pod really has (seeds ch. 8.3: "KubeRay maps nvidia.com/gpu to --num-gpus"). Likewise a
``TPU`` custom resource needs ``google.com/tpu`` chips.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, group_accelerators, is_gpu_resource, number, pod_groups
from policies.rules.base import MANDATORY, ResourceRule, RuleContext


def _custom_tpu(params: Mapping[str, Any]) -> float | None:
    raw = params.get("resources")
    if not isinstance(raw, str):
        return None
    try:
        parsed = json.loads(raw.strip().strip("'\""))
    except ValueError:
        return None
    return number(parsed.get("TPU")) if isinstance(parsed, dict) else None


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        params = group.ray_start_params
        accel = group_accelerators(group)
        gpus = sum(v for k, v in accel.items() if is_gpu_resource(k))
        where = f"{group.path}.rayStartParams"
        if "num-gpus" in params:
            declared = number(params["num-gpus"])
            if declared and not gpus:
                yield (
                    f"{where}.num-gpus is {params['num-gpus']!r} but the pod requests no GPU (nvidia.com/gpu, "
                    "amd.com/gpu or a MIG profile); add the GPU limit or drop num-gpus"
                )
            elif declared is not None and gpus and declared != gpus:
                yield (
                    f"{where}.num-gpus is {params['num-gpus']!r} but the pod has {int(gpus)} GPU(s); "
                    "drop num-gpus (KubeRay derives it) or make them equal"
                )
        tpu = _custom_tpu(params)
        if tpu and "google.com/tpu" not in accel:
            yield f"{where}.resources declares TPU but the pod requests no google.com/tpu; add the TPU limit"
        # KubeRay 1.5+: Ray resources declared on the group itself (``resources: {GPU: "1"}``).
        group_resources = as_map(group.group.get("resources"))
        if (number(group_resources.get("GPU")) or 0) > 0 and not gpus:
            yield (
                f"{group.path}.resources declares GPU {group_resources.get('GPU')!r} but the pod requests no "
                "nvidia.com/gpu or amd.com/gpu; add the GPU limit"
            )
        if (number(group_resources.get("TPU")) or 0) > 0 and "google.com/tpu" not in accel:
            yield f"{group.path}.resources declares TPU but the pod requests no google.com/tpu; add the TPU limit"


RULE = ResourceRule(
    name="accelerator-params",
    description="num-gpus / TPU params match the pod's nvidia.com/gpu, amd.com/gpu, google.com/tpu resources.",
    levels=MANDATORY,
    check=check,
)
