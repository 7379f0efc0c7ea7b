"""Every Secret, PVC and NFS export a workload names is created by the stack or declared."""

from __future__ import annotations

from typing import Any

import pytest

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from tests.test_workloads import POOLS
from tools.preview import prerequisites_section


def platform(prerequisites: dict[str, Any], storage: dict[str, Any] | None = None, **workload: Any) -> dict[str, Any]:
    cluster = {"name": "c", "namespace": "team", "workerGroups": [{"name": "cpu", "maxReplicas": 2}], **workload}
    return {
        "environment": "prod",
        "prerequisites": prerequisites,
        "gcsStorage": storage or {},
        "workloads": {"pools": POOLS, "rayClusters": [cluster]},
    }


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def ok(data: dict[str, Any]) -> None:
    build_manifests(parse_platform(data, "s.yaml"), "s.yaml")


CHECKPOINTS = {"name": "ckpt", "mountPath": "/ckpt", "pvc": {"claimName": "ckpt", "readWriteMany": True}}
MODELS = {"name": "models", "mountPath": "/models", "nfs": {"server": "nfs.example", "path": "/exports/models/qwen"}}


def test_an_undeclared_secret_is_named_with_the_line_to_add() -> None:
    (line,) = errors(platform({}, secretEnv=["hf-token"]))
    assert line == (
        "s.yaml: platform.workloads.rayClusters[0].secretEnv[0]: Secret team/hf-token is neither created by the "
        "stack nor declared: create it, then add {namespace: team, name: hf-token} to platform.prerequisites.secrets"
    )
    ok(platform({"secrets": [{"namespace": "team", "name": "hf-token"}]}, secretEnv=["hf-token"]))
    # Declared in another namespace is not declared: a Secret is read from the pod's own namespace.
    assert errors(platform({"secrets": [{"namespace": "other", "name": "hf-token"}]}, secretEnv=["hf-token"]))


def test_pvcs_are_declared_with_an_access_mode_the_mount_can_use() -> None:
    (line,) = errors(platform({}, volumes=[CHECKPOINTS]))
    assert "volumes[0].pvc.claimName: PVC team/ckpt is not declared" in line
    assert "{namespace: team, name: ckpt, accessMode: ReadWriteMany}" in line
    rwo = {"persistentVolumeClaims": [{"namespace": "team", "name": "ckpt", "accessMode": "ReadWriteOnce"}]}
    (line,) = errors(platform(rwo, volumes=[CHECKPOINTS]))
    assert "volumes[0].pvc.readWriteMany: PVC team/ckpt is declared ReadWriteOnce" in line
    ok(platform({"persistentVolumeClaims": [{"namespace": "team", "name": "ckpt"}]}, volumes=[CHECKPOINTS]))


def test_an_nfs_export_covers_the_paths_below_it() -> None:
    (line,) = errors(platform({}, volumes=[MODELS]))
    assert "volumes[0].nfs: NFS export nfs.example:/exports/models/qwen is not declared" in line
    ok(platform({"nfsExports": [{"server": "nfs.example", "path": "/exports/models"}]}, volumes=[MODELS]))
    assert errors(platform({"nfsExports": [{"server": "nfs.example", "path": "/exports/mod"}]}, volumes=[MODELS]))
    assert errors(platform({"nfsExports": [{"server": "other", "path": "/exports/models"}]}, volumes=[MODELS]))


def test_an_ingress_tls_secret_is_a_prerequisite() -> None:
    head = {"ingress": {"host": "ray.example.com", "tlsSecret": "ray-tls"}}
    (line,) = errors(platform({}, head=head))
    assert "head.ingress.tlsSecret: Secret team/ray-tls is neither created" in line


def test_redis_secrets_must_exist_where_redis_and_each_client_read_them() -> None:
    storage = {"gcs": {"type": "redis", "namespace": "redis", "password": {"secret": {"name": "pw", "key": "k"}}}}
    ft = {"gcsFaultTolerance": {"backend": "redis", "storage": "gcs"}}
    lines = errors(platform({}, storage, **ft))
    assert [x.split(": ", 2)[1] for x in lines] == ["platform.gcsStorage.gcs.password.secret"] * 2
    assert "Secret redis/pw" in lines[0] and "keys: [k]" in lines[0] and "Secret team/pw" in lines[1]
    both = {"secrets": [{"namespace": "redis", "name": "pw"}, {"namespace": "team", "name": "pw"}]}
    ok(platform(both, storage, **ft))
    # A password from a config secret: the stack creates those Secrets itself.
    created = {"gcs": {"type": "redis", "namespace": "redis", "password": {"config": "redisPassword"}}}
    ok(platform({}, created, **ft))


def test_an_external_redis_needs_its_secrets_in_each_client_namespace() -> None:
    storage = {
        "gcs": {
            "type": "external",
            "address": "redis.example.com:6379",
            "tls": True,
            "caSecret": {"name": "ca", "key": "ca.crt"},
            "passwordSecret": {"name": "auth"},
        }
    }
    ft = {"gcsFaultTolerance": {"backend": "redis", "storage": "gcs"}}
    lines = errors(platform({}, storage, **ft))
    assert [x.split(": ", 2)[1] for x in lines] == [
        "platform.gcsStorage.gcs.passwordSecret",
        "platform.gcsStorage.gcs.caSecret",
    ]
    ok(
        platform(
            {"secrets": [{"namespace": "team", "name": "auth"}, {"namespace": "team", "name": "ca"}]}, storage, **ft
        )
    )


def test_the_summary_says_how_to_create_each_prerequisite() -> None:
    pre = {
        "secrets": [{"namespace": "team", "name": "hf-token", "keys": ["HF_TOKEN"]}],
        "persistentVolumeClaims": [{"namespace": "team", "name": "ckpt", "size": "1Ti"}],
        "nfsExports": [{"server": "nfs.example", "path": "/exports/models"}],
        "kueue": True,
        "localQueues": [{"namespace": "team", "name": "ops"}],
    }
    spec = parse_platform(platform(pre, secretEnv=["hf-token"], volumes=[CHECKPOINTS, MODELS]), "s.yaml")
    text = "\n".join(prerequisites_section(spec))
    assert "`kubectl -n team create secret generic hf-token --from-literal=HF_TOKEN=...`" in text
    assert "| PersistentVolumeClaim | `team/ckpt` | a ReadWriteMany claim of 1Ti" in text
    assert "| NFS export | `nfs.example:/exports/models` |" in text
    assert (
        "| Kueue | v0.19 with the Ray integrations (`ray.io/rayjob`," in text and "| LocalQueue | `team/ops` |" in text
    )


def test_every_shipped_stack_declares_what_it_references() -> None:
    from tools.preview import run_preview

    for stack in ("dev", "staging", "prod"):
        assert run_preview(stack).exit_code == 0
