"""The KubeRay operator: its namespace and the pinned kuberay-operator Helm chart."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.charts import namespaced_chart
from components.spec import OperatorSpec


@dataclass(frozen=True)
class KubeRayOperatorArgs:
    spec: OperatorSpec
    namespace: dict[str, Any]
    """The operator namespace object (with Pod Security Admission labels)."""
    values: dict[str, Any]
    """Chart values, built by ``components.manifests.operator_values``."""
    namespaces: list[pulumi.Resource] = field(default_factory=list)
    """Namespaces the chart renders into (watched namespaces get a Role and RoleBinding each,
    ``templates/multiple_namespaces_role.yaml``): they must exist first."""


class KubeRayOperator(pulumi.ComponentResource):
    namespace: pulumi.Output[str]

    def __init__(self, name: str, args: KubeRayOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:KubeRayOperator", name, None, opts)
        ns, self.chart = namespaced_chart(
            name,
            "kuberay-operator",
            args.spec.chart,
            args.spec.chart_version,
            args.namespace,
            args.values,
            parent=self,
            after=args.namespaces,
        )
        self.namespace = ns.metadata.name
        self.register_outputs({"namespace": self.namespace, "chartVersion": args.spec.chart_version})
