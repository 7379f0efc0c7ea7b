"""Runs the real Pulumi program under the SDK's mock engine and records every resource.

No CLI, no cluster, no credentials: ``pulumi.runtime.set_mocks`` replaces the engine, and
``runpy`` runs ``__main__.py`` exactly as ``pulumi up`` would. What the mock wire format does to
values (numbers become floats, secrets arrive wrapped) is undone in :func:`normalize`.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks, rpc
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.sync_await import _ensure_event_loop

SECRET_SIG = "4dabf18193072939515e22adb298388d"
SECRET_PLACEHOLDER = "[secret]"
PROJECT = "kuberay-platform"


@dataclass
class RecordedResource:
    type: str
    name: str
    urn: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    transforms: list[Any] = field(default_factory=list, repr=False)
    dependencies: list[str] = field(default_factory=list)
    """URNs this resource waits for (``depends_on``, expanded by the SDK, plus input dependencies)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The lifecycle options a reviewer cares about, as the engine receives them (only those set)."""

    def to_plan(self) -> dict[str, Any]:
        plan = {"type": self.type, "name": self.name, "urn": self.urn, "parent": self.parent, "inputs": self.inputs}
        if self.options:
            plan["options"] = self.options
        return plan


def _options(request: Any) -> dict[str, Any]:
    """protect, retainOnDelete, deleteBeforeReplace, ignoreChanges, replaceOnChanges, aliases (as
    the full URNs the engine matches, parents' aliases inherited), provider, customTimeouts of a
    RegisterResource request, where set."""
    options: dict[str, Any] = {}
    for key in ("protect", "retainOnDelete", "deleteBeforeReplace"):
        if getattr(request, key):
            options[key] = True
    for key in ("ignoreChanges", "replaceOnChanges"):
        if list(getattr(request, key)):
            options[key] = sorted(getattr(request, key))
    if list(request.aliasURNs):
        options["aliases"] = sorted(set(request.aliasURNs))
    if request.provider:
        options["provider"] = request.provider.split("::")[3]
    timeouts = {k: v for k in ("create", "update", "delete") if (v := getattr(request.customTimeouts, k))}
    if timeouts:
        options["customTimeouts"] = timeouts
    return options


def normalize(value: Any) -> Any:
    """Whole floats back to ints, secrets redacted, everything else as is."""
    if isinstance(value, Mapping):
        if SECRET_SIG in value:
            return SECRET_PLACEHOLDER
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, pulumi.Output) or type(value).__name__ == "Unknown":
        return None
    return value


class _Mocks(mocks.Mocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        # Echo the inputs as outputs: what the program reads back (metadata.name, ...) is what it set.
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


class _RecordingMonitor(mocks.MockMonitor):
    """A MockMonitor that also records each resource with its parent (MockResourceArgs lacks it).

    The SDK registers resources from several threads at once, so each registration is recorded
    from its own request, under a lock.
    """

    def __init__(self) -> None:
        self.recorded: list[RecordedResource] = []
        self._lock = threading.Lock()
        super().__init__(_Mocks())

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives (``urn.New``): the parent's whole qualified type, the root Stack
        left out. The SDK's mock keeps only the parent's last type, which no state would hold, and
        which the aliases the SDK computes from a parent's URN would not match."""
        if parent:
            qualified = parent.split("::")[2]
            if qualified != "pulumi:pulumi:Stack":
                type_ = f"{qualified}${type_}"
        return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{type_}::{name}"

    # Without alias specs the SDK itself turns every alias (and those its parents pass down) into the
    # full URN the engine would match against the state: recorded as the ``aliases`` option.
    def SupportsFeature(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        if request.id == "aliasSpecs":
            return type("SupportsFeatureResponse", (object,), {"hasSupport": False})
        return super().SupportsFeature(request)  # type: ignore[no-untyped-call]

    def GetDeploymentInfo(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        info = super().GetDeploymentInfo(request)  # type: ignore[no-untyped-call]
        features = [f for f in info.supportedFeatures if f != resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS]
        return resource_pb2.DeploymentInfo(supportedFeatures=features)

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type == "pulumi:pulumi:Stack":
            return response
        _ensure_event_loop()  # type: ignore[no-untyped-call]  # deserializing needs a loop on this thread
        inputs = rpc.deserialize_properties(request.object)
        parent = request.parent or None
        if parent is not None and parent.split("::")[2] == "pulumi:pulumi:Stack":
            parent = None  # top level (the SDK registers the Stack once per process)
        record = RecordedResource(
            type=request.type,
            name=request.name,
            urn=response.urn,
            parent=parent,
            custom=bool(request.custom),
            inputs=normalize(inputs),
            transforms=mocks._resolve_callbacks(request.transforms),
            dependencies=sorted(set(request.dependencies)),
            options=_options(request),
        )
        with self._lock:
            self.recorded.append(record)
        return response


def run_program(
    program_dir: Path, stack: str, config: Mapping[str, Any], secret_keys: list[str] | None = None
) -> list[RecordedResource]:
    """Run ``program_dir/__main__.py`` for ``stack`` with ``config`` (keys like
    ``kuberay-platform:platform``; structured values are JSON-encoded as the CLI does) and return
    every registered resource in registration order. Exceptions from the program propagate."""
    monitor = _RecordingMonitor()
    pulumi.runtime.set_mocks(monitor.mocks, project=PROJECT, stack=stack, preview=True, monitor=monitor)
    encoded = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    pulumi.runtime.set_all_config(encoded, secret_keys or [])
    main = program_dir / "__main__.py"
    root = str(program_dir.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def _run() -> None:
        cwd = os.getcwd()
        os.chdir(program_dir)  # `pulumi up` runs the program from the project directory
        try:
            runpy.run_path(str(main), run_name="__main__")
        finally:
            os.chdir(cwd)

    _run()
    # The SDK registers from several threads: order by nesting depth, then type and name, so the
    # same program always yields the same plan (components before their children).
    by_urn = {r.urn: r for r in monitor.recorded}

    def depth(r: RecordedResource) -> int:
        return 0 if r.parent is None or r.parent not in by_urn else 1 + depth(by_urn[r.parent])

    return sorted(monitor.recorded, key=lambda r: (depth(r), r.type, r.name))
