"""cert-manager (``platform.certManager``): the optional install, the platform's ClusterIssuers, the
dashboard certificates of heads with an ingress and their ingress-nginx annotations; mTLS and
untrusted tenants."""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pytest
import yaml

from components.charts import CRD_TYPE
from components.errors import ConfigError
from components.manifests.certificates import NGINX_DASHBOARD_ANNOTATIONS, cert_manager_values
from components.manifests.platform import build_manifests
from components.spec import parse_platform
from components.spec.certificates import CertManagerInstall
from tests.conftest import REPO
from tools.chart_values import unknown_keys
from tools.engine import run_program

PROD = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["kuberay-platform:platform"]
CHART_VALUES = json.loads((REPO / "schemas" / "charts" / "cert-manager.json").read_text())["values"]


def prod() -> dict[str, Any]:
    return copy.deepcopy(PROD)


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    return info.value.lines


def by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def test_the_private_ca_signs_the_dashboard_certificate_the_ingress_uses() -> None:
    manifests = build_manifests(parse_platform(PROD, "s.yaml"), "s.yaml")
    cm = manifests.cert_manager
    assert cm is not None and cm.namespace is None and cm.values is None  # prerequisites.certManager
    issuers = by_kind(cm.issuers, "ClusterIssuer")
    assert issuers["kuberay-platform-selfsigned"]["spec"] == {"selfSigned": {}}
    assert issuers["kuberay-platform-ca"]["spec"] == {"ca": {"secretName": "kuberay-platform-ca"}}
    (ca,) = [o for o in cm.issuers if o["kind"] == "Certificate"]
    assert ca["metadata"]["namespace"] == "cert-manager"  # the CA ClusterIssuer reads its key there
    assert ca["spec"]["isCA"] is True and ca["spec"]["issuerRef"]["name"] == "kuberay-platform-selfsigned"
    (cert,) = cm.certificates
    assert cert["metadata"]["namespace"] == "ray-prod"
    assert cert["spec"]["dnsNames"] == ["ray-prod.internal.example.com"]
    assert cert["spec"]["issuerRef"] == {
        "group": "cert-manager.io",
        "kind": "ClusterIssuer",
        "name": "kuberay-platform-ca",
    }
    (cluster,) = [w for w in manifests.workloads if w["metadata"]["name"] == "prod-cpu"]
    options = cluster["spec"]["headGroupSpec"]["ingressOptions"]
    assert options["tls"] == [{"hosts": ["ray-prod.internal.example.com"], "secretName": cert["spec"]["secretName"]}]
    # KubeRay copies the workload's annotations onto the Ingress and makes the class its ingressClassName.
    annotations = cluster["metadata"]["annotations"]
    assert annotations["kubernetes.io/ingress.class"] == "nginx"
    assert NGINX_DASHBOARD_ANNOTATIONS.items() <= annotations.items()


def test_issuers_and_certificates_come_before_the_workloads() -> None:
    config = {
        "kuberay-platform:platform": PROD,
        "kubernetes:enableSecretMutable": True,
        "kuberay-platform:redisGcsPassword": "x",
        "kuberay-platform:qwenChatRayToken": "t",
    }
    resources = run_program(REPO, "test", config)
    issuers = [r for r in resources if r.type == "kubernetes:cert-manager.io/v1:ClusterIssuer"]
    certificates = [r for r in resources if r.type == "kubernetes:cert-manager.io/v1:Certificate"]
    (dashboard,) = [r for r in certificates if r.inputs["metadata"]["namespace"] == "ray-prod"]
    assert {i.urn for i in issuers} <= set(dashboard.dependencies)
    ray = [r for r in resources if r.type.startswith("kubernetes:ray.io/v1:")]
    assert all(dashboard.urn in r.dependencies for r in ray)


def test_the_install_uses_the_pinned_chart_with_values_it_has() -> None:
    values = cert_manager_values(CertManagerInstall(replicas=2))
    assert unknown_keys(values, CHART_VALUES) == []
    assert values["crds"] == {"enabled": True, "keep": True}
    assert values["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}
    data = prod()
    data["prerequisites"]["certManager"] = False
    data["certManager"]["install"] = {}
    config = {
        "kuberay-platform:platform": data,
        "kubernetes:enableSecretMutable": True,
        "kuberay-platform:redisGcsPassword": "x",
        "kuberay-platform:qwenChatRayToken": "t",
    }
    resources = run_program(REPO, "test", config)
    (chart,) = [r for r in resources if r.type == "kubernetes:helm.sh/v4:Chart" and r.inputs["name"] == "cert-manager"]
    assert chart.inputs["version"] == "v1.21.1" and chart.inputs["namespace"] == "cert-manager"
    assert chart.inputs["repositoryOpts"] == {"repo": "https://charts.jetstack.io"}
    issuers = [r for r in resources if r.type == "kubernetes:cert-manager.io/v1:ClusterIssuer"]
    assert issuers and all(chart.urn in r.dependencies for r in issuers)
    (namespace,) = [
        r
        for r in resources
        if r.type == "kubernetes:core/v1:Namespace" and r.inputs["metadata"]["name"] == "cert-manager"
    ]
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    (transform,) = chart.transforms
    crd = pulumi.ResourceTransformArgs(
        custom=True, type_=CRD_TYPE, name="x", props={"metadata": {"name": "x"}}, opts=pulumi.ResourceOptions()
    )
    result = transform(crd)
    assert result is not None and result.opts.retain_on_delete is True


def test_an_acme_issuer_solves_through_the_ingress_class() -> None:
    data = prod()
    data["certManager"] = {"acme": {"email": "platform@example.com", "ingressClass": "nginx"}}
    cm = build_manifests(parse_platform(data, "s.yaml"), "s.yaml").cert_manager
    assert cm is not None
    (issuer,) = cm.issuers
    acme = issuer["spec"]["acme"]
    assert acme["server"] == "https://acme-v02.api.letsencrypt.org/directory"
    assert acme["solvers"] == [{"http01": {"ingress": {"ingressClassName": "nginx"}}}]
    assert acme["privateKeySecretRef"] == {"name": "kuberay-platform-acme-account"}
    assert cm.certificates[0]["spec"]["issuerRef"]["name"] == "kuberay-platform-acme"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["certManager"].update(install={}),
            "platform.certManager.install: cert-manager is installed by the stack or already there",
        ),
        (
            lambda d: d["prerequisites"].update(certManager=False),
            "platform.prerequisites.certManager: certManager needs cert-manager",
        ),
        (
            lambda d: (d.pop("certManager"), d["prerequisites"].update(certManager=False)),
            "platform.workloads.rayJobs[1].mtls: KubeRay issues the cluster's mTLS certificates through cert-manager",
        ),
        (
            lambda d: d["certManager"].pop("ca"),
            "platform.workloads.rayClusters[0].head.ingress.certificate: needs an issuer",
        ),
        (
            lambda d: d["certManager"].update(acme={"email": "a@example.com", "ingressClass": "nginx"}),
            "platform.certManager.ingressIssuer: both ca and acme are configured",
        ),
        (
            lambda d: d["workloads"]["rayJobs"][1].update(mtls=False),
            "platform.workloads.rayJobs[1].mtls: runs in untrusted team research's namespace: set mtls: true",
        ),
        (
            lambda d: d.pop("networkPolicies"),
            "platform.teams.research.trusted: an untrusted team's namespace ray-research must be policed",
        ),
        (
            lambda d: d["networkPolicies"].pop("ingressFrom"),
            "platform.networkPolicies.ingressFrom: workloads.rayClusters[0] has a head ingress",
        ),
    ],
)
def test_what_certificates_and_untrusted_tenants_need_is_a_config_error(edit: Any, message: str) -> None:
    data = prod()
    edit(data)
    lines = errors(data)
    assert any(message in line for line in lines), lines


def test_only_ingress_nginx_gets_the_nginx_annotations() -> None:
    data = prod()
    data["workloads"]["rayClusters"][0]["head"]["ingress"]["className"] = "traefik"
    manifests = build_manifests(parse_platform(data, "s.yaml"), "s.yaml")
    (cluster,) = [w for w in manifests.workloads if w["metadata"]["name"] == "prod-cpu"]
    annotations = cluster["metadata"]["annotations"]
    assert annotations["kubernetes.io/ingress.class"] == "traefik"
    assert not any(k.startswith("nginx.ingress.kubernetes.io/") for k in annotations)


def test_the_ingress_controller_reaches_only_exposed_dashboards() -> None:
    manifests = build_manifests(parse_platform(PROD, "s.yaml"), "s.yaml")
    (policy,) = [p for p in manifests.network_policies if p["metadata"]["name"] == "ray-ingress-to-dashboards"]
    assert policy["metadata"]["namespace"] == "ray-prod"
    assert policy["spec"]["podSelector"]["matchExpressions"][0]["values"] == ["prod-cpu"]
    (rule,) = policy["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8265}]
