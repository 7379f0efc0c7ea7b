"""A local Kubernetes control plane from the pinned builds (``make controlplane-toolchain``): etcd and
kube-apiserver on loopback with generated certificates, started the way controller-runtime's envtest
starts them (``pkg/internal/testing/controlplane``), plus kube-controller-manager and kube-scheduler,
and a kubeconfig for a ``system:masters`` client certificate. ``stop`` leaves no process behind.

No kubelet and no container runtime: kwok (``tools.kwok``) moves pods of fake nodes to Running.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from tools.kube import Client

SERVICE_CIDR = "10.0.0.0/24"
READY_TIMEOUT_SECONDS = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    path.chmod(0o600)


def certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    ca: bool = False,
    sans: list[x509.GeneralName] | None = None,
    client: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if not ca:
        usage = x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH if client else x509.oid.ExtendedKeyUsageOID.SERVER_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class Certificates:
    ca: Path
    serving_cert: Path
    serving_key: Path
    client_cert: Path
    client_key: Path
    sa_public: Path
    sa_private: Path


def make_certificates(directory: Path) -> Certificates:
    """A throwaway CA, the API server's serving certificate, an admin client certificate
    (``system:masters``) and the service-account signing key pair."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kuberay-platform e2e CA")])
    ca = certificate(ca_name, ca_key, None, ca=True)
    serving_key = ec.generate_private_key(ec.SECP256R1())
    first_service_ip = ipaddress.IPv4Network(SERVICE_CIDR)[1]
    sans: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.DNSName("kubernetes"),
        x509.DNSName("kubernetes.default.svc"),
        x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")),
        x509.IPAddress(first_service_ip),
    ]
    serving = certificate(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]),
        serving_key,
        (ca_name, ca_key),
        sans=sans,
    )
    client_key = ec.generate_private_key(ec.SECP256R1())
    client_name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
            x509.NameAttribute(NameOID.COMMON_NAME, "kuberay-platform-e2e-admin"),
        ]
    )
    client = certificate(client_name, client_key, (ca_name, ca_key), client=True)
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    certs = Certificates(
        ca=directory / "ca.crt",
        serving_cert=directory / "apiserver.crt",
        serving_key=directory / "apiserver.key",
        client_cert=directory / "admin.crt",
        client_key=directory / "admin.key",
        sa_public=directory / "sa.pub",
        sa_private=directory / "sa.key",
    )
    certs.ca.write_bytes(pem(ca))
    certs.serving_cert.write_bytes(pem(serving))
    _write_key(certs.serving_key, serving_key)
    certs.client_cert.write_bytes(pem(client))
    _write_key(certs.client_key, client_key)
    certs.sa_public.write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    _write_key(certs.sa_private, sa_key)
    return certs


@dataclass
class ControlPlane:
    root: Path
    url: str
    kubeconfig: Path
    certs: Certificates
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def get(self, path: str) -> bytes:
        """GET ``path`` from the API server as the admin client."""
        context = ssl.create_default_context(cafile=str(self.certs.ca))
        context.load_cert_chain(str(self.certs.client_cert), str(self.certs.client_key))
        with urllib.request.urlopen(self.url + path, context=context, timeout=10) as response:
            return bytes(response.read())

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def client(self) -> Client:
        return Client(self.url, self.certs.ca, self.certs.client_cert, self.certs.client_key)


def _kubeconfig(path: Path, url: str, certs: Certificates) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": url, "certificate-authority": str(certs.ca)}}],
        "users": [
            {
                "name": "admin",
                "user": {"client-certificate": str(certs.client_cert), "client-key": str(certs.client_key)},
            }
        ],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "admin"}}],
        "current-context": "e2e",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)


def spawn(plane: ControlPlane, name: str, argv: list[str]) -> None:
    log = (plane.root / f"{name}.log").open("wb")
    # A process group of its own: stop() signals the whole group, children included.
    plane.processes[name] = subprocess.Popen(
        argv, stdout=log, stderr=subprocess.STDOUT, cwd=plane.root, start_new_session=True
    )


def _wait(plane: ControlPlane, name: str, path: str = "/readyz") -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        proc = plane.processes[name]
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}: {plane.log(name)[-3000:]}")
        try:
            if plane.get(path).strip() == b"ok":
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{name} not ready after {READY_TIMEOUT_SECONDS}s: {plane.log(name)[-3000:]}")


def start(binaries: Mapping[str, Path], root: Path) -> ControlPlane:
    """etcd, kube-apiserver, kube-controller-manager and kube-scheduler under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    certs = make_certificates(root / "pki")
    port = free_port()
    plane = ControlPlane(root=root, url=f"https://127.0.0.1:{port}", kubeconfig=root / "kubeconfig", certs=certs)
    _kubeconfig(plane.kubeconfig, plane.url, certs)
    try:
        etcd_client, etcd_peer = free_port(), free_port()
        spawn(
            plane,
            "etcd",
            [
                str(binaries["etcd"]),
                "--data-dir",
                str(root / "etcd"),
                "--listen-client-urls",
                f"http://127.0.0.1:{etcd_client}",
                "--advertise-client-urls",
                f"http://127.0.0.1:{etcd_client}",
                "--listen-peer-urls",
                f"http://127.0.0.1:{etcd_peer}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{etcd_peer}",
                "--initial-cluster",
                f"default=http://127.0.0.1:{etcd_peer}",
                "--unsafe-no-fsync",
            ],
        )
        spawn(
            plane,
            "kube-apiserver",
            [
                str(binaries["kube-apiserver"]),
                f"--etcd-servers=http://127.0.0.1:{etcd_client}",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--tls-cert-file={certs.serving_cert}",
                f"--tls-private-key-file={certs.serving_key}",
                f"--client-ca-file={certs.ca}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://127.0.0.1",
                f"--service-account-key-file={certs.sa_public}",
                f"--service-account-signing-key-file={certs.sa_private}",
                "--allow-privileged=true",
            ],
        )
        _wait(plane, "kube-apiserver")
        spawn(
            plane,
            "kube-controller-manager",
            [
                str(binaries["kube-controller-manager"]),
                f"--kubeconfig={plane.kubeconfig}",
                f"--authentication-kubeconfig={plane.kubeconfig}",
                f"--authorization-kubeconfig={plane.kubeconfig}",
                "--leader-elect=false",
                f"--service-account-private-key-file={certs.sa_private}",
                f"--root-ca-file={certs.ca}",
                "--use-service-account-credentials=false",
                "--controllers=*,-nodeipam,-cloud-node-lifecycle,-service,-route",
                f"--secure-port={free_port()}",
                "--bind-address=127.0.0.1",
            ],
        )
        spawn(
            plane,
            "kube-scheduler",
            [
                str(binaries["kube-scheduler"]),
                f"--kubeconfig={plane.kubeconfig}",
                f"--authentication-kubeconfig={plane.kubeconfig}",
                f"--authorization-kubeconfig={plane.kubeconfig}",
                "--leader-elect=false",
                f"--secure-port={free_port()}",
                "--bind-address=127.0.0.1",
            ],
        )
    except BaseException:
        stop(plane)
        raise
    return plane


def stop(plane: ControlPlane, grace_seconds: float = 10) -> None:
    """Stop every process (and its children) in reverse start order; kill what lingers."""
    for name, proc in reversed(list(plane.processes.items())):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_seconds)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        del plane.processes[name]


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def running(binaries: Mapping[str, Path], root: Path) -> Iterator[ControlPlane]:
    """The control plane for the ``with`` block; SIGTERM (a CI timeout, ``kill``) stops it too."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupted) if main else None
    try:
        plane = start(binaries, root)
        try:
            yield plane
        finally:
            stop(plane)
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
