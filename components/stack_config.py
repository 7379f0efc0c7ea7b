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
        return build_manifests(parse_platform(raw, source), source)
    except ConfigError as exc:
        raise StackConfigError(str(exc)) from None


def required_secret_config(spec: PlatformSpec) -> list[str]:
    """The Pulumi config secrets ``spec`` reads (full keys), e.g. in-cluster Redis passwords."""
    keys = {
        f"{PROJECT}:{storage.password.config}"
        for storage in spec.gcs_storage.values()
        if isinstance(storage, InClusterRedis) and storage.password.config
    }
    return sorted(keys)
