"""RayAuthTokens: the Ray auth token Secrets the stack creates from Pulumi config secrets (key
``auth_token``, what KubeRay reads), in the workloads' namespaces before the workloads that name them.
The value stays a Pulumi secret: encrypted in state, never in a manifest or a log."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.spec.workloads import AUTH_TOKEN_KEY
from components.stack_config import config_secret


class RayAuthTokens(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        secrets: list[tuple[dict[str, Any], str]],
        after: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kuberay-platform:index:RayAuthTokens", name, None, opts)
        self.secrets = [
            k8s.core.v1.Secret(
                f"{name}-{meta['namespace']}-{meta['name']}",
                metadata=meta,
                type="Opaque",
                string_data={AUTH_TOKEN_KEY: config_secret(key, "the Ray auth token")},
                opts=pulumi.ResourceOptions(parent=self, depends_on=after),
            )
            for meta, key in secrets
        ]
        self._namespaces = [str(meta["namespace"]) for meta, _ in secrets]
        self.register_outputs({})

    def needed_by(self, namespace: str, workload: str) -> list[pulumi.Resource]:
        return [s for s, ns in zip(self.secrets, self._namespaces, strict=True) if ns == namespace]
