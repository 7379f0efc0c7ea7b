"""The platform intent for one environment: typed, validated, and the only home of defaults.

A stack file (``stacks/Pulumi.<stack>.yaml``) holds one structured key, ``kuberay-platform:platform``,
parsed into :class:`PlatformSpec`, beside provider settings (``kubernetes:enableSecretMutable: true``,
which every stack sets, see ``components.stack_config``). Unknown keys are rejected; every default says its unit and why
it is what it is. Nothing here imports Pulumi: the offline engine, the policy rules and the tests
use these models directly.

- ``base``: the base model, scalar types and pinned upstream facts (versions, feature gates);
- ``operator``: the KubeRay operator;
- ``workloads``: pools, RayClusters, RayJobs/RayCronJobs, RayServices;
- ``platform``: the whole spec, cross-section checks, parsing with one-line errors.
"""

from components.spec.base import (
    CONFIG_KEY,
    KUBERAY_CHART_REPO,
    KUBERAY_VERSION,
    PATTERN_HINTS,
    RAY_VERSION,
    Environment,
    FeatureGate,
    Model,
    Resources,
)
from components.spec.operator import SCALE_PROFILES, ImageRef, OperatorResources, OperatorSpec, ScaleProfile
from components.spec.platform import (
    PlatformSpec,
    cross_check,
    describe_errors,
    format_path,
    has_accelerators,
    parse_platform,
    upgrade_strategy,
)
from components.spec.workloads import (
    DELETION_RULES,
    PROFILES,
    ClusterBase,
    CpuPool,
    GcsFaultToleranceSpec,
    GpuPool,
    LlmApp,
    LlmModel,
    RayClusterSpec,
    RayJobSpec,
    RayServiceSpec,
    ServeApp,
    TpuPool,
    WorkerGroupSpec,
    WorkloadsSpec,
)
from components.upstream import FEATURE_GATES

__all__ = [
    "CONFIG_KEY",
    "DELETION_RULES",
    "FEATURE_GATES",
    "KUBERAY_CHART_REPO",
    "KUBERAY_VERSION",
    "PATTERN_HINTS",
    "PROFILES",
    "RAY_VERSION",
    "SCALE_PROFILES",
    "ClusterBase",
    "CpuPool",
    "Environment",
    "FeatureGate",
    "GcsFaultToleranceSpec",
    "GpuPool",
    "ImageRef",
    "LlmApp",
    "LlmModel",
    "Model",
    "OperatorResources",
    "OperatorSpec",
    "PlatformSpec",
    "RayClusterSpec",
    "RayJobSpec",
    "RayServiceSpec",
    "Resources",
    "ScaleProfile",
    "ServeApp",
    "TpuPool",
    "WorkerGroupSpec",
    "WorkloadsSpec",
    "cross_check",
    "describe_errors",
    "format_path",
    "has_accelerators",
    "parse_platform",
    "upgrade_strategy",
]
