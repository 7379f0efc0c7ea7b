"""serve-config-schema: the JSON Schemas of Ray's models (always) and Ray's models (when installed)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from policies.rules import serve_config_schema as rule
from tests.conftest import REPO

LLM_APP: dict[str, Any] = {
    "name": "llm",
    "import_path": "ray.serve.llm:build_openai_app",
    "route_prefix": "/",
    "args": {
        "llm_configs": [
            {
                "model_loading_config": {"model_id": "qwen", "model_source": "Qwen/Qwen2.5-7B-Instruct"},
                "accelerator_type": "A100",
                "deployment_config": {"autoscaling_config": {"min_replicas": 1, "max_replicas": 2}},
                "engine_kwargs": {"tensor_parallel_size": 4},
            }
        ]
    },
}
PLAIN_APP: dict[str, Any] = {
    "name": "app",
    "import_path": "app.main:deployment",
    "route_prefix": "/app",
    "deployments": [{"name": "Model", "num_replicas": 2, "ray_actor_options": {"num_cpus": 1}}],
}
VALID: dict[str, Any] = {"applications": [PLAIN_APP, LLM_APP]}


def mutated(change: Callable[[dict[str, Any]], None]) -> str:
    doc = copy.deepcopy(VALID)
    change(doc)
    return yaml.safe_dump(doc)


def llm(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["applications"][1]["args"]["llm_configs"][0]


# Mistakes the JSON Schemas catch without Ray: each must be one that Ray's models reject too.
SCHEMA_CATCHES = {
    "replicas-range": (lambda d: d["applications"][0]["deployments"][0].update(num_replicas=-1), "num_replicas"),
    "missing-import-path": (lambda d: d["applications"][0].pop("import_path"), "'import_path' is a required"),
    "cpus-type": (
        lambda d: d["applications"][0]["deployments"][0]["ray_actor_options"].update(num_cpus="one"),
        "num_cpus",
    ),
    "accelerator": (lambda d: llm(d).update(accelerator_type="A100-80GB"), "'A100-80GB' is not one of the"),
    "llm-unknown-key": (lambda d: llm(d).update(acelerator_type="A100"), "acelerator_type"),
    "llm-deployment-config-type": (lambda d: llm(d).update(deployment_config="big"), "deployment_config"),
    "applications-type": (lambda d: d.update(applications={"a": 1}), "applications"),
}
# Mistakes only Ray's models (cross-field validators) catch.
RAY_ONLY = {
    "import-path-form": lambda d: d["applications"][0].update(import_path="nodots"),
    "duplicate-app-names": lambda d: d["applications"][1].update(name="app"),
    "replicas-and-autoscaling": lambda d: d["applications"][0]["deployments"][0].update(
        autoscaling_config={"min_replicas": 1, "max_replicas": 3}
    ),
}


@pytest.fixture()
def schema_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rule.MODE_ENV, "schema")
    rule.ray_models_available.cache_clear()
    rule.serve_config_errors.cache_clear()
    yield
    rule.ray_models_available.cache_clear()
    rule.serve_config_errors.cache_clear()


def test_a_valid_config_passes_both_layers() -> None:
    assert rule.ray_models_available()
    assert rule.serve_config_errors(yaml.safe_dump(VALID)) == ()
    assert rule._ray_model_errors(VALID) == []


@pytest.mark.parametrize("case", SCHEMA_CATCHES)
def test_the_schemas_catch_what_ray_rejects_without_ray(case: str, schema_only: None) -> None:
    change, fragment = SCHEMA_CATCHES[case]
    text = mutated(change)
    problems = rule.serve_config_errors(text)
    assert any(fragment in p for p in problems), problems
    assert rule._ray_model_errors(yaml.safe_load(text)), "the schema rejects what Ray accepts"


@pytest.mark.parametrize("case", RAY_ONLY)
def test_cross_field_validators_need_ray_itself(case: str, schema_only: None) -> None:
    text = mutated(RAY_ONLY[case])
    assert rule.serve_config_errors(text) == ()  # the documented limit of the schema layer
    os.environ.pop(rule.MODE_ENV)
    rule.ray_models_available.cache_clear()
    rule.serve_config_errors.cache_clear()
    assert rule.serve_config_errors(text), "Ray's models accept it"


def test_without_ray_nothing_imports_it() -> None:
    """The policy pack and make lint (no Ray in their installs) validate serve configs all the same."""
    code = (
        "import sys, yaml; from policies.rules import serve_config_schema as r; "
        "from tests.test_serve_config_schema import VALID; "
        "bad = yaml.safe_load(yaml.safe_dump(VALID)); bad['applications'][0]['deployments'][0]['num_replicas'] = -1; "
        "print(len(r.serve_config_errors(yaml.safe_dump(bad)))); assert 'ray' not in sys.modules, 'ray imported'"
    )
    env = {**os.environ, rule.MODE_ENV: "schema"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) >= 1
