"""The Kueue controller v0.19.2 as a local process against the local control plane (``make e2e``).

It runs with the Configuration the stack's chart would give it (``kueue_configuration``: the chart's
default file with the stack's integrations), changed only where a process outside the cluster
differs from the chart's pod:

- its webhook server always starts and needs ``tls.crt``/``tls.key`` in ``webhook.certDir``; with
  ``internalCertManagement.enable: false`` they are generated here for 127.0.0.1, and the Ray and
  Kueue webhooks of its module's ``config/components/webhook/manifests.yaml`` are registered with
  ``url: https://127.0.0.1:<port>/<path>`` and that CA (as controller-runtime's envtest registers
  webhooks). The pod, Job, Deployment, StatefulSet and other frameworks' webhooks are not: nothing
  here runs those integrations, and a pod webhook would sit in front of every pod;
- without internal certificate management Kueue reads its metrics certificate from the fixed path
  ``/etc/kueue/metrics/certs/`` (``cmd/kueue/main.go``): written there (it needs root; the e2e fails
  with that reason otherwise);
- leader election off, and every listener (health, metrics, webhook) on a free loopback port;
- the on-demand visibility API off (``VisibilityOnDemand=false``): its server reads its certificate
  from the fixed path ``/visibility/`` and serves an APIService the e2e does not use;
- its CRDs come from its module's ``config/components/crd/bases/`` (the chart ships the same files).
"""

from __future__ import annotations

import copy
import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from components.manifests.kueue_install import kueue_configuration
from components.spec.kueue import KueueInstallSpec
from tools.controlplane import certificate, pem

NAMESPACE = "kueue-system"
METRICS_CERT_DIR = Path("/etc/kueue/metrics/certs")
WEBHOOK_MANIFESTS = "config/components/webhook/manifests.yaml"
CRD_DIR = "config/components/crd/bases"
REGISTERED_GROUPS = {"ray.io", "kueue.x-k8s.io"}
WEBHOOK_NAMES = {
    "MutatingWebhookConfiguration": "kuberay-platform-e2e-kueue-mutating",
    "ValidatingWebhookConfiguration": "kuberay-platform-e2e-kueue-validating",
}


def serving_certificate(directory: Path) -> bytes:
    """A CA and a 127.0.0.1 serving certificate in ``directory`` (tls.crt, tls.key); returns the CA PEM."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kuberay-platform e2e Kueue CA")])
    ca = certificate(ca_name, ca_key, None, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")), x509.DNSName("localhost")]
    cert = certificate(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]), key, (ca_name, ca_key), sans=sans
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # Written aside and renamed: parallel e2e runs share the fixed metrics directory.
    for name, data, mode in (
        ("tls.key", key_pem, 0o600),
        ("tls.crt", pem(cert), 0o644),
    ):
        partial = directory / f".{name}.{os.getpid()}"
        partial.write_bytes(data)
        partial.chmod(mode)
        partial.replace(directory / name)
    return pem(ca)


def configuration(spec: KueueInstallSpec, cert_dir: Path, ports: Mapping[str, int]) -> dict[str, Any]:
    """The stack's Kueue Configuration with the local process's listeners, certificates and no election."""
    config = copy.deepcopy(kueue_configuration(spec))
    config["namespace"] = NAMESPACE
    config["health"] = {"healthProbeBindAddress": f"127.0.0.1:{ports['health']}"}
    config["metrics"] = {"bindAddress": f"127.0.0.1:{ports['metrics']}"}
    config["webhook"] = {"port": ports["webhook"], "host": "127.0.0.1", "certDir": str(cert_dir)}
    config["leaderElection"] = {"leaderElect": False}
    config["internalCertManagement"] = {"enable": False}
    return config


def feature_gates(spec: KueueInstallSpec) -> str:
    gates = {**spec.feature_gates, "VisibilityOnDemand": False}
    return ",".join(f"{name}={'true' if on else 'false'}" for name, on in sorted(gates.items()))


def webhook_configurations(module_dir: Path, port: int, ca: bytes) -> list[dict[str, Any]]:
    """Kueue's Ray and core webhooks from its module, pointed at the local webhook server."""
    import base64

    out = []
    for doc in yaml.safe_load_all((module_dir / WEBHOOK_MANIFESTS).read_text()):
        hooks = []
        for hook in doc["webhooks"]:
            groups = {g for rule in hook["rules"] for g in rule["apiGroups"]}
            if not groups & REGISTERED_GROUPS:
                continue
            hook = copy.deepcopy(hook)
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {
                "url": f"https://127.0.0.1:{port}{path}",
                "caBundle": base64.b64encode(ca).decode(),
            }
            hooks.append(hook)
        out.append(
            {
                "apiVersion": doc["apiVersion"],
                "kind": doc["kind"],
                "metadata": {"name": WEBHOOK_NAMES[doc["kind"]]},
                "webhooks": hooks,
            }
        )
    return out


def crds(module_dir: Path) -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text()) for p in sorted((module_dir / CRD_DIR).glob("*.yaml"))]


def argv(binary: Path, config_file: Path, kubeconfig: Path, spec: KueueInstallSpec) -> list[str]:
    args = [str(binary), f"--config={config_file}", f"--kubeconfig={kubeconfig}"]
    if gates := feature_gates(spec):
        args.append(f"--feature-gates={gates}")
    return args
