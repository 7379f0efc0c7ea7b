"""GitOps pull mode: the Pulumi Kubernetes Operator's chart, the workspaces' access and the Stacks."""

from __future__ import annotations

import pulumi

from components.charts import namespaced_chart
from components.manifests.gitops import GitOpsManifests
from components.objects import KubernetesObject, object_key


class GitOpsOperator(pulumi.ComponentResource):
    """The operator (its CRDs retained on destroy), then the Stack objects it reconciles. A prod Stack
    never destroys on finalize, and is protected: deleting it from this stack needs an unprotect."""

    def __init__(self, name: str, manifests: GitOpsManifests, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:GitOpsOperator", name, None, opts)
        spec = manifests.spec
        ns, chart = namespaced_chart(
            name, "pulumi-kubernetes-operator", spec.chart, spec.chart_version, manifests.namespace, {}, parent=self
        )
        access = [
            KubernetesObject(
                f"{name}-{obj['kind'].lower()}-{object_key(obj)}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=[ns]),
            )
            for obj in manifests.access
        ]
        self.stacks = [
            KubernetesObject(
                f"{name}-stack-{obj['metadata']['name']}",
                obj,
                pulumi.ResourceOptions(
                    parent=self,
                    depends_on=[chart, *access],
                    protect=obj["metadata"]["labels"].get("kuberay-platform.io/stack-environment") == "prod",
                ),
            )
            for obj in manifests.stacks
        ]
        self.register_outputs(
            {"namespace": ns.metadata.name, "stacks": [s["metadata"]["name"] for s in manifests.stacks]}
        )
