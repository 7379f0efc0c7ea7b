"""Who may talk to whom under a stack's NetworkPolicies, computed by a real analyzer:
``network-config-analyzer`` (IBM's ``nca``, PyPI, in its own virtualenv ``.venv-nca``).

The analyzer needs pods and namespaces; a stack renders no pods, so this builds representative ones
from the rendered objects, with the labels their real counterparts carry:

- per Ray workload, a head, one worker per group and (RayJobs in K8sJobMode) the submitter, each
  with its pod template's labels plus what KubeRay 1.7.0 adds (``ray.io/node-type``,
  ``ray.io/group``, ``ray.io/cluster``, ``app.kubernetes.io/created-by``, ``app.kubernetes.io/name``);
- each in-cluster Redis, from its StatefulSet's pod template;
- the proxy of every Gateway a policy selects (``gateway.networking.k8s.io/gateway-name``), and a
  team's own operator (``app.kubernetes.io/name: kuberay-operator``);
- kube-dns in kube-system; one pod in every other namespace a policy names (the operator's,
  Prometheus's, clients', the ingress's); a stray non-Ray pod in each Ray namespace; and a pod in a
  namespace no policy names (``outsider``).

Only the platform's own policies are analysed: the ones KubeRay creates at run time for workloads
with ``networkPolicy`` only add what their spec lists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.manifests.namespace_policies import GATEWAY_POD_LABEL, OPERATOR_PODS
from components.manifests.network_policy import NAMESPACE_NAME_LABEL
from components.manifests.ray_objects import as_list, as_map, cluster_spec, dig, job_spec

REPO_ROOT = Path(__file__).resolve().parents[1]
NCA_ENV = "KUBERAY_PLATFORM_NCA"
DEFAULT_NCA = REPO_ROOT / ".venv-nca" / "bin" / "nca"
OUTSIDER = "outsider"
DNS_POD = "kube-system/kube-dns"
TIMEOUT_SECONDS = 300
MAX_PODS = 600
"""The analyzer's time grows with the square of the pods it judges (about 5 s at 400 representative
pods, 25 s at 1,200 on the 2-core development machine): above this, the table is not computed and the
summary says why (a fleet's table would be thousands of lines, too many for a PR comment anyway)."""
LINE = re.compile(r"^(?P<src>\S+) => (?P<dst>\S+) : (?P<conn>.+)$")
CONN = re.compile(r"\{protocols:(?P<protocols>[A-Z, ]+?)(?:,dst_ports:(?P<ports>[0-9, \-]+))?\}")


def nca_command() -> str | None:
    """The analyzer's executable: ``$KUBERAY_PLATFORM_NCA``, ``.venv-nca/bin/nca``, or ``nca`` on PATH."""
    configured = os.environ.get(NCA_ENV)
    if configured:
        return configured
    if DEFAULT_NCA.is_file():
        return str(DEFAULT_NCA)
    return shutil.which("nca")


@dataclass(frozen=True)
class Allowed:
    """What one connection allows: every protocol and port, or (protocol, first, last) ranges."""

    everything: bool
    ranges: tuple[tuple[str, int, int], ...] = ()

    def permits(self, port: int, protocol: str = "TCP") -> bool:
        return self.everything or any(p == protocol and lo <= port <= hi for p, lo, hi in self.ranges)


def parse_connection(text: str) -> Allowed:
    """``All connections`` or ``{protocols:TCP,dst_ports:8000,8265-8266},{protocols:UDP,...}``."""
    if text.strip() == "All connections":
        return Allowed(True)
    ranges: list[tuple[str, int, int]] = []
    for match in CONN.finditer(text):
        protocols = [p.strip() for p in match["protocols"].split(",")]
        ports = match["ports"]
        spans = [(1, 65535)] if ports is None else [_span(p.strip()) for p in ports.split(",")]
        ranges += [(proto, lo, hi) for proto in protocols for lo, hi in spans]
    if not ranges:
        raise ValueError(f"unexpected connection in the analyzer's output: {text!r}")
    return Allowed(False, tuple(ranges))


def _span(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


@dataclass
class Connectivity:
    """The analyzer's pairwise map: (source, destination) -> what is allowed. Endpoints are
    ``namespace/pod`` or an IP range as the analyzer prints it (``0.0.0.0-9.255.255.255``)."""

    pairs: dict[tuple[str, str], Allowed] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    """The analyzer's own lines, as printed."""

    def allows(self, src: str, dst: str, port: int, protocol: str = "TCP") -> bool:
        allowed = self.pairs.get((src, dst))
        return allowed is not None and allowed.permits(port, protocol)

    def reaches_address(self, src: str, address: str, port: int) -> bool:
        """Whether ``src`` may open ``port`` to an outside IPv4 ``address``."""
        target = _ip(address)
        for (s, d), allowed in self.pairs.items():
            if s == src and "/" not in d and allowed.permits(port):
                for block in d.split(","):
                    lo, _, hi = block.partition("-")
                    if re.fullmatch(r"[0-9.]+", lo) and _ip(lo) <= target <= _ip(hi or lo):
                        return True
        return False


def _ip(text: str) -> int:
    a, b, c, d = (int(x) for x in text.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def parse_pairs(output: str) -> Connectivity:
    result = Connectivity()
    for raw in output.splitlines():
        match = LINE.match(raw.strip())
        if match is None:
            continue
        src, dst = (re.sub(r"\[Pod\]$", "", match[k]) for k in ("src", "dst"))
        result.pairs[(src, dst)] = parse_connection(match["conn"])
        result.lines.append(f"{src} => {dst} : {match['conn']}")
    return result


# --- Representative pods ------------------------------------------------------------------------


def _pod(namespace: str, name: str, labels: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {k: str(v) for k, v in labels.items()}},
        "spec": {"containers": [{"name": "main", "image": "representative"}]},
        "status": {"phase": "Running"},
    }


def _ray_pods(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = cluster_spec(obj)
    if found is None:
        return []
    _, spec = found
    namespace, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
    cluster = name if obj["kind"] == "RayCluster" else f"{name}-cluster"
    kuberay = {
        "ray.io/cluster": cluster,
        "app.kubernetes.io/created-by": "kuberay-operator",
        "app.kubernetes.io/name": "kuberay",
    }
    head_labels = as_map(dig(spec, "headGroupSpec", "template", "metadata", "labels"))
    pods = [
        _pod(
            namespace,
            f"{name}-head",
            {**head_labels, **kuberay, "ray.io/node-type": "head", "ray.io/group": "headgroup"},
        )
    ]
    for group in as_list(spec.get("workerGroupSpecs")):
        group = as_map(group)
        labels = as_map(dig(group, "template", "metadata", "labels"))
        pods.append(
            _pod(
                namespace,
                f"{name}-{group.get('groupName')}-worker",
                {**labels, **kuberay, "ray.io/node-type": "worker", "ray.io/group": group.get("groupName")},
            )
        )
    job = job_spec(obj)
    if job is not None and job.get("submissionMode", "K8sJobMode") == "K8sJobMode":
        labels = as_map(dig(job, "submitterPodTemplate", "metadata", "labels"))
        pods.append(
            _pod(
                namespace,
                f"{name}-submitter",
                {
                    **labels,
                    "ray.io/originated-from-cr-name": name,
                    "ray.io/originated-from-crd": "RayJob",
                    "app.kubernetes.io/created-by": "kuberay-operator",
                },
            )
        )
    return pods


def _policy_peers(policies: Iterable[Mapping[str, Any]]) -> tuple[set[str], dict[tuple[str, str], dict[str, str]]]:
    """Namespaces the policies name, and the Gateway proxies and team operators they select
    ((namespace, pod name) -> labels)."""
    namespaces: set[str] = set()
    gateways: dict[tuple[str, str], dict[str, str]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for expr in as_list(dig(node, "namespaceSelector", "matchExpressions")):
                if as_map(expr).get("key") == NAMESPACE_NAME_LABEL:
                    namespaces.update(str(v) for v in as_list(as_map(expr).get("values")))
            for key, value in as_map(dig(node, "namespaceSelector", "matchLabels")).items():
                if key == NAMESPACE_NAME_LABEL:
                    namespaces.add(str(value))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for policy in policies:
        walk(policy.get("spec"))
        selected = as_map(dig(policy, "spec", "podSelector", "matchLabels"))
        ns = policy["metadata"]["namespace"]
        if GATEWAY_POD_LABEL in selected:
            name = f"{selected[GATEWAY_POD_LABEL]}-proxy"
            gateways[(ns, name)] = {GATEWAY_POD_LABEL: str(selected[GATEWAY_POD_LABEL])}
        if dict(selected) == OPERATOR_PODS:  # a team's own operator
            gateways[(ns, "kuberay-operator")] = dict(OPERATOR_PODS)
    return namespaces, gateways


def representative_cluster(manifests: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(namespaces, pods) standing for what runs under ``manifests`` (see the module's docstring)."""
    policies = [m for m in manifests if m["kind"] == "NetworkPolicy"]
    pods: list[dict[str, Any]] = []
    ray_namespaces: set[str] = set()
    for obj in manifests:
        ray = _ray_pods(obj)
        pods += ray
        ray_namespaces.update(p["metadata"]["namespace"] for p in ray)
        if obj["kind"] == "StatefulSet":
            labels = as_map(dig(obj, "spec", "template", "metadata", "labels"))
            pods.append(_pod(obj["metadata"]["namespace"], f"{obj['metadata']['name']}-0", labels))
    named, gateways = _policy_peers(policies)
    for (ns, name), labels in sorted(gateways.items()):
        pods.append(_pod(ns, name, labels))
    for ns in sorted(ray_namespaces):
        pods.append(_pod(ns, "stray", {"app": "stray"}))
    occupied = {p["metadata"]["namespace"] for p in pods}
    for ns in sorted(named - occupied - {"kube-system"}):
        pods.append(_pod(ns, "peer", {"app": "peer"}))
    pods.append(_pod("kube-system", "kube-dns", {"k8s-app": "kube-dns"}))
    pods.append(_pod(OUTSIDER, "peer", {"app": "peer"}))
    names = sorted({p["metadata"]["namespace"] for p in pods})
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {NAMESPACE_NAME_LABEL: n}}}
        for n in names
    ]
    return namespaces, pods


class Analysis:
    """network-config-analyzer started at once over the NetworkPolicies of ``manifests`` and the
    representative pods, in a child process: the caller's own work (validation, rules) runs while it
    computes (its output goes to files, so it never waits on a full pipe); :meth:`result` waits for it."""

    def __init__(self, manifests: list[dict[str, Any]], nca: str) -> None:
        policies = [m for m in manifests if m["kind"] == "NetworkPolicy"]
        namespaces, pods = representative_cluster(manifests)
        self._tmp = tempfile.TemporaryDirectory(prefix="kuberay-connectivity-")
        root = Path(self._tmp.name)
        try:
            (root / "policies.yaml").write_text(yaml.safe_dump_all(policies, sort_keys=True))
            (root / "pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "PodList", "items": pods}))
            (root / "namespaces.yaml").write_text(
                yaml.safe_dump({"apiVersion": "v1", "kind": "NamespaceList", "items": namespaces})
            )
            command = [nca, "--connectivity", str(root / "policies.yaml"), "--pod_list", str(root / "pods.yaml")]
            command += ["--ns_list", str(root / "namespaces.yaml"), "--output_format", "txt_no_fw_rules"]
            self._out, self._err = root / "stdout", root / "stderr"
            with self._out.open("wb") as out, self._err.open("wb") as err:
                self._proc = subprocess.Popen(command, stdout=out, stderr=err, cwd=root)
        except BaseException:
            self._tmp.cleanup()
            raise

    def result(self) -> Connectivity:
        """The analyzer's answer (waiting up to ``TIMEOUT_SECONDS``); RuntimeError if it failed. However
        the wait ends, the analyzer is not left running and its files are removed."""
        try:
            self._proc.wait(timeout=TIMEOUT_SECONDS)
            out, err = self._out.read_text(), self._err.read_text(errors="replace")
        except subprocess.TimeoutExpired:
            self.cancel()
            raise RuntimeError(f"network-config-analyzer did not finish in {TIMEOUT_SECONDS} s") from None
        except BaseException:
            self.cancel()
            raise
        self._tmp.cleanup()
        if self._proc.returncode != 0:
            raise RuntimeError(f"network-config-analyzer failed (exit {self._proc.returncode}): {err.strip()[-2000:]}")
        return parse_pairs(out)

    def cancel(self) -> None:
        """Stop the analyzer (the preview failed, or was interrupted, before it needed the answer) and
        remove its files."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._tmp.cleanup()


def analyze(manifests: list[dict[str, Any]], nca: str) -> Connectivity:
    """Run the analyzer over the NetworkPolicies of ``manifests`` and the representative pods."""
    return Analysis(manifests, nca).result()


def ray_namespaces(manifests: list[dict[str, Any]]) -> set[str]:
    return {m["metadata"]["namespace"] for m in manifests if m["kind"] == "NetworkPolicy"}


def report(connectivity: Connectivity, policed: Set[str]) -> list[str]:
    """The analyzer's lines that start or end in a namespace the platform polices, sorted."""

    def policed_end(endpoint: str) -> bool:
        return "/" in endpoint and endpoint.split("/", 1)[0] in policed

    return sorted(
        line
        for (src, dst), line in zip(connectivity.pairs, connectivity.lines, strict=True)
        if policed_end(src) or policed_end(dst)
    )
