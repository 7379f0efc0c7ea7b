"""Destructive changes (issue 16): the URNs and fields of two versions of a stack spec compared, and
every stateful resource (PVC, PV, StatefulSet, Secret, Namespace, CRD) the second deletes, replaces
or renames listed in ``summary.md`` and judged by ``stateful-resources-kept`` (mandatory in prod
unless ``platform.acknowledgeDestructiveChanges`` lists it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import StackValidationArgs
from pulumi_policy.policy import PolicyResource

from components.errors import ConfigError
from policies.rules.base import RuleContext
from policies.rules.stateful_resources_kept import RULE, baseline_entries, check, stateful_changes
from tests.conftest import REPO
from tools.preview import PreviewResult, render_summary, run_preview, write_outputs

RULE_NAME = RULE.name


def stack(name: str) -> dict[str, Any]:
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{name}.yaml").read_text())


def platform(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["config"]["kuberay-platform:platform"]  # type: ignore[no-any-return]


def preview(doc: dict[str, Any], tmp: Path, name: str, baseline: Path | None = None) -> tuple[PreviewResult, Path]:
    """Preview ``doc`` as stack ``name`` (its environment from the spec); write its outputs."""
    path = tmp / f"{name}-{len(list(tmp.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = run_preview(name, stack_path=path, baseline=baseline)
    out = tmp / f"out-{path.stem}"
    write_outputs(result, out)
    return result, out / "plan.json"


@pytest.fixture(scope="module")
def prod_baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("prod-baseline")
    _, plan = preview(stack("prod"), tmp, "prod")
    return plan


def findings(result: PreviewResult) -> list[tuple[str, str]]:
    return [(v.enforcement, v.message) for v in result.violations if v.policy == RULE_NAME]


def test_the_same_spec_again_changes_nothing_stateful(prod_baseline: Path, tmp_path: Path) -> None:
    result, _ = preview(stack("prod"), tmp_path, "prod", prod_baseline)
    assert result.exit_code == 0 and findings(result) == [] and result.stateful_changes == []
    kinds = sorted({e["kind"] for e in baseline_entries(json.loads(prod_baseline.read_text())["resources"])})
    assert kinds == ["Namespace", "PersistentVolume", "PersistentVolumeClaim", "Secret", "StatefulSet"]
    assert result.baseline_size == 10
    assert "None: all 10 stateful resources of the baseline are kept as they are." in render_summary(result)


def test_without_a_baseline_the_summary_has_no_such_section(prod_baseline: Path) -> None:
    result = run_preview("prod")
    assert result.baseline_size is None and "Stateful resources" not in render_summary(result)


def test_renaming_the_gcs_storage_deletes_the_protected_redis_and_is_blocked_in_prod(
    prod_baseline: Path, tmp_path: Path
) -> None:
    doc = stack("prod")
    storage = platform(doc)["gcsStorage"]
    storage["redis-main"] = storage.pop("redis-gcs")
    text = yaml.safe_dump(doc).replace("storage: redis-gcs", "storage: redis-main")
    doc = yaml.safe_load(text)
    result, _ = preview(doc, tmp_path, "prod", prod_baseline)
    assert result.exit_code == 1
    assert [(c.label, c.effect) for c in result.stateful_changes] == [
        ("StatefulSet ray-serving/redis-gcs", "deleted"),
        ("Secret ray-serving/redis-gcs-redis-password", "deleted"),
    ]
    assert [level for level, _ in findings(result)] == ["mandatory", "mandatory"]
    assert all("protected: pulumi up stops there" in m for _, m in findings(result))
    summary = render_summary(result)
    assert "## Warning: stateful resources deleted or replaced" in summary
    assert "| `StatefulSet ray-serving/redis-gcs` | deleted |" in summary
    # Acknowledged: listed, not a finding.
    platform(doc)["acknowledgeDestructiveChanges"] = [c.label for c in result.stateful_changes]
    acknowledged, _ = preview(doc, tmp_path, "prod", prod_baseline)
    assert acknowledged.exit_code == 0 and findings(acknowledged) == []
    assert [c.acknowledged for c in acknowledged.stateful_changes] == [True, True]
    assert "| `StatefulSet ray-serving/redis-gcs` | deleted | " in render_summary(acknowledged)


def test_a_changed_nfs_export_replaces_its_volume(prod_baseline: Path, tmp_path: Path) -> None:
    doc = stack("prod")
    text = yaml.safe_dump(doc).replace("path: /exports/models, readOnly", "path: /exports/models-v2, readOnly")
    text = text.replace("path: /exports/models\n", "path: /exports/models-v2\n")
    result, _ = preview(yaml.safe_load(text), tmp_path, "prod", prod_baseline)
    (change,) = result.stateful_changes
    assert (change.label, change.effect) == ("PersistentVolume ray-serving-qwen-chat-models", "replaced")
    assert "changing spec.nfs makes the provider delete and re-create it" in change.detail


def test_dropping_a_team_deletes_its_protected_namespace(prod_baseline: Path, tmp_path: Path) -> None:
    doc = stack("prod")
    spec = platform(doc)
    research = [w for kind in ("rayClusters", "rayJobs", "rayServices") for w in spec["workloads"].get(kind, [])]
    assert any(w.get("namespace") == "ray-research" for w in research)
    del spec["teams"]["research"]
    for kind in ("rayClusters", "rayJobs", "rayServices"):
        spec["workloads"][kind] = [w for w in spec["workloads"].get(kind, []) if w.get("namespace") != "ray-research"]
    spec["kueue"]["localQueues"] = [q for q in spec["kueue"]["localQueues"] if q["namespace"] != "ray-research"]
    if "watchNamespaces" in spec.get("operator", {}):
        spec["operator"]["watchNamespaces"].remove("ray-research")
    spec["networkPolicies"]["namespaces"].pop("ray-research", None)
    try:
        result, _ = preview(doc, tmp_path, "prod", prod_baseline)
    except ConfigError as exc:  # the test's edit must leave a valid stack
        pytest.fail(str(exc))
    labels = {c.label: c.effect for c in result.stateful_changes}
    assert labels.get("Namespace ray-research") == "deleted"
    assert ("mandatory", next(m for _, m in findings(result) if m.startswith("Namespace ray-research"))) in findings(
        result
    )


def test_renaming_a_team_that_names_its_namespace_keeps_everything(prod_baseline: Path, tmp_path: Path) -> None:
    doc = stack("prod")
    teams = platform(doc)["teams"]
    assert teams["research"]["namespace"] == "ray-research"
    teams["evaluation"] = teams.pop("research")
    text = yaml.safe_dump(doc)
    result, _ = preview(yaml.safe_load(text), tmp_path, "prod", prod_baseline)
    assert result.stateful_changes == [] and result.exit_code == 0


def _entries(plan: Path) -> list[dict[str, Any]]:
    return baseline_entries(json.loads(plan.read_text())["resources"])


def test_a_urn_change_without_an_alias_is_caught_and_an_alias_covers_it(prod_baseline: Path) -> None:
    """The namespaces moved from RayWorkloads to their own component once: the code aliases each to
    its old URN. A baseline holding the old URN passes; one holding any other URN is a rename."""
    result = run_preview("prod")
    resources = [(r.type, r.inputs) for r in result.resources]
    urns = [r.urn for r in result.resources]
    aliases = {r.urn: r.options.get("aliases", []) for r in result.resources}
    entries = _entries(prod_baseline)
    (ns,) = [e for e in entries if e["kind"] == "Namespace" and e["name"] == "ray-training"]
    current = ns["urn"]
    (legacy,) = aliases[current]
    assert "RayWorkloads$kubernetes:core/v1:Namespace::kuberay-workloads-ns-ray-training" in legacy

    def judged(urn: str, known_aliases: Any = aliases) -> list[str]:
        changed = [e if e is not ns else {**ns, "urn": urn} for e in entries]
        ctx = RuleContext("prod", {"baseline": changed}, urns, known_aliases)
        return [m for _, m in check(resources, ctx)]

    assert judged(current) == [] and judged(legacy) == []
    (message,) = judged(current.replace("kuberay-namespaces-", "kuberay-ns-"))
    assert message.startswith("Namespace ray-training: its Pulumi resource moves from ")
    assert "without an alias: the engine deletes the old one after creating the new" in message
    # The policy pack sees no aliases: it leaves renames to the engine's own plan.
    assert judged(current.replace("kuberay-namespaces-", "kuberay-ns-"), None) == []


def test_a_retained_resource_that_is_deleted_stays_and_is_no_finding(prod_baseline: Path) -> None:
    result = run_preview("prod")
    resources = [(r.type, r.inputs) for r in result.resources if "StatefulSet" not in r.type]
    (sts,) = [e for e in _entries(prod_baseline) if e["kind"] == "StatefulSet"]
    assert sts["protect"] and sts["retainOnDelete"]
    assert [c.effect for c in stateful_changes(resources, RuleContext("prod", {"baseline": [sts]}))] == ["deleted"]
    retained = {**sts, "protect": False}
    assert stateful_changes(resources, RuleContext("prod", {"baseline": [retained]})) == []
    deleted = {**sts, "protect": False, "retainOnDelete": False}
    (change,) = stateful_changes(resources, RuleContext("prod", {"baseline": [deleted]}))
    assert change.detail == "this change deletes it"


def test_in_dev_a_deletion_is_advice(tmp_path: Path) -> None:
    doc = stack("dev")
    _, plan = preview(doc, tmp_path, "dev")
    platform(doc)["teams"]["research"]["namespace"] = "ray-dev-science"
    text = yaml.safe_dump(doc).replace("namespace: ray-dev-research", "namespace: ray-dev-science")
    result, _ = preview(yaml.safe_load(text), tmp_path, "dev", plan)
    assert ("Namespace ray-dev-research", "deleted") in [(c.label, c.effect) for c in result.stateful_changes]
    assert {level for level, _ in findings(result)} == {"advisory"}
    assert result.exit_code == 0


def test_the_pack_reports_a_deleted_resource_without_a_urn() -> None:
    from policies.pack import build_policies

    (policy,) = [p for p in build_policies() if p.name == RULE_NAME]
    entry = {"urn": "urn:x", "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "a", "name": "data"}
    reported: list[tuple[str, Any]] = []
    config = {"environment": "prod", "baseline": [{**entry, "fields": {}}]}
    args = StackValidationArgs([], config)
    policy.validate(args, lambda m, u=None: reported.append((m, u)))  # type: ignore[attr-defined]
    assert reported == [
        (
            "PersistentVolumeClaim a/data: this change deletes it; if intended, list "
            "'PersistentVolumeClaim a/data' in platform.acknowledgeDestructiveChanges",
            None,
        )
    ]
    kept = PolicyResource("kubernetes:core/v1:PersistentVolumeClaim", {"metadata": {"name": "data", "namespace": "a"}},
                          "urn:y", "data", None, None, None, [], {})  # fmt: skip
    reported.clear()
    policy.validate(StackValidationArgs([kept], config), lambda m, u=None: reported.append((m, u)))  # type: ignore[attr-defined]
    assert reported == []


def test_a_baseline_that_is_not_a_plan_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ConfigError) as err:
        run_preview("dev", baseline=tmp_path)
    (line,) = err.value.lines
    assert line.startswith(f"{bad}: not a preview's plan.json (") and "BASELINE=" in line


def test_an_acknowledgement_must_name_an_object(tmp_path: Path) -> None:
    doc = stack("dev")
    platform(doc)["acknowledgeDestructiveChanges"] = ["redis-gcs"]
    with pytest.raises(ConfigError) as err:
        preview(doc, tmp_path, "dev")
    assert any("platform.acknowledgeDestructiveChanges[0]" in line and "<Kind> <namespace>/<name>" in line
               for line in err.value.lines)  # fmt: skip


# Each stateful resource prod holds, and what keeps it: a new one fails this test until it is decided.
PROD_STATEFUL = {
    "Namespace ray-prod": "protected: holds the users' Secrets and claims",
    "Namespace ray-research": "protected: holds the users' Secrets and claims",
    "Namespace ray-serving": "protected: holds the users' Secrets and claims",
    "Namespace ray-training": "protected: holds the users' Secrets and claims",
    "Namespace kuberay-system": "none: the operator's namespace holds no user data",
    "StatefulSet ray-serving/redis-gcs": "protected and retained: GCS state (its claim outlives it: Retain policy)",
    "Secret ray-serving/redis-gcs-redis-password": "protected and retained: the password Redis runs with",
    "Secret ray-serving/qwen-chat-ray-token": "none: re-created from the stack's config secret",
    "PersistentVolume ray-serving-qwen-chat-models": "none: a static NFS export, reclaim policy Retain",
    "PersistentVolumeClaim ray-serving/qwen-chat-models": "none: binds that PV; the data is on NFS",
}


def test_every_stateful_resource_of_prod_is_kept_or_says_why_not(prod_baseline: Path) -> None:
    entries = {
        f"{e['kind']} {e['namespace']}/{e['name']}" if e["namespace"] else f"{e['kind']} {e['name']}": e
        for e in _entries(prod_baseline)
    }
    assert sorted(entries) == sorted(PROD_STATEFUL)
    for label, reason in PROD_STATEFUL.items():
        entry = entries[label]
        assert entry["protect"] is reason.startswith("protected"), label
        assert entry["retainOnDelete"] is ("retained" in reason.split(":")[0]), label
    plan = json.loads(prod_baseline.read_text())["resources"]
    (pv,) = [r for r in plan if r["type"] == "kubernetes:core/v1:PersistentVolume"]
    assert pv["inputs"]["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    (sts,) = [r for r in plan if r["type"] == "kubernetes:apps/v1:StatefulSet"]
    retention = sts["inputs"]["spec"]["persistentVolumeClaimRetentionPolicy"]
    assert retention == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    # The CRDs come inside the operator's chart: a transform retains them on delete
    # (tests/test_program.py; make e2e shows them left after pulumi destroy).
