"""Fargate services of the migration: Connect (MM2) with autoscaling, Prometheus, Grafana."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..identifiers import check_secret_arn
from ._fields import field_error

#: A person's Connect REST login name: it also names an environment variable of the worker
#: (``CONNECT_REST_PERSON_<NAME>``, hyphens as underscores), hence lower-case letters, digits and single hyphens.
PERSON_NAME = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
#: The shared machine login of the stack (the worker's own calls, the operator task): never a person's name.
SERVICE_LOGIN = "mm2-operator"

#: Cloud Map answers a DNS query with at most 8 records (multivalue routing), and Prometheus finds the
#: Connect workers through that DNS name: more workers than this would drop out of monitoring.
MAX_DISCOVERABLE_WORKERS = 8

#: Fargate task sizes: cpu units -> allowed memory (MiB).
FARGATE_SIZES: dict[int, tuple[int, ...]] = {
    256: (512, 1024, 2048),
    512: tuple(range(1024, 4097, 1024)),
    1024: tuple(range(2048, 8193, 1024)),
    2048: tuple(range(4096, 16385, 1024)),
    4096: tuple(range(8192, 30721, 1024)),
    8192: tuple(range(16384, 61441, 4096)),
    16384: tuple(range(32768, 122881, 8192)),
}


def check_fargate(cpu: int, memory: int) -> None:
    if cpu not in FARGATE_SIZES:
        raise ValueError(f"cpu {cpu} is not a Fargate size; use one of {', '.join(map(str, FARGATE_SIZES))}")
    if memory not in FARGATE_SIZES[cpu]:
        allowed = FARGATE_SIZES[cpu]
        raise ValueError(f"memory {memory} does not fit cpu {cpu} on Fargate; use {allowed[0]}..{allowed[-1]} MiB in Fargate steps")


class ConnectService(BaseModel):
    """The Connect (MM2) Fargate service and its autoscaling."""

    model_config = ConfigDict(extra="forbid")

    cpu: int = Field(1024, description="Fargate CPU units per task.")
    memory: int = Field(4096, description="Fargate memory per task (MiB).")
    partitions: int | None = Field(
        None, ge=1,
        description="The source partitions the flow will replicate (an estimate is enough). When set, worker.heap and "
        "connect.memory left out of the file follow the worker memory model (msk_migrate.config.worker_sizing, "
        "docs/sizing.md) for them, and a worker.heap or connect.memory given below it is refused.",
    )
    desired_count: int = Field(2, ge=1, description="Initial tasks (workers).")
    min_capacity: int = Field(2, ge=1, description="Autoscaling lower bound.")
    max_capacity: int = Field(4, ge=1, description="Autoscaling upper bound; at most migration.tasks_max and 8.")
    cpu_target_percent: int = Field(60, ge=10, le=90, description="Target tracking on average service CPU.")
    scale_in_cooldown_seconds: int = Field(300, ge=0, description="Wait after scale-in (rebalances are costly).")
    scale_out_cooldown_seconds: int = Field(120, ge=0, description="Wait after scale-out.")
    people: list[str] = Field(
        default_factory=list,
        description="One login per person (e.g. [alice, bob]) to the Connect REST API, Prometheus and Grafana: the "
        "stack generates a secret <prefix>/connect-rest/<name> for each, so the worker's REST audit log names who "
        "changed what; Grafana makes the user <name> (role Editor) from it at every start. Lower-case "
        f"letters, digits, single hyphens; never '{SERVICE_LOGIN}' (the machine login).",
    )

    @field_validator("people")
    @classmethod
    def _people(cls, v: list[str]) -> list[str]:
        import re

        for name in v:
            if not re.fullmatch(PERSON_NAME, name) or len(name) > 32:
                raise ValueError(f"person {name!r} is not a login name: use lower-case letters, digits and single hyphens "
                                 "(at most 32 characters), e.g. alice or j-smith")
            if name == SERVICE_LOGIN:
                raise ValueError(f"{SERVICE_LOGIN!r} is the stack's machine login, not a person: name the person")
        dupes = sorted({n for n in v if v.count(n) > 1})
        if dupes:
            raise ValueError(f"person {dupes[0]!r} is listed twice: list each person once")
        return v

    @model_validator(mode="after")
    def _check(self) -> ConnectService:
        check_fargate(self.cpu, self.memory)
        if self.max_capacity > MAX_DISCOVERABLE_WORKERS:
            raise field_error(
                "ConnectService", ("max_capacity",), self.max_capacity,
                f"{self.max_capacity} workers exceed the {MAX_DISCOVERABLE_WORKERS} that Cloud Map DNS (Prometheus' discovery) "
                "returns; use larger tasks (cpu/memory) instead of more than 8 workers",
            )
        if not self.min_capacity <= self.desired_count <= self.max_capacity:
            raise ValueError(
                f"need min_capacity <= desired_count <= max_capacity, got {self.min_capacity} / {self.desired_count} / {self.max_capacity}"
            )
        return self


class TaskSize(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpu: int = Field(512, description="Fargate CPU units.")
    memory: int = Field(1024, description="Fargate memory (MiB).")

    @model_validator(mode="after")
    def _check(self) -> TaskSize:
        check_fargate(self.cpu, self.memory)
        return self


class GrafanaService(TaskSize):
    cpu: int = Field(256, description="Fargate CPU units.")
    memory: int = Field(512, description="Fargate memory (MiB).")
    admin_user: str = Field("admin", pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="Grafana admin login.")
    admin_secret_arn: str | None = Field(
        None,
        description="Secrets Manager secret with the admin password. Unset: the stack creates an empty secret "
        "that the operator fills before Grafana can start (there is never a default password).",
    )
    admin_secret_key: str = Field("password", pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="JSON key of the password in the secret.")

    @field_validator("admin_secret_arn")
    @classmethod
    def _arn(cls, v: str | None) -> str | None:
        return v if v is None else check_secret_arn(v, "admin_secret_arn")
