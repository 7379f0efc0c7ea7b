"""cron-job-history: a RayCronJob's RayJobs delete themselves.

Severity: advisory in dev, mandatory in staging and prod.

Why: KubeRay 1.7.0's RayCronJob has no history limit (``RayCronJobSpec``: jobTemplate, schedule,
timeZone, suspend); each run creates a RayJob ``<name>-<minutes>`` owned by the RayCronJob
(``constructRayJob``), removed only with it. A daily job leaves 365 RayJobs a year. A
``DeleteSelf`` deletion rule in the job template (gate RayJobDeletionPolicy, beta, on by default)
removes each one once it is old enough.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.manifests.ray_objects import as_list, as_map, dig
from policies.rules.base import ResourceRule, RuleContext, levels


def check(resource_type: str, props: Mapping[str, Any], ctx: RuleContext) -> Iterator[str]:
    if props.get("kind") != "RayCronJob":
        return
    rules = as_list(dig(props, "spec", "jobTemplate", "deletionStrategy", "deletionRules"))
    if not any(as_map(rule).get("policy") == "DeleteSelf" for rule in rules):
        yield (
            "spec.jobTemplate.deletionStrategy: no DeleteSelf rule, so every run's RayJob stays until the RayCronJob "
            "is deleted (KubeRay 1.7.0 keeps no history limit); add deletionRules with policy DeleteSelf after a TTL"
        )


RULE = ResourceRule(
    name="cron-job-history",
    description="A RayCronJob's job template deletes its finished RayJobs (DeleteSelf).",
    levels=levels("advisory", "mandatory", "mandatory"),
    check=check,
)
