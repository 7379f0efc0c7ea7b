"""Objects of the GitOps pull mode (``platform.gitops``), pure: the operator's namespace, the
workspaces' ServiceAccount and its bindings, and one ``pulumi.com/v1`` Stack per environment.

The Pulumi Kubernetes Operator v2 runs each Stack in a workspace pod under ``serviceAccountName``;
that account needs ``system:auth-delegator`` (the operator authenticates to the workspace with the
account's token, its README and ``deploy/helm`` notes) and whatever the program creates: here the
whole platform, so ``cluster-admin``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.manifests.common import metadata
from components.manifests.namespace import namespace
from components.spec.gitops import GitOpsSpec, GitOpsStack, SecretKey

PROJECT = "kuberay-platform"


def _secret_ref(ref: SecretKey) -> dict[str, Any]:
    return {"type": "Secret", "secret": {"name": ref.name, "key": ref.key}}


def stack_object(spec: GitOpsSpec, entry: GitOpsStack, environment: str) -> dict[str, Any]:
    env_refs = {ref.key: _secret_ref(ref) for ref in spec.backend_credentials}
    if spec.access_token is not None:
        env_refs["PULUMI_ACCESS_TOKEN"] = _secret_ref(spec.access_token)
    body: dict[str, Any] = {
        "stack": entry.stack or entry.name,
        "projectRepo": spec.repository,
        "branch": entry.branch or spec.branch,
        "refresh": True,
        "resyncFrequencySeconds": entry.resync_frequency_seconds or spec.resync_frequency_seconds,
        "destroyOnFinalize": entry.destroy_on_finalize,
        "serviceAccountName": spec.service_account,
        "envRefs": env_refs,
    }
    if spec.backend is not None:
        body["backend"] = spec.backend
    if spec.git_token is not None:
        body["gitAuth"] = {"accessToken": _secret_ref(spec.git_token)}
    meta = metadata(entry.name, spec.namespace, environment, "gitops")
    meta["labels"]["kuberay-platform.io/stack-environment"] = entry.environment
    return {"apiVersion": "pulumi.com/v1", "kind": "Stack", "metadata": meta, "spec": body}


@dataclass(frozen=True)
class GitOpsManifests:
    spec: GitOpsSpec
    namespace: dict[str, Any]
    """The operator's namespace: ``baseline`` (the chart's operator pod sets no seccomp profile)."""
    access: list[dict[str, Any]]
    """The workspaces' ServiceAccount and its two ClusterRoleBindings."""
    stacks: list[dict[str, Any]]


def gitops(spec: GitOpsSpec, environment: str, kubernetes_version: str) -> GitOpsManifests:
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(spec.service_account, spec.namespace, environment, "gitops"),
    }
    subject = [{"kind": "ServiceAccount", "name": spec.service_account, "namespace": spec.namespace}]
    bindings = [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": metadata(f"{PROJECT}-{spec.namespace}-{role.replace(':', '-')}", None, environment, "gitops"),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": subject,
        }
        for role in ("system:auth-delegator", "cluster-admin")
    ]
    return GitOpsManifests(
        spec=spec,
        namespace=namespace(spec.namespace, environment, "gitops", "baseline", kubernetes_version),
        access=[account, *bindings],
        stacks=[stack_object(spec, entry, environment) for entry in spec.stacks],
    )
