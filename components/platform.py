"""KubeRayPlatform: composes the operator and the workloads of one environment."""

from __future__ import annotations

import pulumi

from components.certificates import CertManager
from components.gitops import GitOpsOperator
from components.kueue import KueueInstall, KueueQueues, KueueQueuesArgs
from components.manifests.platform import PlatformManifests
from components.monitoring import PrometheusStack, RayMonitoring
from components.namespaces import PlatformNamespaces, PlatformNamespacesArgs
from components.network import NamespacePolicies
from components.objects import Namespaced
from components.operator import KubeRayOperator, KubeRayOperatorArgs, TeamOperator
from components.secrets import RayAuthTokens
from components.storage import GcsStorage, GcsStorageArgs
from components.tenancy import Teams
from components.workloads import RAY_WORKLOADS_TYPE, RayWorkloads, RayWorkloadsArgs, SharedVolumes


class KubeRayPlatform(pulumi.ComponentResource):
    def __init__(self, name: str, manifests: PlatformManifests, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("kuberay-platform:index:KubeRayPlatform", name, None, opts)
        spec = manifests.spec
        # Namespaces first: the chart renders a Role per watched namespace, and workloads live in them.
        self.namespaces = PlatformNamespaces(
            f"{name}-namespaces",
            PlatformNamespacesArgs(
                namespaces=manifests.workload_namespaces,
                protect=spec.namespaces_protected,
                # Until this component existed, RayWorkloads created them as f"{name}-workloads-ns-<ns>".
                legacy_parent=pulumi.create_urn(f"{name}-workloads", RAY_WORKLOADS_TYPE, parent=self),
                legacy_prefix=f"{name}-workloads",
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.operator = KubeRayOperator(
            f"{name}-operator",
            KubeRayOperatorArgs(
                spec=spec.operator,
                namespace=manifests.operator_namespace,
                values=manifests.operator_values,
                namespaces=list(self.namespaces.resources),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        # GCS Redis servers before the clusters that use them; on destroy the clusters go first, and
        # KubeRay's Redis cleanup Jobs can still reach them.
        self.storage = [
            GcsStorage(
                f"{name}-gcs-{redis.name}",
                GcsStorageArgs(redis=redis, protect=spec.gcs_state_protected, after=[self.namespaces]),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for redis in manifests.redis
        ]
        # Kueue's webhooks intercept Ray objects: when the stack installs Kueue, everything Ray comes
        # after it (and goes before it on destroy).
        kueue_install = (
            [KueueInstall(f"{name}-kueue-install", manifests.kueue_install, opts=pulumi.ResourceOptions(parent=self))]
            if manifests.kueue_install is not None
            else []
        )
        self.kueue_queues = (
            [
                KueueQueues(
                    f"{name}-kueue",
                    KueueQueuesArgs(objects=manifests.kueue, after=[self.namespaces, *kueue_install]),
                    opts=pulumi.ResourceOptions(parent=self),
                )
            ]
            if manifests.kueue
            else []
        )
        self.kueue: list[pulumi.Resource] = [*kueue_install, *self.kueue_queues]
        # Team quotas and their LimitRange defaults exist before any pod of the team's workloads.
        self.teams = (
            [Teams(f"{name}-teams", manifests.teams, after=[self.namespaces], opts=pulumi.ResourceOptions(parent=self))]
            if manifests.teams
            else []
        )
        # cert-manager, its issuers and the dashboard certificates before the workloads (their
        # ingresses use the certificates; KubeRay's mTLS issues through cert-manager).
        self.certificates = (
            [
                CertManager(
                    f"{name}-cert-manager",
                    manifests.cert_manager,
                    after=[self.namespaces],
                    opts=pulumi.ResourceOptions(parent=self),
                )
            ]
            if manifests.cert_manager is not None
            else []
        )
        # Teams' own operators, once the platform's has installed the CRDs and their namespaces exist.
        self.team_operators = [
            TeamOperator(
                f"{name}-team-{team}-operator",
                spec.operator,
                namespace,
                values,
                after=[self.namespaces, self.operator],
                opts=pulumi.ResourceOptions(parent=self),
            )
            for team, namespace, values in manifests.team_operators
        ]
        # NFS exports as PersistentVolumes and claims, before the workloads that mount them.
        self.volumes = (
            [
                SharedVolumes(
                    f"{name}-volumes",
                    manifests.shared_volumes,
                    after=[self.namespaces],
                    opts=pulumi.ResourceOptions(parent=self),
                )
            ]
            if manifests.shared_volumes
            else []
        )
        # Ray auth tokens from config secrets, before the workloads that name them.
        self.tokens = (
            [
                RayAuthTokens(
                    f"{name}-tokens",
                    manifests.token_secrets,
                    after=[self.namespaces],
                    opts=pulumi.ResourceOptions(parent=self),
                )
            ]
            if manifests.token_secrets
            else []
        )
        # Default deny and its allowances before any Ray pod starts.
        self.network = (
            [
                NamespacePolicies(
                    f"{name}-network",
                    manifests.network_policies,
                    after=[self.namespaces],
                    opts=pulumi.ResourceOptions(parent=self),
                )
            ]
            if manifests.network_policies
            else []
        )
        # Workloads wait for the operator (its chart installs the CRDs they are instances of) and
        # their namespaces; on destroy they go first, while the operator can still finalize them.
        # Of what lives in the workloads' namespaces (local queues, quotas, policies, tokens, claims, a
        # team's operator), each waits for only what concerns it: its namespace's, its own policies.
        everywhere: list[pulumi.Resource] = [self.operator, self.namespaces, *kueue_install, *self.storage]
        everywhere += self.certificates
        namespaced: list[Namespaced] = [
            *self.kueue_queues,
            *self.teams,
            *self.network,
            *self.tokens,
            *self.volumes,
            *self.team_operators,
        ]
        self.workloads = RayWorkloads(
            f"{name}-workloads",
            RayWorkloadsArgs(
                workloads=manifests.workloads,
                gateways=manifests.gateways,
                after=everywhere,
                namespaced=namespaced,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[
                    *everywhere,
                    *self.kueue,
                    *self.teams,
                    *self.network,
                    *self.tokens,
                    *self.volumes,
                    *self.team_operators,
                ],
            ),
        )
        # kube-prometheus-stack (its CRDs and Prometheus) before the monitors and rules it reads.
        self.prometheus_stack = (
            [
                PrometheusStack(
                    f"{name}-prometheus-stack", manifests.prometheus_stack, opts=pulumi.ResourceOptions(parent=self)
                )
            ]
            if manifests.prometheus_stack is not None
            else []
        )
        self.monitoring = (
            RayMonitoring(
                f"{name}-monitoring",
                manifests.monitoring,
                after=[self.namespaces, *self.prometheus_stack],
                opts=pulumi.ResourceOptions(parent=self),
            )
            if manifests.monitoring
            else None
        )
        # GitOps pull mode: independent of the platform's own objects (its Stacks deploy other stacks).
        self.gitops = (
            [GitOpsOperator(f"{name}-gitops", manifests.gitops, opts=pulumi.ResourceOptions(parent=self))]
            if manifests.gitops is not None
            else []
        )
        self.feature_gates = {g["name"]: g["enabled"] for g in manifests.operator_values["featureGates"]}
        self.register_outputs(
            {
                "environment": spec.environment,
                "operatorNamespace": self.operator.namespace,
                "featureGates": self.feature_gates,
            }
        )
