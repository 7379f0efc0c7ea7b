"""``make preview STACK=<stack>``: the real program under the mock engine, validated and judged.

Writes ``out/<stack>/manifests/`` (one object per file), ``plan.json`` and ``summary.md``.
Exit codes (of ``python -m tools preview``): 0 clean, 1 schema errors or mandatory violations,
2 config error.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.errors import ConfigError
from components.manifests.capacity import Capacity, plans, total
from components.manifests.platform import baseline_reasons
from components.manifests.quantity import format_bytes
from components.manifests.quota_fit import QuotaRow, quota_table
from components.manifests.tenancy import quota_hard
from components.spec import CONFIG_KEY, CpuPool, GpuPool, PlatformSpec, RayJobSpec, TpuPool, parse_platform
from components.spec.chart import archive_chart
from components.spec.monitoring import MonitoringSpec
from components.stack_config import PROJECT, StackConfigError, required_secret_config, stack_file
from policies.rules.base import Resource, RuleContext, Violation, as_object
from policies.rules.engine import evaluate_resources
from policies.rules.stateful_resources_kept import RULE_NAME as STATEFUL_RULE
from policies.rules.stateful_resources_kept import StatefulChange, baseline_entries, stateful_changes
from tools.chart_values import unknown_keys
from tools.connectivity import (
    MAX_PODS,
    NCA_ENV,
    Analysis,
    nca_command,
    ray_namespaces,
    report,
    representative_cluster,
)
from tools.engine import SECRET_PLACEHOLDER, RecordedResource, run_program
from tools.policy_config import resolve
from tools.schema import REPO_ROOT, SchemaError, Validator
from tools.schema_store import SchemaStore
from tools.stackfile import read_stack_config

CHART_TYPE = "kubernetes:helm.sh/v4:Chart"
SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter where PyYAML has it (the same YAML, ten times faster for large fleets)."""


@dataclass
class PreviewResult:
    stack: str
    spec: PlatformSpec
    resources: list[RecordedResource]
    manifests: list[dict[str, Any]]
    schema_errors: list[SchemaError] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    schema_sources: list[str] = field(default_factory=list)
    """Which schemas the objects were validated against (``Validator.describe``)."""
    unset_secrets: list[str] = field(default_factory=list)
    """Config secrets the spec needs that the stack file does not set (a placeholder stood in)."""
    connectivity: list[str] | None = None
    """Who may talk to whom under the stack's NetworkPolicies (``tools.connectivity``), or None."""
    baseline_size: int | None = None
    """How many stateful resources the baseline had (None: no baseline given)."""
    stateful_changes: list[StatefulChange] = field(default_factory=list)
    """What this version deletes, replaces or renames of the baseline's stateful resources."""

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.enforcement == "mandatory"]

    @property
    def exit_code(self) -> int:
        return 1 if self.schema_errors or self.mandatory else 0


def to_manifest(res: RecordedResource) -> dict[str, Any] | None:
    """The Kubernetes object a resource stands for, or None (components, charts)."""
    if not (res.custom and res.type.startswith("kubernetes:")) or res.type == CHART_TYPE:
        return None
    return dict(as_object(res.type, res.inputs))


def _validatable(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as validation sees it. A Secret's ``data``/``stringData`` are secret as a whole
    (pulumi-kubernetes wraps them), so offline they are one placeholder, not a map: leave them out."""
    if obj.get("kind") != "Secret":
        return obj
    return {k: v for k, v in obj.items() if not (k in ("data", "stringData") and v == SECRET_PLACEHOLDER)}


def run_preview(
    stack: str,
    program_dir: Path = REPO_ROOT,
    crd_dir: Path | None = None,
    stack_path: Path | None = None,
    policy_config: str | None = None,
    baseline: Path | None = None,
) -> PreviewResult:
    """Preview ``stack`` from ``stacks/Pulumi.<stack>.yaml`` (or ``stack_path``, e.g. a proposed change);
    with ``baseline`` (the previous version's ``plan.json``), judge what it deletes or replaces."""
    entries = read_baseline(baseline) if baseline is not None else None
    source = stack_file(stack)
    if stack_path is not None:
        source = str(stack_path)
    config, secret_keys = read_stack_config(stack_path or program_dir / source, source)
    # Secrets are set per machine with `pulumi config set --secret`, not committed in plain text: the
    # offline preview stands a placeholder in for each one the spec needs and lists them.
    try:
        needed = required_secret_config(parse_platform(config.get(f"{PROJECT}:{CONFIG_KEY}"), source))
    except ConfigError:
        needed = []  # the program reports the mistake itself, below
    unset = [key for key in needed if key not in config]
    for key in unset:
        config[key] = SECRET_PLACEHOLDER
        secret_keys.append(key)
    try:
        resources = run_program(program_dir, stack, config, secret_keys)
    except StackConfigError as exc:
        lines = str(exc).splitlines()
        if stack_path is not None:  # the program names the stack's usual file; name the one read
            lines = [line.replace(stack_file(stack), source, 1) for line in lines]
        raise ConfigError(lines) from None
    spec = parse_platform(config.get(f"{PROJECT}:{CONFIG_KEY}"), source)
    manifests = sorted(
        (m for m in map(to_manifest, resources) if m is not None),
        key=lambda m: (
            m["kind"] != "Namespace",
            m["kind"],
            m["metadata"].get("namespace") or "",
            m["metadata"]["name"],
        ),
    )
    try:
        validator = Validator(spec.kubernetes_version, crd_dir)
    except ValueError as exc:  # a version kubernetes-validate has no schemas for
        raise ConfigError([f"{source}: platform.kubernetesVersion: {exc}"]) from None
    result = PreviewResult(stack, spec, resources, manifests, schema_sources=validator.describe(), unset_secrets=unset)
    connectivity = start_connectivity(manifests)  # a child process: it computes while the checks below run
    try:
        _judge(result, validator, policy_config, entries)
    except BaseException:
        connectivity.cancel()
        raise
    result.connectivity = connectivity.lines()
    return result


def _judge(
    result: PreviewResult, validator: Validator, policy_config: str | None, entries: list[dict[str, Any]] | None
) -> None:
    """Schema errors, chart values, stateful changes against the baseline, and the rules' findings."""
    spec, resources, manifests = result.spec, result.resources, result.manifests
    for obj in manifests:
        result.schema_errors += validator.validate(_validatable(obj))
    for res in resources:
        if res.type == CHART_TYPE:
            result.schema_errors += check_chart_values(res, validator.store)
    config = resolve(policy_config, spec.environment)
    judged: list[Resource] = [(r.type, r.inputs) for r in resources]
    ctx = RuleContext(
        environment=spec.environment,
        urns=[r.urn for r in resources],
        aliases={r.urn: r.options.get("aliases", []) for r in resources},
    )
    if entries is not None:
        options = {"baseline": entries, "acknowledged": spec.acknowledge_destructive_changes}
        config = {**config, STATEFUL_RULE: {**config.get(STATEFUL_RULE, {}), **options}}
        result.baseline_size = len(entries)
        result.stateful_changes = stateful_changes(
            judged, RuleContext(spec.environment, options, ctx.urns, ctx.aliases)
        )
    found = evaluate_resources(judged, ctx, config)
    result.violations = [v for _, v in found]


def read_baseline(path: Path) -> list[dict[str, Any]]:
    """The stateful resources of a previous version's offline preview: its ``plan.json`` (or the
    folder holding it); a one-line error naming the file when it is not one."""
    plan_path = path / "plan.json" if path.is_dir() else path
    try:
        plan = json.loads(plan_path.read_text())
        resources = plan["resources"]
        if not isinstance(resources, list):
            raise TypeError("resources is not a list")
        return baseline_entries(resources)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            [f"{plan_path}: not a preview's plan.json ({exc}); pass BASELINE=<base checkout>/out/<stack>/plan.json"]
        ) from None


class PendingConnectivity:
    """The connectivity table being computed: :meth:`lines` waits for it."""

    def __init__(
        self, lines: list[str] | None = None, analysis: Analysis | None = None, policed: frozenset[str] = frozenset()
    ) -> None:
        self._lines, self._analysis, self._policed = lines, analysis, policed

    def lines(self) -> list[str] | None:
        """What the stack's NetworkPolicies allow to and from the namespaces they police, as
        network-config-analyzer computes it; None without policies."""
        if self._analysis is None:
            return self._lines
        return report(self._analysis.result(), self._policed)

    def cancel(self) -> None:
        if self._analysis is not None:
            self._analysis.cancel()


def start_connectivity(manifests: list[dict[str, Any]]) -> PendingConnectivity:
    """Start network-config-analyzer over the stack's NetworkPolicies (nothing to do without them).
    Without the analyzer, or over its budget of pods, one line saying so (``make preview`` installs it)."""
    policed = ray_namespaces(manifests)
    if not policed:
        return PendingConnectivity()
    nca = nca_command()
    if nca is None:
        return PendingConnectivity(
            [f"(not computed: network-config-analyzer is not installed; `make nca-venv`, or set {NCA_ENV})"]
        )
    pods = len(representative_cluster(manifests)[1])
    if pods > MAX_PODS:
        return PendingConnectivity(
            [
                f"(not computed: {pods:,} representative pods, over the analyzer's budget of {MAX_PODS:,}; its time "
                "grows with the square of the pods. The NetworkPolicies are still validated and judged by the rules)"
            ]
        )
    return PendingConnectivity(analysis=Analysis(manifests, nca), policed=frozenset(policed))


def prerequisites_section(spec: PlatformSpec) -> list[str]:
    """What a user must provide before ``pulumi up``: the declared prerequisites, with commands."""
    pre = spec.prerequisites
    rows: list[str] = []
    for secret in pre.secrets:
        literals = " ".join(f"--from-literal={k}=..." for k in secret.keys) or "--from-env-file=<file>"
        command = f"kubectl -n {secret.namespace} create secret generic {secret.name} {literals}"
        rows.append(f"| Secret | `{secret.namespace}/{secret.name}` | `{command}` |")
    for claim in pre.persistent_volume_claims:
        size = f" of {claim.size}" if claim.size else ""
        rows.append(
            f"| PersistentVolumeClaim | `{claim.namespace}/{claim.name}` | a {claim.access_mode} claim{size}: "
            f"`kubectl -n {claim.namespace} apply -f <claim>.yaml` (name `{claim.name}`, "
            f"accessModes [{claim.access_mode}]) |"
        )
    for export in pre.nfs_exports:
        rows.append(f"| NFS export | `{export.server}:{export.path}` | exported to every node that runs Ray pods |")
    if pre.gateway_api:
        rows.append("| Gateway API | CRDs v1.6.1 (standard channel) + a controller | installed cluster-wide |")
    if pre.prometheus_operator:
        rows.append(
            "| Prometheus | prometheus-operator CRDs (v0.93) and a Prometheus selecting the stack's monitors and "
            "rules (e.g. kube-prometheus-stack) | installed |"
        )
    if pre.cert_manager:
        rows.append(
            "| cert-manager | v1.x with its CRDs and webhook (ClusterIssuers, Certificates; KubeRay's mTLS) | "
            "installed cluster-wide |"
        )
    if pre.tpu_webhook:
        rows.append("| Ray TPU webhook | ai-on-gke `kuberay-tpu-webhook` or the GKE Ray add-on | installed |")
    if pre.kueue:
        rows.append(
            "| Kueue | v0.19 with the Ray integrations (`ray.io/rayjob`, `ray.io/raycluster`, `ray.io/rayservice`) "
            "| installed cluster-wide |"
        )
    for queue in pre.local_queues:
        rows.append(
            f"| LocalQueue | `{queue.namespace}/{queue.name}` | created by its team, pointing at a ClusterQueue |"
        )
    if (mk := spec.kueue.multi_kueue) is not None:
        dispatched = sorted(
            f"`{q.namespace}/{q.name}`" for q in spec.kueue.local_queues if q.cluster_queue in mk.cluster_queues
        )
        for worker in mk.clusters:
            rows.append(
                f"| MultiKueue worker cluster | `{worker.name}` | KubeRay 1.7 and Kueue v0.19 with the Ray "
                f"integrations, and the namespaces and LocalQueues {', '.join(dispatched) or '(none yet)'}; "
                f"reached with the kubeconfig in Secret `{spec.kueue.namespace}/{worker.kubeconfig_secret}` |"
            )
    if not rows:
        return []
    return [
        "",
        "## External prerequisites",
        "",
        "The stack references these and does not create them: create them before `pulumi up`.",
        "",
        "| kind | what | how |",
        "| --- | --- | --- |",
        *rows,
    ]


def chart_name(res: RecordedResource) -> str:
    """The chart a ``helm.v4.Chart`` installs, whatever its source: a repository chart's name, the
    last part of an OCI reference, or the ``Chart.yaml`` name inside a local archive."""
    chart = str(res.inputs.get("chart"))
    if chart.startswith("oci://"):
        return chart.rstrip("/").rsplit("/", 1)[-1]
    if chart.endswith((".tgz", ".tar.gz")):
        try:
            return str(archive_chart(Path(chart)).get("name"))
        except ValueError:
            return chart
    return chart


def check_chart_values(res: RecordedResource, store: SchemaStore) -> list[SchemaError]:
    chart = chart_name(res)
    ref = f"Chart/{res.inputs.get('namespace') or '-'}/{res.inputs.get('name') or res.name}"
    upstream = store.chart_values(chart)
    if upstream is None:
        return [
            SchemaError(ref, "values", f"no values for chart {chart!r} in the project's schemas (schemas/pins.yaml)")
        ]
    values = res.inputs.get("values") or {}
    return [
        SchemaError(ref, f"values.{path}", f"not a value of chart {chart} (absent from its values.yaml)")
        for path in unknown_keys(values, upstream)
    ]


def write_outputs(result: PreviewResult, out_dir: Path) -> None:
    manifests_dir = out_dir / "manifests"
    if manifests_dir.exists():
        shutil.rmtree(manifests_dir)
    manifests_dir.mkdir(parents=True)
    for i, obj in enumerate(result.manifests, start=1):
        meta = obj.get("metadata") or {}
        name = "-".join(str(p) for p in (obj["kind"].lower(), meta.get("namespace"), meta.get("name")) if p)
        (manifests_dir / f"{i:03d}-{name}.yaml").write_text(
            yaml.dump(canonical(obj), Dumper=SAFE_DUMPER, sort_keys=False, default_flow_style=False)
        )
    plan = {
        "stack": result.stack,
        "resources": [{**r.to_plan(), "inputs": canonical(r.inputs)} for r in result.resources],
        "violations": [v.to_json() for v in result.violations],
        "schemaErrors": [str(e) for e in result.schema_errors],
        "schemas": result.schema_sources,
    }
    (out_dir / "plan.json").write_text(json.dumps(plan, indent=2) + "\n")
    (out_dir / "summary.md").write_text(render_summary(result))
    connectivity = out_dir / "connectivity.txt"
    if result.connectivity is not None:
        connectivity.write_text("\n".join(result.connectivity) + "\n")
    elif connectivity.exists():
        connectivity.unlink()


TOP_LEVEL_ORDER = ("apiVersion", "kind", "metadata", "spec")


def canonical(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A stable key order for diffs (the mock wire format loses it): the usual top-level order,
    then every nested map sorted by key, as ``kubectl get -o yaml`` does."""

    def sort(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: sort(value[k]) for k in sorted(value)}
        if isinstance(value, list):
            return [sort(v) for v in value]
        return value

    keys = [k for k in TOP_LEVEL_ORDER if k in obj] + sorted(k for k in obj if k not in TOP_LEVEL_ORDER)
    return {k: sort(obj[k]) for k in keys}


def _chart(result: PreviewResult, name: str = "kuberay-operator") -> Mapping[str, Any]:
    return next((r.inputs for r in result.resources if r.type == CHART_TYPE and r.inputs.get("name") == name), {})


def _pool_label(pool: CpuPool | GpuPool | TpuPool) -> str:
    if isinstance(pool, GpuPool):
        return f"{pool.gpus_per_pod} GPU" + (f" {pool.product}" if pool.product else "")
    if isinstance(pool, TpuPool):
        return f"TPU {pool.accelerator} {pool.topology} ({pool.hosts} hosts)"
    return "CPU"


def workloads_table(spec: PlatformSpec) -> list[str]:
    if not spec.workloads.all():
        return ["None."]
    lines = [
        "| kind | namespace/name | profile | Ray | head | worker groups |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for _, w in spec.workloads.all():
        kind = type(w).__name__.removesuffix("Spec")
        if isinstance(w, RayJobSpec) and w.schedule:
            kind = f"RayCronJob ({w.schedule})"
        groups = "; ".join(
            f"{g.name}: {_pool_label(spec.workloads.pools[g.pool])} + {g.resources.cpu} CPU/{g.resources.memory} "
            f"per pod, {g.floor(w.profile)}-{g.max_replicas}"
            for g in w.worker_groups
        )
        head = f"{w.head.resources.cpu} CPU/{w.head.resources.memory}"
        lines.append(f"| {kind} | {w.namespace}/{w.name} | {w.profile} | {w.ray_version} | {head} | {groups} |")
    return lines


def _amounts(plan: Capacity, name: str, unit: str = "") -> str:
    def show(value: float) -> str:
        return format_bytes(value) if name == "memory" else f"{value:g}"

    steady, out = getattr(plan.steady, name), getattr(plan.scaled_out, name)
    peak = getattr(plan.upgrade_peak, name) if plan.upgrade_peak is not None else None
    if not (steady or out or peak):
        return "-"
    text = f"{show(steady)} / {show(out)}"
    return text + (f" / {show(peak)}" if peak is not None else " / -")


def capacity_table(items: list[Capacity]) -> list[str]:
    """Per workload: steady / scaled out (maxReplicas) / upgrade peak (RayServices, by strategy)."""
    if not items:
        return ["No Ray workloads."]
    lines = [
        "Steady (every group at its floor) / scaled out (every group at maxReplicas) / upgrade peak "
        "(RayServices: blue-green doubles, incremental adds one surge step).",
        "",
        "| workload | upgrade | GPUs | TPU chips | CPU | memory |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for plan in [*items, total(items)]:
        name = f"**{plan.workload}**" if plan.workload == "total" else plan.workload
        lines.append(
            f"| {name} | {plan.strategy or '-'} | {_amounts(plan, 'gpu')} | {_amounts(plan, 'tpu')} | "
            f"{_amounts(plan, 'cpu')} | {_amounts(plan, 'memory')} |"
        )
    return lines


def monitoring_section(result: PreviewResult) -> list[str]:
    """What the stack's Prometheus gets: monitors, and each alert with its severity and delay."""
    monitoring = result.spec.monitoring
    assert monitoring is not None
    objects = [m for m in result.manifests if str(m.get("apiVersion", "")).startswith("monitoring.coreos.com/")]
    lines = [
        f"In `{monitoring.prometheus.namespace}`, labelled "
        + ", ".join(f"`{k}: {v}`" for k, v in monitoring.prometheus.selector_labels.items())
        + ". Metric sources: `docs/monitoring.md`.",
        "",
        *installed_prometheus_stack(monitoring),
        *(f"- {m['kind']} `{m['metadata']['name']}`" for m in objects if m["kind"] in ("PodMonitor", "ServiceMonitor")),
        *(
            f"- Grafana dashboard ConfigMap `{m['metadata']['namespace']}/{m['metadata']['name']}`"
            for m in result.manifests
            if m["kind"] == "ConfigMap"
            and monitoring.dashboards.labels.items() <= (m["metadata"].get("labels") or {}).items()
        ),
        "",
        "| alert | severity | for | runbook |",
        "| --- | --- | --- | --- |",
    ]
    for rule in (
        r
        for m in objects
        if m["kind"] == "PrometheusRule"
        for g in m["spec"]["groups"]
        for r in g["rules"]
        if "alert" in r
    ):
        lines.append(
            f"| {rule['alert']} | {rule['labels']['severity']} | {rule.get('for', '-')} | "
            f"{rule['annotations']['runbook_url']} |"
        )
    return lines


def pod_security_section(result: PreviewResult) -> list[str]:
    """What each namespace the stack creates enforces, and why not ``restricted`` where it does not."""
    lines = ["| namespace | enforces | why not restricted |", "| --- | --- | --- |"]
    for m in result.manifests:
        if m["kind"] != "Namespace":
            continue
        name, labels = m["metadata"]["name"], m["metadata"]["labels"]
        level = labels["pod-security.kubernetes.io/enforce"]
        why = "; ".join(baseline_reasons(result.spec, name)) if level == "baseline" else ""
        if level == "privileged":
            why = "node-exporter (host network, PID and paths)"
        lines.append(f"| `{name}` | {level} | {why or '-'} |")
    return lines


def connectivity_section(lines: list[str]) -> list[str]:
    if len(lines) == 1 and lines[0].startswith("(not computed"):
        return [lines[0]]
    return [
        "Every connection the stack's NetworkPolicies allow to or from the namespaces they police, as "
        "network-config-analyzer computes it over representative pods (`out/<stack>/connectivity.txt`; "
        "`stray` is a non-Ray pod, `outsider` a namespace no policy names, `peer` any pod of a named "
        "namespace). A change here is a change in who may reach what.",
        "",
        "<details><summary>" + f"{len(lines)} allowed connection(s)" + "</summary>",
        "",
        "```",
        *lines,
        "```",
        "",
        "</details>",
    ]


def installed_prometheus_stack(monitoring: MonitoringSpec) -> list[str]:
    install = monitoring.install
    if install is None:
        return []
    storage = f"a {install.storage.size} PVC each" if install.storage else "emptyDir (lost with the pod)"
    grafana = install.grafana
    if grafana is None:
        grafana_line = "no Grafana"
    else:
        config, secret = grafana.admin_password.config, grafana.admin_password.secret
        where = f"config secret `{config}`" if config else f"Secret `{secret.name if secret else ''}`"
        grafana_line = f"Grafana (admin password from {where}) loading the dashboards below"
    on = {True: "on", False: "off"}
    return [
        f"- installs chart `kube-prometheus-stack` {install.chart_version} from {install.chart.describe()} "
        f"(release `kube-prometheus-stack`): Prometheus x{install.replicas}, retention {install.retention}, "
        f"{storage}; Alertmanager {on[install.alertmanager]}; node-exporter {on[install.node_exporter]}; "
        f"{grafana_line}",
    ]


def kueue_quota_table(rows: list[QuotaRow]) -> list[str]:
    """Each ClusterQueue's room per flavor and resource against what the stack queues there at most
    (the largest workload, and all of them at once, each at its largest size)."""
    lines = [
        "Per ClusterQueue and flavor: the nominal quota, what it may borrow from its cohort, and what the "
        "stack's queued workloads take at their largest (every workload is checked to fit on its own).",
        "",
        "| ClusterQueue | flavor | resource | nominal | borrowable | largest workload | all queued |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {r.cluster_queue} | {r.flavor} | {r.resource} | {r.show(r.room.nominal)} | {r.show(r.room.borrowable)} | "
        f"{r.show(r.largest)} | {r.show(r.total)} |"
        for r in rows
    ]
    return lines


def stateful_changes_section(result: PreviewResult) -> list[str]:
    """What the change deletes, replaces or renames of the baseline's stateful resources: first in
    the summary, as a warning, when a baseline was given."""
    if result.baseline_size is None:
        return []
    changes = result.stateful_changes
    if not changes:
        return [
            "",
            "## Stateful resources deleted or replaced",
            "",
            f"None: all {result.baseline_size} stateful resources of the baseline are kept as they are.",
        ]
    lines = [
        "",
        "## Warning: stateful resources deleted or replaced",
        "",
        f"This change deletes, replaces or renames {len(changes)} of the baseline's {result.baseline_size} "
        "stateful resources (PVCs, PVs, StatefulSets, Secrets, Namespaces, CRDs). Each unacknowledged one is a "
        "`stateful-resources-kept` finding; `platform.acknowledgeDestructiveChanges` accepts it.",
        "",
        "| object | effect | why | acknowledged |",
        "| --- | --- | --- | --- |",
    ]
    for change in changes:
        detail = change.detail.replace("|", "\\|")
        acknowledged = "yes" if change.acknowledged else "**no**"
        lines.append(f"| `{change.label}` | {change.effect} | {detail} | {acknowledged} |")
    return lines


def render_summary(result: PreviewResult) -> str:
    spec = result.spec
    status = (
        "clean"
        if result.exit_code == 0
        else f"blocked: {len(result.schema_errors)} schema error(s), {len(result.mandatory)} mandatory violation(s)"
    )
    lines = [
        f"# kuberay-platform preview: stack `{result.stack}`",
        "",
        f"Environment **{spec.environment}**, Kubernetes {spec.kubernetes_version}: **{status}**.",
        f"{len(result.resources)} resources, {len(result.manifests)} Kubernetes objects validated, "
        f"{len(result.violations)} policy finding(s).",
        *stateful_changes_section(result),
        "",
        "## KubeRay operator",
        "",
    ]
    chart = _chart(result)
    values = chart.get("values") or {}
    op = spec.operator
    lines += [
        f"- chart `{chart.get('chart')}` {chart.get('version')} from {op.chart.describe()}, "
        f"namespace `{chart.get('namespace')}`",
        f"- image `{op.image.repository}:{op.image.tag}`, scale profile `{op.scale}`: "
        f"reconcileConcurrency {values.get('reconcileConcurrency')}, kubeClient qps "
        f"{(values.get('kubeClient') or {}).get('qps')} / burst {(values.get('kubeClient') or {}).get('burst')}",
        "- watches " + (", ".join(f"`{n}`" for n in op.watch_namespaces) if op.watch_namespaces else "all namespaces"),
        "",
        "| feature gate | enabled |",
        "| --- | --- |",
    ]
    lines += [f"| {g['name']} | {'yes' if g['enabled'] else 'no'} |" for g in values.get("featureGates") or []]
    if spec.kueue.install is not None:
        install = spec.kueue.install
        kueue_chart = _chart(result, "kueue")
        lines += [
            "",
            "## Kueue",
            "",
            f"- chart `kueue` {install.chart_version} from {install.chart.describe()}, namespace "
            f"`{kueue_chart.get('namespace')}`; image `{install.image.repository}:{install.image.tag}`, "
            f"{install.replicas} replica(s)",
            "- integrations: " + ", ".join(f"`{f}`" for f in install.frameworks),
            "- feature gate overrides: "
            + (", ".join(f"{k}={'on' if v else 'off'}" for k, v in sorted(install.feature_gates.items())) or "none"),
        ]
    if spec.teams:
        lines += ["", "## Teams", "", "| team | namespace | quota | members |", "| --- | --- | --- | --- |"]
        for name, team in spec.teams.items():
            hard = ", ".join(f"{k} {v}" for k, v in quota_hard(team).items()) or "none"
            m = team.members
            who = ", ".join([*(f"group {g}" for g in m.groups), *(f"user {u}" for u in m.users), *m.service_accounts])
            lines.append(f"| {name} | `{team.namespace or name}` | {hard} | {who or '-'} |")
    if spec.monitoring is not None:
        lines += ["", "## Monitoring", "", *monitoring_section(result)]
    if result.unset_secrets:
        lines += ["", "## Secrets to set before `pulumi up`", ""]
        lines += [f"- `pulumi config set --secret {key} <value>`" for key in result.unset_secrets]
        lines += ["", "(the offline preview stood a placeholder in for each)"]
    lines += ["", "## Pod Security", "", *pod_security_section(result)]
    if result.connectivity is not None:
        lines += ["", "## Connectivity", "", *connectivity_section(result.connectivity)]
    lines += prerequisites_section(spec)
    lines += ["", "## Workloads", "", *workloads_table(spec)]
    lines += ["", "## Capacity", "", *capacity_table(plans(result.manifests))]
    if rows := quota_table(result.manifests):
        lines += ["", "## Kueue quotas", "", *kueue_quota_table(rows)]
    lines += ["", "## Schema validation", "", "Schemas used:", ""]
    lines += [f"- {source}" for source in result.schema_sources]
    lines.append("")
    if result.schema_errors:
        lines += [f"- `{e}`" for e in result.schema_errors]
    else:
        lines.append(f"All {len(result.manifests)} objects and the chart values pass strict validation.")
    lines += ["", "## Policy findings", ""]
    if result.violations:
        lines += ["| enforcement | policy | object | message |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {v.enforcement} | {v.policy} | {v.kind} {v.namespace or '-'}/{v.name} | {v.message} |"
            for v in result.violations
        ]
    else:
        lines.append("None.")
    lines += ["", "## Resources", "", "| type | name |", "| --- | --- |"]
    lines += [f"| `{r.type}` | {r.name} |" for r in result.resources]
    return "\n".join(lines) + "\n"
