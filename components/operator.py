"""The KubeRay operator: its namespace and the pinned kuberay-operator Helm chart; and teams' own
operators in their namespaces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.charts import chart_source_args, namespaced_chart
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


class TeamOperator(pulumi.ComponentResource):
    """A team's own KubeRay operator: the platform's pinned chart released into the team's namespace
    in single-namespace mode, without CRDs (the platform's operator chart owns them), after the
    namespace and the platform's operator."""

    def __init__(
        self,
        name: str,
        spec: OperatorSpec,
        namespace: str,
        values: dict[str, Any],
        after: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kuberay-platform:index:TeamOperator", name, None, opts)
        self.chart = k8s.helm.v4.Chart(
            f"{name}-chart",
            k8s.helm.v4.ChartArgs(
                name="kuberay-operator",
                **chart_source_args(spec.chart, "kuberay-operator", spec.chart_version),
                namespace=namespace,
                values=values,
                skip_crds=True,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=after),
        )
        self.namespace = namespace
        self.register_outputs({"namespace": namespace})

    def needed_by(self, namespace: str, workload: str) -> list[pulumi.Resource]:
        return [self] if namespace == self.namespace else []
