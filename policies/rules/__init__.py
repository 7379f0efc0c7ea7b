"""The policy rules: pure functions over Kubernetes objects, shared by the Pulumi policy pack,
the offline preview and ``make lint``. Add a rule by adding a module and listing it here."""

from __future__ import annotations

from policies.rules import head_runs_tasks
from policies.rules.base import ResourceRule

RESOURCE_RULES: list[ResourceRule] = [
    head_runs_tasks.RULE,
]
