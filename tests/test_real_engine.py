"""The real engine: the pinned Pulumi CLI, Kubernetes provider and policy pack run the program.

``make test-engine`` (``.ci/run``, after ``make test``) runs these; plain ``pytest`` deselects them
(marker ``engine``). They need Go for ``make toolchain`` and the offline chart beside the repository:
without either they skip, and under ``CI=true`` they fail.

Every run below starts at once (the fixture ``runs``) against a fresh backend in a temporary folder,
and the tests read what the runs left: their output, the rendered objects and the state files.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.spec import parse_platform
from tests.conftest import REPO, SHARED, needs_shared
from tools.schema import Validator

pytestmark = pytest.mark.engine

STACKS = ("dev", "staging", "prod")
CHART = SHARED / "charts" / "kuberay-operator-1.7.0.tgz"
KUEUE_CHART = SHARED / "charts" / "kueue-0.19.2.tgz"
SECRET_KEY = "kuberay-platform:engineProbeSecret"
SECRET = "s3cr3t-" + secrets.token_hex(12)
REDIS_PASSWORD_KEY = "kuberay-platform:redisGcsPassword"  # prod's in-cluster GCS Redis
REDIS_PASSWORD = "redis-" + secrets.token_hex(12)
RAY_TOKEN_KEY = "kuberay-platform:qwenChatRayToken"  # prod's RayService auth token
RAY_TOKEN = "ray-" + secrets.token_hex(16)
ROTATED = ("redis-old-" + secrets.token_hex(12), "redis-new-" + secrets.token_hex(12))  # the rotation stack's
STACK_SECRETS = {
    "dev": [f"{SECRET_KEY}=ENGINE_PROBE_SECRET"],
    "prod": [f"{REDIS_PASSWORD_KEY}=ENGINE_REDIS_PASSWORD", f"{RAY_TOKEN_KEY}=ENGINE_RAY_TOKEN"],
}
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


@dataclass
class Run:
    name: str
    args: list[str]
    returncode: int = -1
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _require_go() -> None:
    if shutil.which("go"):
        return
    if os.environ.get("CI") == "true":
        pytest.fail("the real-engine tests need Go (make toolchain)")
    pytest.skip("needs Go to build the pinned toolchain (make toolchain)")


def _planted_head_runs_tasks(stack_file: Path, extra: list[str]) -> list[str]:
    """A run whose program gives the RayCluster head Ray tasks (mandatory `head-runs-tasks` in prod):
    the same plant as the offline preview's test, in the runner's own process, where the program runs."""
    code = (
        "import sys\n"
        "import components.manifests.platform as platform\n"
        "original = platform.ray_cluster\n"
        "def planted(*args, **kwargs):\n"
        "    obj = original(*args, **kwargs)\n"
        "    obj['spec']['headGroupSpec']['rayStartParams'].pop('num-cpus')\n"
        "    return obj\n"
        "platform.ray_cluster = planted\n"
        "from tools.__main__ import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return ["-c", code, "pulumi-preview", "--stack-file", str(stack_file), *extra]


def _rotation(stack_file: Path, extra: list[str]) -> list[str]:
    """A prod stack brought up with one Redis password, then up again with another (a rotation), each
    a fresh `make pulumi-preview --up` process; ``ROTATING`` marks where the second starts."""
    code = (
        "import subprocess, sys\n"
        "for i, variable in enumerate(('ENGINE_ROTATION_OLD', 'ENGINE_ROTATION_NEW')):\n"
        "    print('ROTATING' if i else 'FIRST UP', flush=True)\n"
        "    password = f'kuberay-platform:redisGcsPassword={variable}'\n"
        "    args = ['-m', 'tools', 'pulumi-preview', '--secret-from-env', password, *sys.argv[1:]]\n"
        "    code = subprocess.run([sys.executable, *args]).returncode\n"
        "    if code:\n"
        "        sys.exit(code)\n"
    )
    return ["-c", code, "--stack-file", str(stack_file), "--up", *extra]


@pytest.fixture(scope="session")
def engine_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("engine")


@pytest.fixture(scope="session")
def runs(engine_base: Path) -> Iterator[dict[str, Run]]:
    _require_go()
    needs_shared(CHART)
    needs_shared(KUEUE_CHART)
    build = subprocess.run(
        [sys.executable, "-m", "tools", "toolchain"], cwd=REPO, capture_output=True, text=True, timeout=3600
    )
    assert build.returncode == 0, build.stderr
    common = ["--engine-dir", str(engine_base / "pulumi"), "--out", str(engine_base / "out")]
    common += ["--operator-chart", str(CHART), "--kueue-chart", str(KUEUE_CHART)]
    dev = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    as_prod = json.loads(json.dumps(dev))
    as_prod["config"]["kuberay-platform:platform"]["environment"] = "prod"
    # Prod's NetworkPolicies too: the planted violation is then the stack's only one.
    as_prod["config"]["kuberay-platform:platform"]["networkPolicies"] = {"apiServerCidrs": ["172.16.0.2/32"]}
    (engine_base / "planted.yaml").write_text(yaml.safe_dump(as_prod))
    advisory = json.loads((REPO / "policies" / "config" / "prod.json").read_text())
    advisory["head-runs-tasks"]["enforcementLevel"] = "advisory"
    (engine_base / "advisory.json").write_text(json.dumps(advisory))
    # dev as prod with an in-cluster GCS Redis (its password from config, its Secret protected) used by
    # one cluster: small enough to bring up twice.
    rotation = json.loads(json.dumps(as_prod))
    platform = rotation["config"]["kuberay-platform:platform"]
    redis = {"type": "redis", "namespace": "ray-dev", "storageSize": "1Gi", "password": {"config": "redisGcsPassword"}}
    platform["gcsStorage"] = {"redis-gcs": redis}
    platform["workloads"]["rayClusters"][0]["gcsFaultTolerance"] = {"backend": "redis", "storage": "redis-gcs"}
    (engine_base / "rotation.yaml").write_text(yaml.safe_dump(rotation))
    mistake = json.loads(json.dumps(dev))
    mistake["config"]["kuberay-platform:platform"]["operator"]["scal"] = "large"
    (engine_base / "mistake.yaml").write_text(yaml.safe_dump(mistake))

    plan: list[Run] = [
        Run(
            stack,
            ["-m", "tools", "pulumi-preview", "--stack", stack, "--up", *common]
            + [arg for pair in STACK_SECRETS.get(stack, []) for arg in ("--secret-from-env", pair)],
        )
        for stack in STACKS
    ]
    planted = engine_base / "planted.yaml"
    plan.append(Run("mandatory", _planted_head_runs_tasks(planted, ["--stack", "planted", *common])))
    advisory_args = ["--stack", "planted-advisory", "--policy-config", str(engine_base / "advisory.json")]
    plan.append(Run("advisory", _planted_head_runs_tasks(planted, [*advisory_args, *common])))
    plan.append(Run("rotation", _rotation(engine_base / "rotation.yaml", ["--stack", "rotation", *common])))
    plan.append(
        Run(
            "mistake",
            [
                "-m",
                "tools",
                "pulumi-preview",
                "--stack",
                "mistake",
                "--stack-file",
                str(engine_base / "mistake.yaml"),
                *common,
            ],
        )
    )
    env = {
        **os.environ,
        "ENGINE_PROBE_SECRET": SECRET,
        "ENGINE_REDIS_PASSWORD": REDIS_PASSWORD,
        "ENGINE_RAY_TOKEN": RAY_TOKEN,
        "ENGINE_ROTATION_OLD": ROTATED[0],
        "ENGINE_ROTATION_NEW": ROTATED[1],
    }
    procs = [
        (
            run,
            subprocess.Popen(
                [sys.executable, *run.args],
                cwd=REPO,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
        )
        for run in plan
    ]
    for run, proc in procs:
        run.output, _ = proc.communicate(timeout=1800)
        run.returncode = proc.returncode
        (engine_base / f"{run.name}.log").write_text(run.output)  # kept for a failing run's details
    yield {run.name: run for run in plan}


def state(engine_base: Path, stack: str) -> dict[str, Any]:
    path = engine_base / "pulumi" / "render" / "state" / ".pulumi" / "stacks" / "kuberay-platform" / f"{stack}.json"
    return json.loads(path.read_text())


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader: the rendered charts' CRDs are megabytes of YAML."""


def rendered(engine_base: Path, stack: str) -> list[dict[str, Any]]:
    """The objects the run rendered (read once: the runs are over before any test reads them)."""
    return list(_rendered(engine_base / "out" / stack / "rendered"))


@functools.cache
def _rendered(folder: Path) -> tuple[dict[str, Any], ...]:
    docs = (yaml.load_all(path.read_text(), Loader=LOADER) for path in sorted(folder.rglob("*.yaml")))
    return tuple(doc for file_docs in docs for doc in file_docs if doc)


def holders(engine_base: Path, folders: list[str], *values: bytes) -> set[str]:
    """Files under ``folders`` (relative to ``engine_base``) that contain any of ``values``."""
    return {
        path.relative_to(engine_base).as_posix()
        for folder in folders
        for path in (engine_base / folder).rglob("*")
        if path.is_file() and path.stat().st_size < 50_000_000 and any(v in path.read_bytes() for v in values)
    }


def key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj.get("metadata") or {}
    return (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])


@pytest.mark.parametrize("stack", STACKS)
def test_each_stack_previews_ups_and_then_shows_no_changes(runs: dict[str, Run], stack: str) -> None:
    run = runs[stack]
    assert run.ok, run.output[-4000:]
    assert "Traceback" not in run.output
    # The pack ran on preview and up, and the last preview found nothing to change.
    assert run.output.count("✅ kuberay-platform-policies@") == 2, run.output[-3000:]
    last = run.output.rsplit("Previewing update", 1)[1]
    assert "unchanged" in last and " to create" not in last and " to update" not in last


@pytest.mark.parametrize("stack", STACKS)
def test_the_rendered_objects_are_the_offline_previews_manifests(
    runs: dict[str, Run], engine_base: Path, tmp_path: Path, stack: str
) -> None:
    assert runs[stack].ok
    offline = subprocess.run(
        [sys.executable, "-m", "tools", "preview", "--stack", stack, "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert offline.returncode == 0, offline.stderr
    expected = {
        key(doc): doc
        for path in (tmp_path / stack / "manifests").glob("*.yaml")
        for doc in yaml.load_all(path.read_text(), Loader=LOADER)
    }
    actual = {key(doc): doc for doc in rendered(engine_base, stack)}
    assert any(k[0].startswith("ray.io/") for k in expected)
    for k, doc in expected.items():
        assert k in actual, f"{k} is in the offline preview but the real engine did not render it"
        if doc["kind"] == "Secret":  # offline, the data is a placeholder; rendered, the value itself
            assert doc["stringData"] == "[secret]"
            assert {f: actual[k].get(f) for f in ("metadata", "type")} == {f: doc.get(f) for f in ("metadata", "type")}
            continue
        assert actual[k] == doc, f"{k} differs between the offline preview and the real engine"
    # Same URNs: the offline plan is what a baseline for stateful-resources-kept is read from.
    plan = json.loads((tmp_path / stack / "plan.json").read_text())["resources"]
    urns = {r["urn"] for r in state(engine_base, stack)["checkpoint"]["latest"]["resources"]}
    missing = [r["urn"] for r in plan if r["urn"] not in urns]
    assert len(plan) >= 20 and missing == [], missing[:5]


@pytest.mark.parametrize("stack", STACKS)
def test_the_charts_own_objects_exist_and_pass_strict_validation(
    runs: dict[str, Run], engine_base: Path, stack: str
) -> None:
    assert runs[stack].ok
    objects = rendered(engine_base, stack)
    kinds = {doc["kind"] for doc in objects}
    assert {"Deployment", "ServiceAccount", "CustomResourceDefinition"} <= kinds
    # RBAC: cluster-wide, or a Role per watched namespace (templates/multiple_namespaces_role.yaml).
    assert {"ClusterRole", "ClusterRoleBinding"} <= kinds or {"Role", "RoleBinding"} <= kinds
    spec = parse_platform(
        yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]["kuberay-platform:platform"],
        stack,
    )
    validator = Validator(spec.kubernetes_version)
    problems = [f"{key(doc)}: {err}" for doc in objects for err in validator.validate(doc)]
    assert problems == []


@pytest.mark.parametrize("stack", STACKS)
def test_the_crds_are_retained_on_delete_in_the_real_state(runs: dict[str, Run], engine_base: Path, stack: str) -> None:
    assert runs[stack].ok
    resources = state(engine_base, stack)["checkpoint"]["latest"]["resources"]
    crds = [r for r in resources if r["type"] == CRD]
    expected = ["rayclusters.ray.io", "raycronjobs.ray.io", "rayjobs.ray.io", "rayservices.ray.io"]
    if stack == "staging":  # installs Kueue: its chart's CRDs are kept just the same
        kueue = sorted(REPO.glob("schemas/crds/kueue.x-k8s.io_*.json"))
        expected += [f"{p.stem.split('_', 1)[1]}.kueue.x-k8s.io" for p in kueue]
    assert sorted(r["inputs"]["metadata"]["name"] for r in crds) == sorted(expected)
    assert all(r.get("retainOnDelete") is True for r in crds)
    # Besides the CRDs, only durable GCS state is retained (and protected): prod's Redis and its Secrets.
    retained = {r["type"] for r in resources if r.get("retainOnDelete") and r["type"] != CRD}
    protected = {r["type"] for r in resources if r.get("protect") and r["type"].startswith("kubernetes:")}
    storage = {"kubernetes:apps/v1:StatefulSet", "kubernetes:core/v1:Secret"}
    assert retained == (storage if stack == "prod" else set())
    assert storage <= protected if stack == "prod" else not protected & storage


@pytest.mark.parametrize("stack", STACKS)
def test_the_operator_deployment_reflects_the_stacks_values(
    runs: dict[str, Run], engine_base: Path, stack: str
) -> None:
    assert runs[stack].ok
    raw = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]["kuberay-platform:platform"]
    op = parse_platform(raw, stack).operator
    operators = {
        d["metadata"].get("namespace"): d
        for d in rendered(engine_base, stack)
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "kuberay-operator"
    }
    deployment = operators.pop(op.namespace)
    # A team's own operator (prod's training) watches only its namespace, with the same gates.
    spec = parse_platform(raw, stack)
    assert set(operators) == {t.namespace or n for n, t in spec.teams.items() if t.own_operator}
    for namespace, team_deployment in operators.items():
        (team_container,) = team_deployment["spec"]["template"]["spec"]["containers"]
        team_args = team_container["args"]
        assert team_args[team_args.index("--watch-namespace") + 1] == namespace
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    profile = op.profile
    assert f"--reconcile-concurrency={op.reconcile_concurrency or profile.reconcile_concurrency}" in args
    assert f"--qps={op.kube_client_qps or profile.kube_client_qps:g}" in args
    assert f"--burst={op.kube_client_burst or profile.kube_client_burst}" in args
    resources = state(engine_base, stack)["checkpoint"]["latest"]["resources"]
    (root,) = [r for r in resources if r["type"] == "pulumi:pulumi:Stack"]
    exported = root["outputs"]["featureGates"]
    (gates,) = [a.removeprefix("--feature-gates=") for a in args if a.startswith("--feature-gates=")]
    assert dict(g.split("=") for g in gates.split(",")) == {k: str(v).lower() for k, v in exported.items()}
    for team_deployment in operators.values():
        team_args = team_deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        assert [a for a in team_args if a.startswith("--feature-gates=")] == [f"--feature-gates={gates}"]
    if op.watch_namespaces:
        assert args[args.index("--watch-namespace") + 1] == ",".join(op.watch_namespaces)
    else:
        assert "--watch-namespace" not in args
    assert container["image"] == f"{op.image.repository}:{op.image.tag}"
    assert (container["resources"]["limits"]["memory"]) == (op.resources or profile.resources).limits.memory


def test_staging_installs_kueue_configured_for_ray(runs: dict[str, Run], engine_base: Path) -> None:
    assert runs["staging"].ok
    objects = {(d["kind"], d["metadata"]["name"]): d for d in rendered(engine_base, "staging")}
    deployment = objects[("Deployment", "kueue-controller-manager")]
    assert deployment["metadata"]["namespace"] == "kueue-system"
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.k8s.io/kueue/kueue:v0.19.2"
    config = yaml.safe_load(objects[("ConfigMap", "kueue-manager-config")]["data"]["controller_manager_config.yaml"])
    assert config["integrations"]["frameworks"] == ["ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"]
    # The chart filled in its own webhook certificate settings around ours.
    assert config["internalCertManagement"]["enable"] is True
    webhooks = objects[("MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration")]["webhooks"]
    assert {"mrayjob.kb.io", "mraycluster.kb.io", "mrayservice.kb.io"} <= {w["name"] for w in webhooks}


def test_a_mandatory_violation_fails_the_real_preview(runs: dict[str, Run]) -> None:
    run = runs["mandatory"]
    assert run.returncode != 0
    assert re.search(r"\[mandatory\]\s+head-runs-tasks\s+\(kubernetes:ray.io/v1:RayCluster", run.output), run.output[
        -3000:
    ]
    assert 'set num-cpus: "0" so tasks and actors are never scheduled on the head' in run.output
    assert "Traceback" not in run.output


def test_the_same_violation_set_to_advisory_passes_with_a_warning(runs: dict[str, Run]) -> None:
    run = runs["advisory"]
    assert run.ok, run.output[-3000:]
    assert re.search(r"\[advisory\]\s+head-runs-tasks\s+\(kubernetes:ray.io/v1:RayCluster", run.output), run.output[
        -3000:
    ]


def test_a_config_mistake_stops_the_real_preview_with_the_offline_one_line_message(
    runs: dict[str, Run], engine_base: Path
) -> None:
    run = runs["mistake"]
    assert run.returncode != 0
    offline = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools",
            "preview",
            "--stack",
            "mistake",
            "--stack-file",
            str(engine_base / "mistake.yaml"),
            "--out",
            str(engine_base / "offline"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert offline.returncode == 2
    (line,) = offline.stderr.strip().splitlines()
    assert "platform.operator.scal: unknown key" in line
    assert line in run.output
    assert "Traceback" not in run.output and "runtime error" not in run.output


def test_the_redis_password_reaches_only_its_secrets(runs: dict[str, Run], engine_base: Path) -> None:
    """prod's GCS Redis password: in the rendered Secrets (render mode writes their data, by
    design), and nowhere else: not in the output, the state, the stack file or any other object."""
    assert runs["prod"].ok
    assert REDIS_PASSWORD not in runs["prod"].output
    forms = (REDIS_PASSWORD.encode(), base64.b64encode(REDIS_PASSWORD.encode()))  # stringData or data
    found = holders(engine_base, ["pulumi", "out/prod"], *forms)
    assert found and all(h.startswith("out/prod/rendered/1-manifest/v1-secret-") for h in found), found
    for path in found:
        (secret,) = yaml.safe_load_all((engine_base / path).read_text())
        assert secret["kind"] == "Secret"


def test_the_ray_token_reaches_only_its_secret(runs: dict[str, Run], engine_base: Path) -> None:
    """prod's RayService token (a config secret): only in its rendered Secret, under auth_token."""
    assert runs["prod"].ok
    assert RAY_TOKEN not in runs["prod"].output
    forms = (RAY_TOKEN.encode(), base64.b64encode(RAY_TOKEN.encode()))
    found = holders(engine_base, ["pulumi", "out/prod"], *forms)
    assert len(found) == 1 and all(h.startswith("out/prod/rendered/1-manifest/v1-secret-") for h in found), found
    (secret,) = yaml.safe_load_all((engine_base / found.pop()).read_text())
    assert secret["metadata"]["name"] == "qwen-chat-ray-token"
    assert set(secret.get("stringData") or secret.get("data") or {}) == {"auth_token"}


def test_a_secret_config_value_never_appears_in_plain_text(runs: dict[str, Run], engine_base: Path) -> None:
    assert runs["dev"].ok
    assert SECRET not in runs["dev"].output
    stack_file = engine_base / "pulumi" / "render" / "work" / "dev" / "Pulumi.dev.yaml"
    config = yaml.safe_load(stack_file.read_text())["config"]
    assert set(config[SECRET_KEY]) == {"secure"}  # encrypted by the passphrase provider
    assert holders(engine_base, ["pulumi", "out"], SECRET.encode()) == set()


def test_a_rotated_redis_password_updates_its_protected_secrets(runs: dict[str, Run], engine_base: Path) -> None:
    """A new password for a prod GCS Redis: the provider updates its Secrets (the stack sets
    ``kubernetes:enableSecretMutable``) instead of replacing them, which the protected one would refuse."""
    run = runs["rotation"]
    assert run.ok, run.output[-4000:]
    second = run.output.split("ROTATING", 1)[1]
    assert re.search(r"~ +kubernetes:core/v1:Secret +\S*password\S* +update", second), second[-4000:]
    assert "replace" not in second and "protected" not in second
    forms = {value: (value.encode(), base64.b64encode(value.encode())) for value in ROTATED}
    assert not any(value in run.output for value in ROTATED)
    assert holders(engine_base, ["pulumi", "out/rotation"], *forms[ROTATED[0]]) == set()  # rewritten everywhere
    found = holders(engine_base, ["pulumi", "out/rotation"], *forms[ROTATED[1]])
    assert found and all(h.startswith("out/rotation/rendered/1-manifest/v1-secret-") for h in found), found
    resources = state(engine_base, "rotation")["checkpoint"]["latest"]["resources"]
    password_secrets = [r for r in resources if r["type"] == "kubernetes:core/v1:Secret" and "-password-" in r["urn"]]
    assert password_secrets and any(r.get("protect") for r in password_secrets)
