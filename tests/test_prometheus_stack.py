"""kube-prometheus-stack installed by the stack (``monitoring.install``) for a bare cluster: values
that exist in the pinned chart, a Prometheus that selects the platform's monitors and rules, Grafana
credentials from a Secret, and the order it is created in."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.manifests.platform import build_manifests
from components.manifests.prometheus_stack import prometheus_stack_values
from components.spec import parse_platform
from components.spec.monitoring import MonitoringSpec
from components.stack_config import StackConfigError, required_secret_config
from tests.conftest import REPO
from tools.chart_values import unknown_keys
from tools.engine import RecordedResource, run_program
from tools.preview import run_preview

CHART_VALUES = json.loads((REPO / "schemas" / "charts" / "kube-prometheus-stack.json").read_text())["values"]
EXAMPLE = REPO / "examples" / "Pulumi.bare-cluster.yaml"
PASSWORD = "grafana-pw-4f1d9c"


def example() -> dict[str, Any]:
    return copy.deepcopy(yaml.safe_load(EXAMPLE.read_text())["config"]["kuberay-platform:platform"])


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def run(data: dict[str, Any], password: str | None = PASSWORD) -> list[RecordedResource]:
    config: dict[str, Any] = {"kuberay-platform:platform": data}
    if password is not None:
        config["kuberay-platform:grafanaAdminPassword"] = password
    return run_program(REPO, "test", config, secret_keys=["kuberay-platform:grafanaAdminPassword"])


def test_the_bare_cluster_example_previews_clean_with_the_chart_values_checked() -> None:
    result = run_preview("bare-cluster", stack_path=EXAMPLE)
    assert result.schema_errors == [] and result.violations == []
    (chart,) = [r for r in result.resources if r.inputs.get("name") == "kube-prometheus-stack"]
    assert chart.inputs["chart"] == "kube-prometheus-stack" and chart.inputs["version"] == "88.6.1"
    assert chart.inputs["repositoryOpts"] == {"repo": "https://prometheus-community.github.io/helm-charts"}
    assert result.unset_secrets == ["kuberay-platform:grafanaAdminPassword"]


def test_every_value_exists_in_the_pinned_chart() -> None:
    monitoring = MonitoringSpec.model_validate(
        {
            "install": {
                "storage": {"size": "100Gi", "storageClass": "premium-rwo"},
                "replicas": 2,
                "grafana": {"adminPassword": {"secret": {"name": "ops-grafana", "key": "pw"}}},
            }
        }
    )
    values = prometheus_stack_values(monitoring)
    assert unknown_keys(values, CHART_VALUES) == []
    prometheus = values["prometheus"]["prometheusSpec"]
    assert prometheus["storageSpec"]["volumeClaimTemplate"]["spec"]["storageClassName"] == "premium-rwo"
    assert prometheus["replicas"] == 2 and prometheus["retention"] == "15d"
    # An existing Secret is read by its own key; the stack creates none.
    assert values["grafana"]["admin"] == {"existingSecret": "ops-grafana", "userKey": "admin-user", "passwordKey": "pw"}
    assert values["grafana"]["sidecar"]["dashboards"]["label"] == "grafana_dashboard"


def test_the_charts_prometheus_selects_the_platforms_monitors_and_rules() -> None:
    """What the values rely on, read from the pinned chart: its Prometheus selects monitors and rules
    by the release label in every namespace, and Grafana's sidecar watches the dashboards' label."""
    spec = CHART_VALUES["prometheus"]["prometheusSpec"]
    for kind in ("serviceMonitor", "podMonitor", "rule"):
        assert spec[f"{kind}SelectorNilUsesHelmValues"] is True
        assert spec[f"{kind}Selector"] == {} and spec[f"{kind}NamespaceSelector"] == {}
    assert CHART_VALUES["grafana"]["sidecar"]["dashboards"]["searchNamespace"] == "ALL"
    dashboards = CHART_VALUES["grafana"]["sidecar"]["dashboards"]
    assert (dashboards["label"], dashboards["labelValue"]) == ("grafana_dashboard", "1")
    assert MonitoringSpec().prometheus.selector_labels == {"release": "kube-prometheus-stack"}
    assert MonitoringSpec().dashboards.labels == {"grafana_dashboard": "1"}


def test_the_stack_comes_before_the_platforms_monitors_and_its_password_is_a_secret() -> None:
    resources = run(example())
    (chart,) = [r for r in resources if r.type == "kubernetes:helm.sh/v4:Chart" and "prometheus" in r.name]
    namespaces = [r for r in resources if r.type == "kubernetes:core/v1:Namespace"]
    (namespace,) = [r for r in namespaces if r.name.endswith("prometheus-stack-namespace")]
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    (secret,) = [r for r in resources if r.type == "kubernetes:core/v1:Secret"]
    assert secret.inputs["metadata"]["namespace"] == "monitoring"
    assert secret.urn in chart.dependencies and namespace.urn in secret.dependencies
    monitors = [r for r in resources if r.type.startswith("kubernetes:monitoring.coreos.com/v1:")]
    assert {r.type.rsplit(":", 1)[1] for r in monitors} == {"PodMonitor", "ServiceMonitor", "PrometheusRule"}
    assert all(chart.urn in r.dependencies for r in monitors)
    # The config secret's value stays a secret: the engine records the Secret's data as one.
    assert secret.inputs["stringData"] == "[secret]"
    assert PASSWORD not in json.dumps([r.inputs for r in resources])


def test_without_node_exporter_the_namespace_enforces_baseline() -> None:
    data = example()
    data["monitoring"]["install"]["nodeExporter"] = False
    manifests = build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    assert manifests.prometheus_stack is not None
    labels = manifests.prometheus_stack.namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    assert manifests.prometheus_stack.values["nodeExporter"] == {"enabled": False}


def test_a_missing_grafana_password_is_one_line_naming_the_command() -> None:
    with pytest.raises(StackConfigError) as info:
        run(example(), password=None)
    assert str(info.value) == (
        "stacks/Pulumi.test.yaml: config.kuberay-platform:grafanaAdminPassword: Grafana's admin password is not "
        "set; run `pulumi config set --secret kuberay-platform:grafanaAdminPassword <value>` (it is stored encrypted)"
    )
    spec = parse_platform(example(), "s.yaml")
    assert required_secret_config(spec) == ["kuberay-platform:grafanaAdminPassword"]


def test_grafana_needs_an_admin_password_and_no_grafana_needs_none() -> None:
    data = example()
    del data["monitoring"]["install"]["grafana"]["adminPassword"]
    assert any("monitoring.install.grafana.adminPassword" in line for line in errors(data))
    data = example()
    del data["monitoring"]["install"]["grafana"]
    manifests = build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    assert manifests.prometheus_stack is not None and manifests.prometheus_stack.grafana_admin is None
    assert manifests.prometheus_stack.values["grafana"] == {"enabled": False}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d.setdefault("prerequisites", {}).update(prometheusOperator=True),
            "platform.monitoring.install: kube-prometheus-stack is installed by the stack or already there",
        ),
        (
            lambda d: d["monitoring"].update(prometheus={"selectorLabels": {"prometheus": "main"}}),
            "the installed kube-prometheus-stack selects release: kube-prometheus-stack; drop selectorLabels",
        ),
        (
            lambda d: d["monitoring"].update(prometheus={"namespace": "ray-dev"}),
            "platform.monitoring.prometheus.namespace: ray-dev is a namespace of workloads, teams or the operator",
        ),
        (
            lambda d: d["monitoring"].update(dashboards={"labels": {"a": "1", "b": "2"}}),
            "the installed Grafana's sidecar watches one label; give exactly one",
        ),
        (
            lambda d: d["monitoring"]["install"].update(retention="a week"),
            "platform.monitoring.install.retention",
        ),
    ],
)
def test_contradictions_are_config_errors(edit: Any, message: str) -> None:
    data = example()
    edit(data)
    lines = errors(data)
    assert any(message in line for line in lines), lines


def test_monitoring_without_install_or_prerequisite_says_both_ways() -> None:
    data = example()
    del data["monitoring"]["install"]
    (line,) = errors(data)
    assert "set monitoring.install: {} to install kube-prometheus-stack, or install one and set" in line
