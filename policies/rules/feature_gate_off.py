"""feature-gate-off (stack rule): every field used has its operator feature gate on.

Severity: mandatory everywhere.

Why: KubeRay ignores (or rejects) fields behind an alpha gate that is off: a rocksdb GCS backend,
``networkPolicy``, ``tlsOptions``, ``historyServerOptions`` or a RayCronJob would apply cleanly and
then do nothing. The gates in force are read from the operator among the resources: its Deployment's
``--feature-gates`` argument, or the kuberay-operator chart's ``featureGates`` values; else from the
policy config option ``operatorFeatureGates`` (gate -> enabled, over KubeRay 1.7.0's defaults), for
manifests linted without their operator. With neither the gates are unknown: this rule says nothing
and ``feature-gates-unknown`` (advisory) says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.feature_gates import FIELD_GATES, gates_used_by
from components.manifests.ray_objects import as_list, as_map, dig
from components.upstream import FEATURE_GATES
from policies.rules.base import MANDATORY, Resource, RuleContext, StackRule, as_object, levels

CHART_TYPES = ("kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart", "kubernetes:helm.sh/v3:Release")


def _from_args(obj: Mapping[str, Any]) -> dict[str, bool] | None:
    for container in as_list(dig(obj, "spec", "template", "spec", "containers")):
        for arg in as_list(as_map(container).get("args")) + as_list(as_map(container).get("command")):
            if isinstance(arg, str) and arg.startswith("--feature-gates="):
                gates = {}
                for item in arg.split("=", 1)[1].split(","):
                    name, _, value = item.partition("=")
                    if name:
                        gates[name.strip()] = value.strip().lower() == "true"
                return gates
    return None


OPTIONS: dict[str, dict[str, Any]] = {
    "operatorFeatureGates": {
        "type": "object",
        "additionalProperties": {"type": "boolean"},
        "description": "The operator's gates (over KubeRay 1.7.0's defaults) when it is not among the inputs.",
    }
}


def operator_gates(
    resources: list[Resource], configured: Mapping[str, Any] | None = None
) -> tuple[dict[str, bool], str] | None:
    """(gate -> enabled, where that was read) for the operator among ``resources``, else from the
    ``operatorFeatureGates`` option; None when neither tells."""
    for rtype, props in resources:
        if rtype in CHART_TYPES and props.get("chart") == "kuberay-operator":
            listed = as_list(dig(props, "values", "featureGates"))
            gates = dict(FEATURE_GATES)
            gates.update({str(as_map(g).get("name")): as_map(g).get("enabled") is True for g in listed})
            return gates, "the kuberay-operator chart values"
        obj = as_object(rtype, props)
        if obj.get("kind") == "Deployment":
            found = _from_args(obj)
            if found is not None:
                return {**FEATURE_GATES, **found}, f"Deployment {dig(obj, 'metadata', 'name')} --feature-gates"
    if configured is not None:
        return {**FEATURE_GATES, **{str(k): v is True for k, v in configured.items()}}, "the policy config"
    return None


def _configured(ctx: RuleContext) -> Mapping[str, Any] | None:
    """The ``operatorFeatureGates`` option, or None when absent ({} means: upstream defaults)."""
    raw = ctx.options.get("operatorFeatureGates")
    return as_map(raw) if raw is not None else None


def check(resources: list[Resource], ctx: RuleContext) -> Iterator[tuple[int, str]]:
    found = operator_gates(resources, _configured(ctx))
    if found is None:
        return
    gates, source = found
    for i, (rtype, props) in enumerate(resources):
        for gate in sorted(gates_used_by(as_object(rtype, props))):
            if not gates.get(gate, False):
                yield (
                    i,
                    (
                        f"uses {FIELD_GATES[gate]}, which needs the operator feature gate {gate}, off in {source}; "
                        f"enable it (platform.operator.featureGates.{gate}: true)"
                    ),
                )


RULE = StackRule(
    name="feature-gate-off",
    description="Fields behind an operator feature gate are used only with the gate on.",
    levels=MANDATORY,
    options=OPTIONS,
    check=check,
)


def check_unknown(resources: list[Resource], ctx: RuleContext) -> Iterator[tuple[int, str]]:
    if operator_gates(resources, _configured(ctx)) is not None:
        return
    for i, (rtype, props) in enumerate(resources):
        for gate in sorted(gates_used_by(as_object(rtype, props))):
            if FEATURE_GATES.get(gate, False):
                continue  # a beta gate, on unless someone switched it off
            yield (
                i,
                f"uses {FIELD_GATES[gate]}, which needs the operator feature gate {gate} (off by default in KubeRay "
                "1.7.0): no kuberay-operator is among the inputs to tell whether it is on; lint it together with "
                "the operator (chart values or Deployment), or set operatorFeatureGates in the policy config",
            )


UNKNOWN_RULE = StackRule(
    name="feature-gates-unknown",
    description="Fields behind an operator feature gate, judged without the operator: the gate is unknown.",
    levels=levels("advisory", "advisory", "advisory"),
    options=OPTIONS,
    check=check_unknown,
)
