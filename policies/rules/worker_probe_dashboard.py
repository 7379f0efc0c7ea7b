"""worker-probe-dashboard: worker probes must not target the dashboard port.

Severity: mandatory everywhere (the probe can never pass).

Why: only the head serves the dashboard (8265); a worker readiness/liveness probe on it never
succeeds, so workers never become Ready (or are restarted forever). KubeRay's own worker probe
checks the raylet through the dashboard agent (52365) instead (DESIGN.md upstream facts).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, pod_groups
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

DASHBOARD_PORTS = ("8265", "dashboard")
PROBES = ("readinessProbe", "livenessProbe", "startupProbe")


def _targets_dashboard(probe: Mapping[str, Any]) -> bool:
    for handler in ("httpGet", "tcpSocket", "grpc"):
        port = as_map(probe.get(handler)).get("port")
        if port is not None and str(port) in DASHBOARD_PORTS:
            return True
    command = " ".join(str(c) for c in as_list(as_map(probe.get("exec")).get("command")))
    return ":8265" in command


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    for group in pod_groups(props):
        if group.role != "worker":
            continue
        for i, container in enumerate(group.containers):
            for probe in PROBES:
                if _targets_dashboard(as_map(container.get(probe))):
                    yield (
                        f"{group.path}.template.spec.containers[{i}].{probe} targets the dashboard (8265), "
                        "which workers do not serve; remove it (KubeRay injects a raylet probe) or probe 52365"
                    )


RULE = ResourceRule(
    name="worker-probe-dashboard",
    description="Worker probes never target the dashboard port 8265.",
    levels=MANDATORY,
    check=check,
)
