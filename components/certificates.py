"""CertManager: cert-manager from its pinned chart when the stack installs it, the platform's
ClusterIssuers after it (its ``startupapicheck`` Job, awaited as part of the chart, passes only once
the webhook answers), and the dashboard certificates after the issuers and the namespaces."""

from __future__ import annotations

import pulumi

from components.charts import namespaced_chart
from components.manifests.certificates import CertManagerManifests
from components.objects import ObjectGroup


class CertificateObjects(ObjectGroup):
    TYPE = "kuberay-platform:index:CertificateObjects"


class CertManager(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        manifests: CertManagerManifests,
        after: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kuberay-platform:index:CertManager", name, None, opts)
        spec = manifests.spec
        self.installed: list[pulumi.Resource] = []
        if spec.install is not None and manifests.namespace is not None and manifests.values is not None:
            _, chart = namespaced_chart(
                name,
                "cert-manager",
                spec.install.chart,
                spec.install.chart_version,
                manifests.namespace,
                manifests.values,
                parent=self,
            )
            self.installed.append(chart)
        issuers = (
            [
                CertificateObjects(
                    f"{name}-issuers", manifests.issuers, after=self.installed, opts=pulumi.ResourceOptions(parent=self)
                )
            ]
            if manifests.issuers
            else []
        )
        self.ready: list[pulumi.Resource] = [*self.installed, *issuers]
        if manifests.certificates:
            self.ready.append(
                CertificateObjects(
                    f"{name}-certificates",
                    manifests.certificates,
                    after=[*self.installed, *issuers, *after],
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        self.register_outputs({})
