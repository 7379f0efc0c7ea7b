"""GitOps pull mode (``platform.gitops``): the Pulumi Kubernetes Operator (chart 2.9.0) in a management
cluster, and one ``pulumi.com/v1`` Stack per environment that it keeps in sync with this repository.

An alternative to the push-mode workflows (``.github/workflows/``): the operator clones the branch,
runs ``pulumi up`` for each Stack, and again every ``resyncFrequencySeconds`` or on a new commit."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from components.spec.base import K8sName, Model
from components.spec.chart import ChartSource

PKO_CHART_OCI = "oci://ghcr.io/pulumi/helm-charts/pulumi-kubernetes-operator"


class SecretKey(Model):
    """A key of a Secret in the operator's namespace (created outside the stack)."""

    name: K8sName
    key: str = Field(min_length=1)


class GitOpsStack(Model):
    name: K8sName
    """The Stack object's name (and the stack file ``stacks/Pulumi.<stack>.yaml`` unless ``stack`` says)."""
    stack: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+){0,2}$")
    """The Pulumi stack, ``<org>/kuberay-platform/<stack>`` or ``<stack>``; default: ``name``."""
    environment: Literal["dev", "staging", "prod"]
    """The environment the stack deploys: prod stacks never destroy on finalize."""
    branch: str | None = None
    """The branch to track; default ``gitops.branch``."""
    destroy_on_finalize: bool = False
    """Run ``pulumi destroy`` when the Stack object is deleted. Refused for prod."""
    resync_frequency_seconds: int | None = Field(default=None, ge=60)
    """Default ``gitops.resyncFrequencySeconds``."""

    @model_validator(mode="after")
    def _prod_keeps_its_resources(self) -> GitOpsStack:
        if self.environment == "prod" and self.destroy_on_finalize:
            raise ValueError(
                "destroyOnFinalize: deleting the Stack object would destroy prod; keep false for prod stacks"
            )
        return self


class GitOpsSpec(Model):
    namespace: K8sName = "pulumi-kubernetes-operator"
    """The operator's namespace; the Stack objects and their workspaces live there too."""
    chart_version: Literal["2.9.0"] = "2.9.0"
    """Pinned with the operator's schemas in ``schemas/`` (``schemas/pins.yaml``)."""
    chart: ChartSource = ChartSource(oci=PKO_CHART_OCI)
    repository: str = Field(pattern=r"^(https://|ssh://|git@)\S+$")
    """This repository's clone URL (``projectRepo``)."""
    branch: str = "main"
    backend: str | None = None
    """The state backend (``https://api.pulumi.com``, ``s3://...``); default: Pulumi Cloud."""
    access_token: SecretKey | None = None
    """``PULUMI_ACCESS_TOKEN`` for Pulumi Cloud (or a self-hosted backend)."""
    backend_credentials: list[SecretKey] = []
    """Further environment variables for the backend, each from a Secret key named like the variable
    (e.g. ``AWS_ACCESS_KEY_ID`` for an S3 backend)."""
    git_token: SecretKey | None = None
    """An access token to clone a private repository over HTTPS."""
    resync_frequency_seconds: int = Field(default=300, ge=60)
    """How often each Stack is reconciled even without a new commit (drift correction)."""
    service_account: K8sName = "pulumi"
    """The workspace pods' ServiceAccount: bound to ``system:auth-delegator`` (the operator needs it)
    and to ``cluster-admin`` so the workspaces can install the platform in this cluster."""
    stacks: list[GitOpsStack] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_and_authenticated(self) -> GitOpsSpec:
        names = [s.name for s in self.stacks]
        if len(set(names)) != len(names):
            raise ValueError("stacks: each name once")
        if self.backend is None and self.access_token is None:
            raise ValueError("accessToken: Pulumi Cloud (no backend set) needs a token Secret; or set backend")
        self.chart.check_archive("pulumi-kubernetes-operator", self.chart_version)
        return self
