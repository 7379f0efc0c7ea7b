"""llm-accelerator-advertised: an LLM model's accelerator type is a resource some worker group declares.

Severity: mandatory everywhere (the service cannot scale out, and an incremental upgrade stalls).

Why: with ``accelerator_type: A100`` Ray Serve LLM asks for ``accelerator_type:A100`` in every
placement bundle (``GPUAccelerator.default_bundles``, Ray 2.60.0). Ray's KubeRay autoscaler builds
its node types only from what a group declares: ``rayStartParams`` (``num-cpus``, ``num-gpus``,
``memory``, ``resources``), the group's ``resources`` map and container limits
(``_get_ray_resources_from_group_spec`` in ray/autoscaler/_private/kuberay/autoscaling_config.py);
the raylet adds ``accelerator_type:<X>`` only on nodes already running. So no new node ever looks
able to host a replica: the service never scales out, and the pending cluster of an incremental
upgrade, which starts at zero workers, stays empty. Declare it on the GPU group:
``rayStartParams.resources: '{"accelerator_type:A100": 1}'`` (or the group's ``resources`` map).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_map, dig, pod_groups
from policies.rules.base import MANDATORY, ResourceRule, RuleContext
from policies.rules.helpers import llm_configs, parse_yaml
from policies.rules.serve_config_schema import serve_config_errors

PREFIX = "accelerator_type:"


def declared_resources(group: Mapping[str, Any]) -> set[str]:
    """Custom Ray resources a group declares, read as Ray's autoscaling config builder reads them."""
    names = {str(k) for k in as_map(group.get("resources"))}
    raw = as_map(group.get("rayStartParams")).get("resources")
    if isinstance(raw, str) and len(raw) >= 2:
        try:
            parsed = json.loads(raw[1:-1].replace("\\", ""))  # the builder's own parsing
        except ValueError:
            parsed = None
        if isinstance(parsed, Mapping):
            names |= {str(k) for k in parsed}
    return names


def requested_types(props: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(where, accelerator type) of every LLM config naming one."""
    doc, error = parse_yaml(dig(props, "spec", "serveConfigV2"))
    if error is not None:
        return []
    found = []
    for i, j, config in llm_configs(doc):
        accelerator = as_map(config).get("accelerator_type")
        if isinstance(accelerator, str) and accelerator:
            found.append((f"applications[{i}].args.llm_configs[{j}]", accelerator))
    return found


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    text = dig(props, "spec", "serveConfigV2")
    if props.get("kind") != "RayService" or not isinstance(text, str) or serve_config_errors(text):
        return  # an invalid config is serve-config-schema's to report
    declared = set()
    for group in pod_groups(props):
        if group.role == "worker":
            declared |= declared_resources(group.group)
    for where, accelerator in requested_types(props):
        if PREFIX + accelerator not in declared:
            yield (
                f"spec.serveConfigV2: {where} asks for accelerator_type {accelerator!r}, but no worker group "
                f"declares the resource '{PREFIX}{accelerator}': the autoscaler cannot add nodes for it; declare "
                f"rayStartParams.resources: '{{\"{PREFIX}{accelerator}\": 1}}' on the GPU group"
            )


RULE = ResourceRule(
    name="llm-accelerator-advertised",
    description="An LLM model's accelerator_type is declared as a resource by a worker group.",
    levels=MANDATORY,
    check=check,
)
