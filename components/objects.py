"""Kubernetes objects of any kind through the Kubernetes provider."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any, ClassVar, Protocol

import pulumi


class KubernetesObject(pulumi.CustomResource):
    """Any Kubernetes object through the Kubernetes provider (type ``type_token``),
    top-level fields included: ``apiextensions.CustomResource`` passes only ``spec``, and a
    WorkloadPriorityClass has ``value`` and ``description`` beside its metadata."""

    def __init__(self, name: str, obj: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        # The provider plugin of the installed SDK, as the SDK's own resources ask for it.
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=metadata.version("pulumi-kubernetes")))
        super().__init__(type_token(obj), name, dict(obj), opts)


def type_token(obj: dict[str, Any]) -> str:
    """The provider's type of an object: ``kubernetes:<group>/<version>:<kind>``, the core group
    spelled ``core`` (``kubernetes:core/v1:ConfigMap``; a bare ``v1`` is refused)."""
    api_version = str(obj["apiVersion"])
    if "/" not in api_version:
        api_version = f"core/{api_version}"
    return f"kubernetes:{api_version}:{obj['kind']}"


def object_key(obj: dict[str, Any]) -> str:
    """``<namespace>-<name>``, or the name of a cluster-scoped object: unique per kind."""
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}-{meta['name']}".lstrip("-")


class ObjectGroup(pulumi.ComponentResource):
    """A component of plain Kubernetes objects, each created after ``after`` (and deleted before it).
    Subclasses name the component's type."""

    TYPE: ClassVar[str]

    def __init__(
        self,
        name: str,
        objects: list[dict[str, Any]],
        after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(self.TYPE, name, None, opts)
        self.resources = [
            KubernetesObject(
                f"{name}-{obj['kind'].lower()}-{object_key(obj)}",
                obj,
                pulumi.ResourceOptions(parent=self, depends_on=list(after or [])),
            )
            for obj in objects
        ]
        self.objects = objects
        self.register_outputs({})

    def needed_by(self, namespace: str, workload: str) -> list[pulumi.Resource]:
        """What Ray object ``workload`` in ``namespace`` waits for: the group's objects there and its
        cluster-scoped ones."""
        return in_namespace(self.resources, self.objects, namespace)


def in_namespace(
    resources: Sequence[pulumi.Resource], objects: Sequence[Mapping[str, Any]], namespace: str
) -> list[pulumi.Resource]:
    """The resources (each made from the object at the same index) in ``namespace`` or cluster-scoped."""
    pairs = zip(resources, objects, strict=True)
    return [r for r, obj in pairs if obj["metadata"].get("namespace") in (None, "", namespace)]


class Namespaced(Protocol):
    """A component whose objects a Ray object waits for only where they concern it (its namespace,
    its own policies): never the whole component, whose children grow with the fleet."""

    def needed_by(self, namespace: str, workload: str) -> list[pulumi.Resource]: ...
