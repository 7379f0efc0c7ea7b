"""Helm values for the Kueue chart (v0.19.2), built from ``kueue.install`` (pure).

The chart takes the manager's whole Configuration as one YAML string
(``managerConfig.controllerManagerConfigYaml``, read with ``fromYaml`` by
``templates/manager/manager-config.yaml``): setting it replaces the chart's default file, so
``CONFIGURATION`` repeats that default (a test compares them) and only the integrations and
``manageJobsWithoutQueueName`` change. The chart leaves ``internalCertManagement`` unset so that
its template fills in the webhook Service and Secret names; Kueue then issues its own webhook
certificates. Every other key set here exists in the chart's values (checked by the preview).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import yaml

from components.manifests.namespace import namespace
from components.spec.kueue import KueueInstallSpec

CONFIGURATION: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {
        "groupKindConcurrency": {
            "Job.batch": 5,
            "Pod": 5,
            "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1,
        }
    },
    "clientConnection": {"qps": 300, "burst": 500},
}
"""The chart's default Configuration without its ``integrations``."""


def kueue_configuration(spec: KueueInstallSpec) -> dict[str, Any]:
    config = copy.deepcopy(CONFIGURATION)
    if spec.manage_jobs_without_queue_name:
        config["manageJobsWithoutQueueName"] = True
    config["integrations"] = {"frameworks": list(spec.frameworks)}
    return config


def kueue_values(spec: KueueInstallSpec) -> dict[str, Any]:
    return {
        "controllerManager": {
            # Helm replaces lists: the full list of overrides, in a stable order.
            "featureGates": [{"name": name, "enabled": on} for name, on in sorted(spec.feature_gates.items())],
            "manager": {
                "image": {"repository": spec.image.repository, "tag": spec.image.tag, "pullPolicy": "IfNotPresent"}
            },
            "replicas": spec.replicas,
            "podDisruptionBudget": {"enabled": spec.replicas > 1, "minAvailable": 1},
        },
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(kueue_configuration(spec), sort_keys=False)},
    }


@dataclass(frozen=True)
class KueueInstallManifests:
    spec: KueueInstallSpec
    namespace: dict[str, Any]
    """Kueue's namespace; its manager runs with a restricted securityContext (the chart's defaults)."""
    values: dict[str, Any]


def kueue_install(spec: KueueInstallSpec, environment: str, kubernetes_version: str) -> KueueInstallManifests:
    return KueueInstallManifests(
        spec=spec,
        namespace=namespace(spec.namespace, environment, "kueue", "restricted", kubernetes_version),
        values=kueue_values(spec),
    )
