"""Teams (``platform.teams``): a namespace per team with a ResourceQuota, a LimitRange and a Role
that lets the team's people manage Ray objects in it and nowhere else."""

from __future__ import annotations

from pydantic import Field, model_validator

from components.spec.base import K8sName, Model, Quantity, Resources


class TeamQuota(Model):
    """The namespace's ResourceQuota (``hard``). Unset entries are not limited."""

    cpu: Quantity | None = None
    """``requests.cpu`` and ``limits.cpu``."""
    memory: Quantity | None = None
    """``requests.memory`` and ``limits.memory``."""
    gpu: int | None = Field(default=None, ge=0)
    """``requests.nvidia.com/gpu``."""
    tpu: int | None = Field(default=None, ge=0)
    """``requests.google.com/tpu``."""
    pods: int | None = Field(default=None, ge=0)
    ray_clusters: int | None = Field(default=None, ge=0)
    """``count/rayclusters.ray.io`` (a RayJob or RayService creates one, two while a service upgrades)."""
    ray_jobs: int | None = Field(default=None, ge=0)
    ray_services: int | None = Field(default=None, ge=0)
    persistent_volume_claims: int | None = Field(default=None, ge=0)
    storage: Quantity | None = None
    """``requests.storage`` over the namespace's PVCs."""


class TeamMembers(Model):
    groups: list[str] = []
    users: list[str] = []
    service_accounts: list[str] = []
    """``<namespace>:<name>`` of CI or GitOps service accounts."""

    @property
    def empty(self) -> bool:
        return not (self.groups or self.users or self.service_accounts)


class TeamSpec(Model):
    namespace: K8sName | None = None
    """Default: the team's name."""
    quota: TeamQuota = TeamQuota()
    default_container_resources: Resources = Resources(cpu="500m", memory="512Mi")
    """LimitRange defaults (request and limit) for containers that set none: with a CPU or memory
    quota the API server refuses such a pod (e.g. a sidecar someone injects)."""
    members: TeamMembers = TeamMembers()
    """Who may create, change and delete RayClusters, RayJobs, RayCronJobs and RayServices in the team's
    namespace, read its pods, logs and events, and port-forward to its heads."""
    own_operator: bool = False
    """The team runs its own KubeRay operator in its namespace (the chart's single-namespace mode:
    a Role, not a ClusterRole; the platform's CRDs, feature gates, chart version and image), so a
    failure or restart of one operator does not stall the other's workloads. The platform's operator
    must then watch a list of namespaces without it."""
    trusted: bool = True
    """``false`` for a tenant whose code the platform does not trust (another business unit, an
    external partner): its namespace must be policed (``networkPolicies``) and every Ray cluster there
    must encrypt and authenticate its own traffic (``mtls: true``), so neither its pods nor a
    compromised neighbour can read or join the others' Ray traffic."""

    @model_validator(mode="after")
    def _service_accounts(self) -> TeamSpec:
        for sa in self.members.service_accounts:
            if sa.count(":") != 1 or not all(sa.split(":")):
                raise ValueError(f"members.serviceAccounts: expected <namespace>:<name> (got {sa!r})")
        return self
