"""kuberay-platform: the stack's config -> KubeRayPlatform -> exports."""

import pulumi

from components.platform import KubeRayPlatform
from components.stack_config import load_stack
from components.workloads import workload_refs

manifests = load_stack()
platform = KubeRayPlatform("kuberay", manifests)

pulumi.export("environment", manifests.spec.environment)
pulumi.export("operatorNamespace", platform.operator.namespace)
pulumi.export("featureGates", platform.feature_gates)
pulumi.export("workloads", workload_refs(manifests.workloads))
