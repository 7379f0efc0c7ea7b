"""stateful-resources-kept (stack rule): a change must not delete or replace what holds data unless
the stack acknowledges it.

Severity: mandatory in prod, advisory in dev and staging.

Why: Pulumi deletes whatever leaves the program, and the Kubernetes provider replaces an object
(deleting it first: the platform names every object) when a field it cannot update changes. For
PersistentVolumeClaims and PersistentVolumes that loses the data, for the GCS Redis StatefulSet its
claim templates, for Secrets the credentials a running cluster reads, for a Namespace everything in
it (the users' own Secrets and claims too), for a CRD every custom resource of its kind. A renamed
Pulumi resource (its URN changes while the object stays) is worse: the engine creates the "new"
resource over the existing object and then deletes the old one, and with it the object, unless an
alias ties the two together.

The rule compares the stack with a baseline: the stateful resources of the previous version of the
stack, from that version's offline preview (``make preview BASELINE=<base>/out/<stack>/plan.json``;
the pull-request workflow passes the base branch's). It needs the baseline to judge: without one it
finds nothing. Each finding names ``<Kind> <namespace>/<name>``; listing that in
``platform.acknowledgeDestructiveChanges`` accepts it (the summary still shows it). What is retained
on delete (``retainOnDelete``) stays in the cluster and is not a finding, unless it is also protected:
then the engine refuses to delete it and ``pulumi up`` stops.

Replacement fields are the provider's own (``forceNewProperties``, pulumi-kubernetes
``provider/pkg/provider/diff.go``). A Secret's data forces a replacement there too unless
``kubernetes:enableSecretMutable`` is set: every shipped stack sets it, and the program requires it
where a protected Secret comes from config; where it is unset, a changed value still replaces the
Secret (its values are secret: the offline preview cannot compare them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.manifests.ray_objects import as_map, metadata_of
from policies.rules.base import Resource, RuleContext, StackRule, as_object, levels

RULE_NAME = "stateful-resources-kept"

_PV_SOURCES = [
    *("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume", "flocker"),
    *("gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk"),
    *("portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume"),
]
REPLACED_BY: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "PersistentVolumeClaim"): (
        "spec.accessModes",
        "spec.selector",
        "spec.storageClassName",
        "spec.volumeName",
    ),
    ("", "PersistentVolume"): tuple(f"spec.{source}" for source in _PV_SOURCES),
    ("apps", "StatefulSet"): (
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
        "spec.selector",
        "spec.serviceName",
        "spec.volumeClaimTemplates",
    ),
    ("", "Secret"): ("type",),
    ("", "Namespace"): (),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (),
}
"""The stateful kinds (API group, kind) and the fields whose change makes the provider replace the
object (besides ``metadata.name`` and ``metadata.namespace``, which change what the object is)."""


def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _get(obj: Mapping[str, Any], path: str) -> Any:
    value: Any = obj
    for key in path.split("."):
        value = as_map(value).get(key)
    return value


def label(kind: str, namespace: str | None, name: str) -> str:
    """How a finding names an object, and how ``acknowledgeDestructiveChanges`` accepts it."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    key = (_group(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")))
    if key not in REPLACED_BY:
        return None
    meta = metadata_of(obj)
    return (*key, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def baseline_entries(resources: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The baseline a later version is compared with: the stateful resources of an offline
    preview's ``plan.json`` (``resources``: type, urn, inputs, options)."""
    entries = []
    for res in resources:
        if not str(res.get("type", "")).startswith("kubernetes:"):
            continue
        obj = as_object(str(res["type"]), as_map(res.get("inputs")))
        identity = _identity(obj)
        if identity is None:
            continue
        options = as_map(res.get("options"))
        entries.append(
            {
                "urn": res["urn"],
                "apiVersion": obj.get("apiVersion"),
                "kind": identity[1],
                "namespace": identity[2] or None,
                "name": identity[3],
                "protect": bool(options.get("protect")),
                "retainOnDelete": bool(options.get("retainOnDelete")),
                "fields": {path: _get(obj, path) for path in REPLACED_BY[identity[:2]]},
            }
        )
    return entries


@dataclass(frozen=True)
class StatefulChange:
    label: str
    effect: str
    """``deleted``, ``replaced`` or ``renamed``."""
    detail: str
    acknowledged: bool
    baseline: Mapping[str, Any]
    index: int | None
    """The resource of this version it concerns (None: deleted)."""

    @property
    def message(self) -> str:
        fix = f"if intended, list {self.label!r} in platform.acknowledgeDestructiveChanges"
        return f"{self.label}: {self.detail}; {fix}"


def stateful_changes(resources: list[Resource], ctx: RuleContext) -> list[StatefulChange]:
    """What this version deletes, replaces or renames of the baseline's stateful resources
    (``ctx.options``: ``baseline``, ``acknowledged``; ``ctx.urns`` / ``ctx.aliases``: this version's)."""
    baseline = [as_map(e) for e in ctx.options.get("baseline") or []]
    acknowledged = {str(a) for a in ctx.options.get("acknowledged") or []}
    current: dict[tuple[str, str, str, str], int] = {}
    for i, (rtype, props) in enumerate(resources):
        if rtype.startswith("kubernetes:") and (identity := _identity(as_object(rtype, props))) is not None:
            current[identity] = i
    changes = []
    for entry in baseline:
        kind, namespace, name = str(entry.get("kind")), entry.get("namespace"), str(entry.get("name"))
        identity = (_group(str(entry.get("apiVersion", ""))), kind, str(namespace or ""), name)
        what = label(kind, str(namespace) if namespace else None, name)
        protected = " (protected: pulumi up stops there until it is unprotected)" if entry.get("protect") else ""
        index = current.get(identity)
        found: tuple[str, str] | None = None
        if index is None:
            if entry.get("protect"):
                found = ("deleted", f"this change deletes it{protected}")
            elif not entry.get("retainOnDelete"):
                found = ("deleted", "this change deletes it")
        else:
            obj = as_object(*resources[index])
            fields = as_map(entry.get("fields"))
            changed = [p for p in REPLACED_BY.get(identity[:2], ()) if p in fields and fields[p] != _get(obj, p)]
            urn, old = ctx.urns[index] if index < len(ctx.urns) else None, str(entry.get("urn"))
            if changed:
                fields_changed = ", ".join(changed)
                found = ("replaced", f"changing {fields_changed} makes the provider delete and re-create it{protected}")
            elif (
                urn is not None
                and ctx.aliases is not None
                and urn != old
                and old not in (ctx.aliases.get(urn) or ())
                and not entry.get("retainOnDelete")
            ):
                found = (
                    "renamed",
                    f"its Pulumi resource moves from {old} to {urn} without an alias: the engine deletes the "
                    f"old one after creating the new, and the object with it{protected}",
                )
        if found is not None:
            changes.append(StatefulChange(what, found[0], found[1], what in acknowledged, entry, index))
    return changes


def check(resources: list[Resource], ctx: RuleContext) -> Iterator[tuple[int | Mapping[str, Any], str]]:
    for change in stateful_changes(resources, ctx):
        if change.acknowledged:
            continue
        base = change.baseline
        subject = (
            change.index
            if change.index is not None
            else {
                "apiVersion": base.get("apiVersion"),
                "kind": base.get("kind"),
                "metadata": {"name": base.get("name"), "namespace": base.get("namespace")},
            }
        )
        yield subject, change.message


_STRINGS = {"type": "array", "items": {"type": "string"}, "default": []}
RULE = StackRule(
    name=RULE_NAME,
    description="A change deletes, replaces or renames no PVC, PV, StatefulSet, Secret, Namespace or CRD of the "
    "previous version unless acknowledged.",
    levels=levels("advisory", "advisory", "mandatory"),
    options={
        "baseline": {"type": "array", "items": {"type": "object"}, "default": []},
        "acknowledged": _STRINGS,
    },
    check=check,
)
