"""Building blocks of the stack spec: the base model, scalar types and pinned upstream facts."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic.alias_generators import to_camel

# --- Pinned upstream versions (DESIGN.md section 4) -------------------------------------------

CONFIG_KEY = "platform"
"""The stack config key (``kuberay-platform:platform``) that holds the whole spec."""

KUBERAY_VERSION = "1.7.0"
KUBERAY_CHART_REPO = "https://ray-project.github.io/kuberay-helm/"
RAY_VERSION = "2.60.0"

FeatureGate = Literal[
    "RayClusterStatusConditions",
    "RayJobDeletionPolicy",
    "RayMultiHostIndexing",
    "RayServiceIncrementalUpgrade",
    "RayCronJob",
    "SidecarSubmitterRestart",
    "RayClusterNetworkPolicy",
    "GCSFaultToleranceEmbeddedStorage",
    "RayClusterMTLS",
    "RayClusterHistoryServer",
    "KubernetesWAS",
]

# --- Scalar types -----------------------------------------------------------------------------

PATTERN_HINTS: dict[str, str] = {}
"""pattern -> what a user should write, for error messages."""


def hinted_pattern(regex: str, hint: str) -> Any:
    PATTERN_HINTS[regex] = hint
    return Field(pattern=regex)


K8sName = Annotated[
    str, hinted_pattern(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", "a DNS-1123 label: a-z, 0-9 and '-', at most 63")
]
RayName = Annotated[
    str,
    hinted_pattern(
        r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$",
        "a DNS-1035 label (KubeRay names Services after it): starts with a letter; a-z, 0-9 and '-'",
    ),
]


def _number_as_text(value: Any) -> Any:
    """YAML reads ``cpu: 24`` as a number; a quantity is the same text."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


QUANTITY_PATTERN = r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$"
Quantity = Annotated[
    str,
    BeforeValidator(_number_as_text),
    hinted_pattern(QUANTITY_PATTERN, "a Kubernetes quantity such as 500m, 4, 16Gi"),
    # What a stack file may hold (the validator turns a number into its text).
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": QUANTITY_PATTERN}, {"type": "number", "minimum": 0}]}),
]
Duration = Annotated[str, hinted_pattern(r"^[0-9]+(ms|s|m|h)$", "a duration such as 30s or 5m")]
SemVer = Annotated[str, hinted_pattern(r"^\d+\.\d+\.\d+$", "a version such as 2.60.0")]
MinorVersion = Annotated[str, hinted_pattern(r"^1\.\d+$", 'a Kubernetes minor version such as "1.33" (quoted)')]
ImageTag = Annotated[str, hinted_pattern(r"^[\w][\w.-]{0,127}$", "an image tag such as v1.7.0")]
Environment = Literal["dev", "staging", "prod"]

SECRET_NAME = re.compile(r"(?i)(passw(or)?d|secret|token|api_?key|access_?key|private_?key|credential)")


def _no_secrets(env: dict[str, str]) -> dict[str, str]:
    suspicious = sorted(name for name in env if SECRET_NAME.search(name))
    if suspicious:
        raise ValueError(
            f"{', '.join(suspicious)} look(s) like a secret: plain env values end up in manifests, Git and "
            "logs; put it in a Kubernetes Secret and list the Secret under secretEnv"
        )
    return env


PlainEnv = Annotated[dict[str, str], AfterValidator(_no_secrets)]
"""Environment variables written into manifests: secrets are refused by name."""


class Model(BaseModel):
    """Base of every spec model: camelCase keys as in Kubernetes, unknown keys rejected."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
    )
    # Field docstrings describe the keys in the stack file's JSON Schema and docs/reference.md;
    # `make stack-schema` reads them (tools/stack_schema.py), not every import: pydantic's
    # use_attribute_docstrings parses each model's source, a third of the spec's import time.


class Resources(Model):
    """Container requests and limits. Ray containers get requests equal to limits (Guaranteed QoS),
    as KubeRay recommends, so the scheduler and Ray agree on what a pod really has."""

    cpu: Quantity
    memory: Quantity
