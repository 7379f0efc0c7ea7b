"""KubeRayPlatform: composes the operator and the workloads of one environment."""

from __future__ import annotations

import pulumi

from components.manifests.platform import PlatformManifests
from components.operator import KubeRayOperator, KubeRayOperatorArgs
from components.workloads import RayWorkloads, RayWorkloadsArgs


class KubeRayPlatform(pulumi.ComponentResource):
    def __init__(self, name: str, manifests: PlatformManifests, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:KubeRayPlatform", name, None, opts)
        spec = manifests.spec
        self.operator = KubeRayOperator(
            f"{name}-operator",
            KubeRayOperatorArgs(
                spec=spec.operator, namespace=manifests.operator_namespace, values=manifests.operator_values
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        # Workloads wait for the operator: its chart installs the CRDs they are instances of.
        self.workloads = RayWorkloads(
            f"{name}-workloads",
            RayWorkloadsArgs(namespaces=manifests.workload_namespaces, workloads=manifests.workloads),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.operator]),
        )
        self.feature_gates = {g["name"]: g["enabled"] for g in manifests.operator_values["featureGates"]}
        self.register_outputs(
            {
                "environment": spec.environment,
                "operatorNamespace": self.operator.namespace,
                "featureGates": self.feature_gates,
            }
        )
