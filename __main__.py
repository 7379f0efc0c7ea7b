"""kuberay-platform: the stack's config -> KubeRayPlatform -> exports."""

import pulumi

from components.platform import KubeRayPlatform
from components.stack_config import load_stack

manifests = load_stack()
platform = KubeRayPlatform("kuberay", manifests)

pulumi.export("environment", manifests.spec.environment)
pulumi.export("operatorNamespace", platform.operator.namespace)
pulumi.export("featureGates", platform.feature_gates)
pulumi.export("rayClusters", [f"{c['metadata']['namespace']}/{c['metadata']['name']}" for c in manifests.ray_clusters])
