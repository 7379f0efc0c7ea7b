"""The stack file's JSON Schema and reference page are generated from the spec models: they match the
committed files, every shipped stack names and satisfies the schema, and the schema says no where
the spec says no."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
import yaml

from components.errors import ConfigError
from components.spec import parse_platform
from tools.stack_schema import REFERENCE_FILE, SCHEMA_FILE, generated, modeline, run, stack_files

SCHEMA = json.loads(SCHEMA_FILE.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
PROD = yaml.safe_load((SCHEMA_FILE.parent / "Pulumi.prod.yaml").read_text())


def test_the_committed_schema_and_reference_are_what_the_models_generate() -> None:
    for path, text in generated().items():
        assert path.read_text() == text, f"{path.name} drifted from components/spec: run `make stack-schema`"
    assert run(check=True) == 0


def test_every_stack_file_names_the_schema_and_satisfies_it() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    files = stack_files()
    assert len(files) >= 5
    for path in files:
        assert path.read_text().splitlines()[0] == modeline(path)
        assert (path.parent / modeline(path).split("=", 1)[1]).resolve() == SCHEMA_FILE.resolve()
        errors = [
            f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(yaml.safe_load(path.read_text()))
        ]
        assert errors == [], path


def _spec_refuses(platform: dict[str, Any]) -> bool:
    try:
        parse_platform(platform, "s.yaml")
    except ConfigError:
        return True
    return False


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda p: p.update(environment="qa"), ["environment"]),
        (lambda p: p["workloads"]["rayClusters"][0].update(nmae="x"), ["workloads", "rayClusters", 0]),
        (lambda p: p["workloads"]["rayClusters"][0]["head"]["resources"].update(cpu="lots"), ["workloads"]),
        (lambda p: p["teams"]["training"].update(ownOperator="maybe"), ["teams", "training", "ownOperator"]),
        (lambda p: p["networkPolicies"].update(apiServerCidrs=["not-a-cidr"]), ["networkPolicies"]),
        (lambda p: p["workloads"]["rayClusters"][0].update(networkPolicy="AllowAll"), ["workloads"]),
    ],
)
def test_the_schema_refuses_what_the_spec_refuses(edit: Any, path: list[Any]) -> None:
    stack = copy.deepcopy(PROD)
    platform = stack["config"]["kuberay-platform:platform"]
    edit(platform)
    errors = list(VALIDATOR.iter_errors(stack))
    assert errors, "the schema accepted it"
    prefix = ["config", "kuberay-platform:platform", *path]
    assert any(list(e.absolute_path)[: len(prefix)] == prefix for e in errors), [list(e.absolute_path) for e in errors]
    assert _spec_refuses(platform)


def test_config_secrets_and_plain_values_sit_beside_the_platform() -> None:
    stack = copy.deepcopy(PROD)
    stack["config"]["kuberay-platform:redisGcsPassword"] = {"secure": "v1:abc"}
    stack["config"]["kuberay-platform:note"] = "plain"
    stack["encryptionsalt"] = "v1:salt"
    assert list(VALIDATOR.iter_errors(stack)) == []
    stack["config"]["kuberay-platform:redisGcsPassword"] = {"secret": "oops"}
    assert list(VALIDATOR.iter_errors(stack))


def test_the_reference_lists_every_key_with_its_description() -> None:
    text = REFERENCE_FILE.read_text()
    for key in (
        "`platform.teams.<name>.ownOperator`",
        "`platform.networkPolicies.namespaces.<name>.egress[].purpose`",
        "`platform.workloads.rayServices[].auth`",
        "`platform.monitoring.install.grafana.adminPassword.config`",
        "`platform.certManager.acme.ingressClass`",
    ):
        assert key in text, key
    (row,) = [line for line in text.splitlines() if line.startswith("| `platform.teams.<name>.ownOperator`")]
    assert "single-namespace mode" in row and "| `false` |" in row


def test_the_environments_page_is_read_from_the_stacks() -> None:
    from tools.stack_schema import ENVIRONMENTS_FILE, _choices

    text = ENVIRONMENTS_FILE.read_text()
    assert "| teams | platform, research | - | training (own operator), research (untrusted) |" in text
    platform = copy.deepcopy(PROD["config"]["kuberay-platform:platform"])
    platform["teams"]["research"]["trusted"] = True
    platform["workloads"]["rayJobs"][1]["mtls"] = False
    choices = _choices(parse_platform(platform, "s.yaml"))
    assert choices["teams"] == "training (own operator), research" and choices["mTLS"] == "-"
