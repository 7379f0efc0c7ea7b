"""GCS fault-tolerance storage: the in-cluster Redis, an external Redis, RocksDB, and their wiring."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.manifests.redis import STORAGE_LABEL
from components.spec import parse_platform
from components.stack_config import SECRETS_MUTABLE, StackConfigError
from tests.conftest import REPO
from tests.test_workloads import POOLS, PREREQUISITES, llm_service
from tools.engine import RecordedResource, run_program
from tools.preview import run_preview, write_outputs

PASSWORD = "planted-redis-password-7f3a"
IN_CLUSTER = {"type": "redis", "namespace": "gcs", "password": {"config": "redisGcsPassword"}}
EXTERNAL = {
    "type": "external",
    "address": "redis.example.com:6380",
    "tls": True,
    "caSecret": {"name": "redis-ca", "key": "ca.crt"},
    "username": {"name": "redis-user", "key": "username"},
    "passwordSecret": {"name": "redis-auth", "key": "password"},
}


def platform(environment: str = "prod", storage: dict[str, Any] | None = None, **workloads: Any) -> dict[str, Any]:
    secrets = [
        {"namespace": ns, "name": name}
        for ns in ("gcs", "serving", "team-a", "team-b")
        for name in ("ops-redis", "redis-ca", "redis-user", "redis-auth")
    ]
    return {
        "environment": environment,
        "prerequisites": {**PREREQUISITES, "secrets": secrets},
        "gcsStorage": {"redis-gcs": IN_CLUSTER} if storage is None else storage,
        "workloads": {"pools": POOLS, **workloads},
    }


def cluster(name: str, namespace: str, **gcs: Any) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "workerGroups": [{"name": "cpu", "maxReplicas": 2}],
        "gcsFaultTolerance": {"backend": "redis", "storage": "redis-gcs", **gcs},
    }


def service(**gcs: Any) -> dict[str, Any]:
    return llm_service(gcsFaultTolerance={"backend": "redis", "storage": "redis-gcs", **gcs})


def run(data: dict[str, Any], password: str | None = PASSWORD, mutable: Any = True) -> list[RecordedResource]:
    config: dict[str, Any] = {"kuberay-platform:platform": data}
    if mutable is not None:
        config[SECRETS_MUTABLE] = mutable
    if password is not None:
        config["kuberay-platform:redisGcsPassword"] = password
    return run_program(REPO, "test", config, secret_keys=["kuberay-platform:redisGcsPassword"])


def of_type(resources: list[RecordedResource], type_: str) -> list[RecordedResource]:
    return [r for r in resources if r.type == type_]


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


# --- the in-cluster Redis ---------------------------------------------------------------------


def test_the_password_secret_is_created_in_the_redis_namespace_and_every_client_namespace() -> None:
    data = platform(rayClusters=[cluster("a", "team-a"), cluster("b", "team-b")], rayServices=[service()])
    secrets = of_type(run(data), "kubernetes:core/v1:Secret")
    assert sorted(s.inputs["metadata"]["namespace"] for s in secrets) == ["gcs", "serving", "team-a", "team-b"]
    assert {s.inputs["metadata"]["name"] for s in secrets} == {"redis-gcs-redis-password"}
    assert all(s.inputs["stringData"] == "[secret]" for s in secrets)  # from the config secret, kept secret


def test_durable_state_is_protected_and_retained_in_prod_only() -> None:
    for environment, durable in (("prod", True), ("staging", False)):
        resources = run(platform(environment, rayClusters=[cluster("a", "team-a")]))
        secrets = of_type(resources, "kubernetes:core/v1:Secret")
        own = [r for r in secrets if r.inputs["metadata"]["namespace"] == "gcs"]
        copies = [r for r in secrets if r.inputs["metadata"]["namespace"] != "gcs"]
        assert len(own) == 1 and copies
        for r in of_type(resources, "kubernetes:apps/v1:StatefulSet") + own:
            assert r.options.get("protect", False) is durable, (environment, r.name)
            assert r.options.get("retainOnDelete", False) is durable, (environment, r.name)
        for r in copies:  # the clients' copies come and go with their workloads
            assert "protect" not in r.options and "retainOnDelete" not in r.options
        for r in of_type(resources, "kubernetes:core/v1:ConfigMap"):
            assert "protect" not in r.options  # config is re-created from the spec at will
        (sts,) = of_type(resources, "kubernetes:apps/v1:StatefulSet")
        assert sts.inputs["spec"]["persistentVolumeClaimRetentionPolicy"] == {
            "whenDeleted": "Retain",
            "whenScaled": "Retain",
        }


def test_clusters_wait_for_their_redis_and_redis_waits_for_its_namespace() -> None:
    resources = run(platform(rayClusters=[cluster("a", "team-a")]))
    (ray,) = of_type(resources, "kubernetes:ray.io/v1:RayCluster")
    (sts,) = of_type(resources, "kubernetes:apps/v1:StatefulSet")
    assert sts.urn in ray.dependencies  # the SDK expands the GcsStorage component to its children
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in of_type(resources, "kubernetes:core/v1:Namespace")}
    assert namespaces["gcs"] in sts.dependencies
    assert all(s.urn in sts.dependencies for s in of_type(resources, "kubernetes:core/v1:Secret"))


def test_a_missing_password_config_secret_is_one_line_naming_the_command() -> None:
    with pytest.raises(StackConfigError) as info:
        run(platform(rayClusters=[cluster("a", "team-a")]), password=None)
    assert str(info.value) == (
        "stacks/Pulumi.test.yaml: config.kuberay-platform:redisGcsPassword: the Redis password is not set; run "
        "`pulumi config set --secret kuberay-platform:redisGcsPassword <value>` (it is stored encrypted)"
    )


@pytest.mark.parametrize("mutable", [None, False, "no"])
def test_a_protected_password_secret_needs_the_provider_to_update_secrets_in_place(mutable: Any) -> None:
    """Without ``kubernetes:enableSecretMutable`` a new password replaces the Secret, and prod's is
    protected: ``pulumi up`` would stop at the rotation. Refused up front, with the command."""
    with pytest.raises(StackConfigError) as info:
        run(platform(rayClusters=[cluster("a", "team-a")]), mutable=mutable)
    assert str(info.value) == (
        "stacks/Pulumi.test.yaml: config.kubernetes:enableSecretMutable: must be true: the password Secret of "
        "gcsStorage.redis-gcs is protected in prod, and without it a new password replaces the Secret, which stops "
        "`pulumi up`; run `pulumi config set kubernetes:enableSecretMutable true`"
    )
    # Where nothing from config is protected, the provider's default stands.
    assert run(platform("staging", rayClusters=[cluster("a", "team-a")]), mutable=None)
    storage = {"redis-gcs": {**IN_CLUSTER, "password": {"secret": {"name": "ops-redis", "key": "pw"}}}}
    assert run(platform(storage=storage, rayClusters=[cluster("a", "team-a")]), password=None, mutable=None)


def test_every_shipped_stack_updates_secrets_in_place() -> None:
    for path in sorted([*(REPO / "stacks").glob("Pulumi.*.yaml"), *(REPO / "examples").glob("Pulumi.*.yaml")]):
        assert yaml.safe_load(path.read_text())["config"][SECRETS_MUTABLE] is True, path


def test_an_existing_secret_is_referenced_and_not_created() -> None:
    storage = {"redis-gcs": {**IN_CLUSTER, "password": {"secret": {"name": "ops-redis", "key": "pw"}}}}
    resources = run(platform(storage=storage, rayClusters=[cluster("a", "team-a")]), password=None)
    assert of_type(resources, "kubernetes:core/v1:Secret") == []
    (sts,) = of_type(resources, "kubernetes:apps/v1:StatefulSet")
    env = sts.inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "REDIS_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "ops-redis", "key": "pw"}}}]
    (ray,) = of_type(resources, "kubernetes:ray.io/v1:RayCluster")
    ref = ray.inputs["spec"]["gcsFaultToleranceOptions"]["redisPassword"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "ops-redis", "key": "pw"}


def test_ray_reaches_the_redis_by_its_service_with_the_password_from_a_secret_ref() -> None:
    spec = parse_platform(platform(rayServices=[service(deletionTimeoutSeconds=900)]), "s.yaml")
    (obj,) = build_manifests(spec, "s.yaml").workloads
    options = obj["spec"]["rayClusterConfig"]["gcsFaultToleranceOptions"]
    assert options == {
        "backend": "redis",
        "redisAddress": "redis-gcs.gcs.svc.cluster.local:6379",
        "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis-gcs-redis-password", "key": "password"}}},
    }
    # Read from the RayCluster, to which KubeRay copies a RayService's annotations.
    assert obj["metadata"]["annotations"]["ray.io/gcs-ft-deletion-timeout"] == "900"
    head = obj["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]
    assert head["metadata"]["labels"] == {STORAGE_LABEL: "redis-gcs", "kuberay-platform.io/workload": "chat"}


def test_the_network_policy_admits_only_client_heads_and_kuberays_cleanup_job() -> None:
    spec = parse_platform(platform(rayClusters=[cluster("a", "team-a")], rayServices=[service()]), "s.yaml")
    (redis,) = build_manifests(spec, "s.yaml").redis
    (policy,) = [o for o in redis.objects if o["kind"] == "NetworkPolicy"]
    (rule,) = policy["spec"]["ingress"]
    (peer,) = rule["from"]
    assert peer["namespaceSelector"]["matchExpressions"][0]["values"] == ["serving", "team-a"]
    assert peer["podSelector"]["matchLabels"] == {STORAGE_LABEL: "redis-gcs"}
    assert peer["podSelector"]["matchExpressions"] == [
        {"key": "ray.io/node-type", "operator": "In", "values": ["head", "redis-cleanup"]}
    ]
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
    assert policy["spec"]["policyTypes"] == ["Ingress"]


def test_the_redis_namespace_is_a_platform_namespace() -> None:
    spec = parse_platform(platform(rayClusters=[cluster("a", "team-a")]), "s.yaml")
    names = [n["metadata"]["name"] for n in build_manifests(spec, "s.yaml").workload_namespaces]
    assert "gcs" in names


def test_the_redis_image_is_pinned() -> None:
    storage = {"redis-gcs": {**IN_CLUSTER, "image": {"tag": "latest"}}}
    (line,) = errors(platform(storage=storage, rayClusters=[cluster("a", "team-a")]))
    assert "platform.gcsStorage.redis-gcs.image: tag 'latest' moves" in line and "pin an exact release tag" in line


# --- an external Redis ------------------------------------------------------------------------


def test_an_external_redis_with_tls_user_and_ca() -> None:
    spec = parse_platform(platform(storage={"redis-gcs": EXTERNAL}, rayClusters=[cluster("a", "team-a")]), "s.yaml")
    manifests = build_manifests(spec, "s.yaml")
    assert manifests.redis == []
    (obj,) = manifests.workloads
    options = obj["spec"]["gcsFaultToleranceOptions"]
    assert options["redisAddress"] == "rediss://redis.example.com:6380"
    assert options["redisUsername"] == {"valueFrom": {"secretKeyRef": {"name": "redis-user", "key": "username"}}}
    assert options["redisPassword"] == {"valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "password"}}}
    pod = obj["spec"]["headGroupSpec"]["template"]["spec"]
    container = pod["containers"][0]
    assert {"name": "RAY_REDIS_CA_CERT", "value": "/etc/ray/redis-ca/ca.crt"} in container["env"]
    assert {"name": "redis-ca", "mountPath": "/etc/ray/redis-ca", "readOnly": True} in container["volumeMounts"]
    assert {"name": "redis-ca", "secret": {"secretName": "redis-ca"}} in pod["volumes"]


def test_a_ca_without_tls_is_refused() -> None:
    storage = {"redis-gcs": {**EXTERNAL, "tls": False}}
    (line,) = errors(platform(storage=storage, rayClusters=[cluster("a", "team-a")]))
    assert "caSecret: applies with tls: true" in line


# --- references and RocksDB -------------------------------------------------------------------


def test_a_reference_to_undefined_storage_is_a_config_error() -> None:
    data = platform(
        rayClusters=[cluster("a", "team-a") | {"gcsFaultTolerance": {"backend": "redis", "storage": "nope"}}]
    )
    (line,) = errors(data)
    assert line == (
        "s.yaml: platform.workloads.rayClusters[0].gcsFaultTolerance.storage: unknown storage 'nope' "
        "(platform.gcsStorage defines: redis-gcs); add it there as type: redis (in-cluster) or type: external"
    )


def test_rocksdb_keeps_its_claim_in_prod_and_takes_class_and_access_modes() -> None:
    rocks = {"backend": "rocksdb", "storageSize": "5Gi", "storageClass": "fast", "accessModes": ["ReadWriteOncePod"]}
    spec = parse_platform(platform(rayClusters=[cluster("a", "team-a") | {"gcsFaultTolerance": rocks}]), "s.yaml")
    (obj,) = build_manifests(spec, "s.yaml").workloads
    assert obj["spec"]["gcsFaultToleranceOptions"] == {
        "backend": "rocksdb",
        "storage": {
            "size": "5Gi",
            "accessModes": ["ReadWriteOncePod"],
            "deletionPolicy": "Retain",
            "storageClassName": "fast",
        },
    }
    lines = errors(
        platform(rayClusters=[cluster("a", "team-a") | {"gcsFaultTolerance": rocks | {"retainStorage": False}}])
    )
    assert any("gcsFaultTolerance.retainStorage: must stay true in prod" in x for x in lines)
    lines = errors(
        platform(rayClusters=[cluster("a", "team-a") | {"gcsFaultTolerance": rocks | {"storage": "redis-gcs"}}])
    )
    assert any("apply to backend redis" in x for x in lines)


# --- the password never leaks ------------------------------------------------------------------


def test_the_planted_password_appears_in_no_output(tmp_path: Path) -> None:
    stack = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())
    stack["config"]["kuberay-platform:redisGcsPassword"] = PASSWORD
    stack["config"]["kuberay-platform:qwenChatRayToken"] = "token-" + PASSWORD
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(stack))
    result = run_preview("prod", stack_path=path)
    assert result.exit_code == 0 and result.unset_secrets == []
    write_outputs(result, tmp_path / "out")
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(files) > 10
    assert [p for p in files if PASSWORD in p.read_text()] == []


def test_the_offline_preview_lists_the_secrets_to_set() -> None:
    result = run_preview("prod")
    assert result.unset_secrets == ["kuberay-platform:qwenChatRayToken", "kuberay-platform:redisGcsPassword"]
