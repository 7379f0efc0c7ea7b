"""The policy rules: pure functions over Kubernetes objects, shared by the Pulumi policy pack,
the offline preview and ``make lint``. Add a rule by adding a module and listing it here; every
rule is documented in POLICIES.md (a test keeps the two in step)."""

from __future__ import annotations

from policies.rules import (
    accelerator_params,
    auth_disabled,
    blue_green_accelerator_service,
    deletion_rules_conflict,
    deprecated_api_version,
    feature_gate_off,
    group_resources_conflict,
    head_exposed_without_auth,
    head_runs_tasks,
    image_digest,
    image_ray_version,
    image_tag,
    incremental_upgrade,
    kueue,
    llm_accelerator_advertised,
    llm_serving_grace_period,
    local_working_dir,
    managed_by,
    memory_request_below_limit,
    missing_local_queue,
    network_policy_incomplete,
    rayservice_upgrade_none,
    redis_password,
    resources_required,
    runtime_env_installs,
    serve_config_schema,
    serve_traffic_through_head,
    serve_worker_readiness,
    serving_exposed_without_auth,
    serving_gcs_fault_tolerance,
    serving_min_replicas,
    shared_redis_namespace,
    tpu_topology,
    unknown_enum_values,
    worker_group_replicas,
    worker_groups_by_hardware,
    worker_probe_dashboard,
)
from policies.rules.base import ResourceRule, StackRule

RESOURCE_RULES: list[ResourceRule] = [
    # Head and worker layout
    head_runs_tasks.RULE,
    worker_groups_by_hardware.RULE,
    worker_group_replicas.RULE,
    resources_required.RULE,
    memory_request_below_limit.RULE,
    accelerator_params.RULE,
    tpu_topology.RULE,
    worker_probe_dashboard.RULE,
    serve_worker_readiness.RULE,
    local_working_dir.RULE,
    network_policy_incomplete.RULE,
    group_resources_conflict.RULE,
    # Images and runtime environments
    image_tag.RULE,
    image_digest.RULE,
    image_ray_version.RULE,
    runtime_env_installs.RULE,
    # Serving
    serving_gcs_fault_tolerance.RULE,
    rayservice_upgrade_none.RULE,
    serving_min_replicas.RULE,
    serve_traffic_through_head.RULE,
    blue_green_accelerator_service.RULE,
    llm_serving_grace_period.RULE,
    serve_config_schema.RULE,
    llm_accelerator_advertised.RULE,
    incremental_upgrade.RULE,
    # Security
    auth_disabled.RULE,
    head_exposed_without_auth.RULE,
    redis_password.MISSING,
    redis_password.INLINE,
    # What the operator, Kueue or the API server would reject anyway
    deprecated_api_version.RULE,
    deletion_rules_conflict.RULE,
    unknown_enum_values.RULE,
    managed_by.RULE,
    kueue.RAYJOB,
    kueue.ELASTIC,
    kueue.WORKER_GROUPS,
]

STACK_RULES: list[StackRule] = [
    shared_redis_namespace.RULE,
    feature_gate_off.RULE,
    feature_gate_off.UNKNOWN_RULE,
    serving_exposed_without_auth.RULE,
    missing_local_queue.RULE,
]
