"""Reads the stack's config into the typed spec, with clean errors under ``pulumi up`` too."""

from __future__ import annotations

import pulumi

from components.errors import ConfigError
from components.manifests.platform import PlatformManifests, build_manifests
from components.spec import CONFIG_KEY, PlatformSpec, parse_platform
from components.spec.storage import InClusterRedis

PROJECT = "kuberay-platform"


class StackConfigError(pulumi.RunError):
    """A user's mistake in the stack file. Pulumi prints a RunError's message without a traceback;
    the offline preview turns it into exit code 2."""


def stack_file(stack: str) -> str:
    return f"stacks/Pulumi.{stack}.yaml"


def load_stack() -> PlatformManifests:
    source = stack_file(pulumi.get_stack())
    try:
        try:
            raw = pulumi.Config(PROJECT).get_object(CONFIG_KEY)
        except pulumi.ConfigTypeError:
            raise ConfigError(
                [
                    f"{source}: config.{PROJECT}:{CONFIG_KEY}: must be a plain YAML mapping, not a secret; keep "
                    "secrets in Kubernetes Secrets and reference them by name (secretEnv, redisPasswordSecret)"
                ]
            ) from None
        if raw is None:
            raise ConfigError([f"{source}: config.{PROJECT}:{CONFIG_KEY}: required key is missing (the platform spec)"])
        spec = parse_platform(raw, source)
        check_secrets_mutable(spec, source)
        return build_manifests(spec, source)
    except ConfigError as exc:
        raise StackConfigError(str(exc)) from None


SECRETS_MUTABLE = "kubernetes:enableSecretMutable"
"""The Kubernetes provider's option to update a Secret whose data changes instead of replacing it."""


def check_secrets_mutable(spec: PlatformSpec, source: str) -> None:
    """Where a Secret made from a config secret is protected (prod's GCS Redis password), the provider
    must update Secrets in place: it replaces one whose data changes otherwise, and a protected
    resource cannot be replaced, so rotating the password would stop ``pulumi up``."""
    protected = [
        name
        for name, storage in spec.gcs_storage.items()
        if spec.gcs_state_protected and isinstance(storage, InClusterRedis) and storage.password.config
    ]
    if not protected:
        return
    try:
        mutable = pulumi.Config("kubernetes").get_bool("enableSecretMutable")
    except pulumi.ConfigTypeError:
        mutable = None
    if mutable is not True:
        raise ConfigError(
            [
                f"{source}: config.{SECRETS_MUTABLE}: must be true: the password Secret of gcsStorage.{protected[0]} "
                f"is protected in {spec.environment}, and without it a new password replaces the Secret, which "
                f"stops `pulumi up`; run `pulumi config set {SECRETS_MUTABLE} true`"
            ]
        )


def config_secret(key: str, what: str) -> pulumi.Output[str]:
    """The stack's config secret ``key`` (``what`` it is, for the error); a clear one-line error when
    it is missing."""
    try:
        value = pulumi.Config(PROJECT).get_secret(key)
    except pulumi.ConfigTypeError:
        value = None
    if value is None:
        raise StackConfigError(
            f"{stack_file(pulumi.get_stack())}: config.{PROJECT}:{key}: {what} is not set; run "
            f"`pulumi config set --secret {PROJECT}:{key} <value>` (it is stored encrypted)"
        )
    return value


def required_secret_config(spec: PlatformSpec) -> list[str]:
    """The Pulumi config secrets ``spec`` reads (full keys): in-cluster Redis passwords, Ray auth
    tokens, Grafana's admin password."""
    keys = {
        f"{PROJECT}:{storage.password.config}"
        for storage in spec.gcs_storage.values()
        if isinstance(storage, InClusterRedis) and storage.password.config
    }
    keys |= {
        f"{PROJECT}:{w.auth.token.config}" for _, w in spec.workloads.all() if w.auth.token and w.auth.token.config
    }
    install = spec.monitoring.install if spec.monitoring is not None else None
    if install is not None and install.grafana is not None and install.grafana.admin_password.config:
        keys.add(f"{PROJECT}:{install.grafana.admin_password.config}")
    return sorted(keys)
