"""A small Kubernetes API client for the local control plane (``make e2e``): what the end-to-end
tests do to the cluster besides ``pulumi up`` (install prerequisites, read objects back, patch as
another field manager). Server-side apply, discovery for kind -> resource, nothing cached across runs.
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIELD_MANAGER = "kuberay-platform-e2e"


class ApiError(Exception):
    def __init__(self, status: int, method: str, path: str, body: str) -> None:
        try:
            message = json.loads(body).get("message", body)
        except ValueError:
            message = body
        super().__init__(f"{method} {path}: {status} {message}")
        self.status = status
        self.message = str(message)


@dataclass(frozen=True)
class Resource:
    path: str  # /api/v1 or /apis/<group>/<version>
    plural: str
    namespaced: bool


@dataclass
class Client:
    url: str
    ca: Path
    client_cert: Path
    client_key: Path
    _resources: dict[tuple[str, str], Resource] = field(default_factory=dict)

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca))
        context.load_cert_chain(str(self.client_cert), str(self.client_key))
        return context

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json", timeout: float = 30
    ) -> Any:
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", content_type)
        req.add_header("Accept", "application/json")
        try:
            with urllib.request.urlopen(req, context=self._context(), timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise ApiError(exc.code, method, path, exc.read().decode(errors="replace")) from None
        return json.loads(raw) if raw else None

    def resource(self, api_version: str, kind: str) -> Resource:
        """The REST resource of ``kind`` (discovery, re-read once when the kind is new: CRDs)."""
        key = (api_version, kind)
        if key not in self._resources:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            for item in self.request("GET", base)["resources"]:
                if "/" not in item["name"]:
                    self._resources[(api_version, item["kind"])] = Resource(base, item["name"], item["namespaced"])
        if key not in self._resources:
            raise ApiError(404, "GET", f"{api_version} {kind}", "no such kind is served")
        return self._resources[key]

    def path(self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None) -> str:
        res = self.resource(api_version, kind)
        path = res.path
        if res.namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{res.plural}"
        return path + (f"/{name}" if name else "")

    def apply(self, obj: Mapping[str, Any], manager: str = FIELD_MANAGER, force: bool = True) -> Any:
        """Server-side apply of ``obj`` as ``manager``."""
        meta = obj["metadata"]
        query = urllib.parse.urlencode({"fieldManager": manager, "force": "true" if force else "false"})
        path = self.path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"]) + "?" + query
        return self.request("PATCH", path, obj, "application/apply-patch+yaml")

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        return self.request("GET", self.path(api_version, kind, namespace, name))

    def exists(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> bool:
        try:
            self.get(api_version, kind, name, namespace)
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def list(self, api_version: str, kind: str, namespace: str | None = None, selector: str = "") -> list[Any]:
        path = self.path(api_version, kind, namespace)
        if selector:
            path += "?" + urllib.parse.urlencode({"labelSelector": selector})
        return list(self.request("GET", path)["items"])

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        try:
            self.request("DELETE", self.path(api_version, kind, namespace, name), {"propagationPolicy": "Background"})
        except ApiError as exc:
            if exc.status != 404:
                raise

    def forget(self) -> None:
        """Drop what discovery found (after CRDs were added or removed)."""
        self._resources.clear()


def wait_until(what: str, check: Callable[[], Any], timeout: float = 60, every: float = 0.5) -> Any:
    """Poll ``check`` until it returns something truthy; TimeoutError naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except ApiError as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(every)
    raise TimeoutError(f"{what}: not after {timeout:.0f}s (last: {last!r})")


def apply_all(client: Client, objects: Iterable[Mapping[str, Any]]) -> None:
    """Apply CRDs first and wait until each is Established, then everything else."""
    objects = list(objects)
    crds = [o for o in objects if o.get("kind") == "CustomResourceDefinition"]
    for crd in crds:
        client.apply(crd)
    for crd in crds:
        name = crd["metadata"]["name"]

        def established(name: str = name) -> bool:
            status = client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name).get("status", {})
            return any(c["type"] == "Established" and c["status"] == "True" for c in status.get("conditions") or [])

        wait_until(f"CRD {name} established", established)
    if crds:
        client.forget()
    for obj in objects:
        if obj.get("kind") != "CustomResourceDefinition":
            client.apply(obj)
