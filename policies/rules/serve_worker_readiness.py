"""serve-worker-readiness: a RayService worker's readiness must include Ray Serve's proxy health.

Severity: mandatory everywhere (traffic would reach pods that cannot serve it).

Why: the serve Service selects every worker of a RayService (KubeRay labels them all
``ray.io/serve: "true"`` in ``BuildPod``); what keeps a worker without a Serve proxy out of its
endpoints is KubeRay's injected readiness probe, which for RayService workers checks the raylet and
then ``http://localhost:<serve port>/-/healthz`` (``initLivenessAndReadinessProbe`` in
ray-operator/controllers/ray/common/pod.go, KubeRay 1.7.0). A readiness probe in the template
replaces it (the probe is injected only when none is set): with pipeline parallelism the pods
without a proxy would become Ready endpoints with nothing on port 8000. Remove the probe, or check
the serve port's ``/-/healthz`` in it too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, pod_groups
from policies.rules.base import MANDATORY, ResourceRule, RuleContext

SERVE_HEALTH = "/-/healthz"


def _checks_serve(probe: Mapping[str, Any]) -> bool:
    http = as_map(probe.get("httpGet"))
    if http.get("path") == SERVE_HEALTH:
        return True
    command = " ".join(str(c) for c in as_list(as_map(probe.get("exec")).get("command")))
    return SERVE_HEALTH in command


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayService":
        return
    for group in pod_groups(props):
        if group.role != "worker":
            continue
        probe = group.ray_container.get("readinessProbe")
        if isinstance(probe, Mapping) and not _checks_serve(probe):
            yield (
                f"{group.path}.template.spec.containers[0].readinessProbe replaces KubeRay's, which also checks "
                f"the Serve proxy ({SERVE_HEALTH} on the serve port): workers without a proxy would receive "
                "traffic; remove it or include the serve check"
            )


RULE = ResourceRule(
    name="serve-worker-readiness",
    description="RayService worker readiness includes the Serve proxy health check.",
    levels=MANDATORY,
    check=check,
)
