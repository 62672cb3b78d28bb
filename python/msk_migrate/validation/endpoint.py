"""One cluster as the validation job sees it: standard library only (the Spark job's driver imports nothing
else, docs/validation.md). The same rules as :class:`msk_migrate.config.migration.ClusterEndpoint` and
:class:`msk_migrate.config.auth.AuthConfig`, whose values callers may still give: the request converts them.

Valid Python 3.9 (EMR 7.9's system Python): no ``match``, no runtime ``X | Y``, no ``dataclass(slots=...)``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ..bucket_layout import ALIAS
from ..errors import UsageError

AUTH_MODES = ("iam", "scram", "mtls", "plaintext")
SCRAM_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256")
SECRETS_FROM = ("secrets_manager", "env", "file")

_ALIAS = ALIAS
_HOSTPORT = re.compile(r"^[A-Za-z0-9._-]+:\d{1,5}$")
_BROKER_TYPE = re.compile(r"(kafka|express)\.[a-z0-9]+\.[a-z0-9]+")


def _one_of(field: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UsageError(field, f"{value!r} is not one of {', '.join(allowed)}")


def _optional_str(field: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise UsageError(field, f"expected a string, not {type(value).__name__}")


def _known_keys(cls: type, data: Any, where: str) -> dict[str, Any]:
    """``data`` as keyword arguments of ``cls``: an object, no key ``cls`` does not have, none required missing."""
    if not isinstance(data, dict):
        raise UsageError(where.rstrip(".") or cls.__name__, f"expected an object, not {type(data).__name__}")
    names = [f.name for f in dataclasses.fields(cls)]
    for key in data:
        if key not in names:
            raise UsageError(f"{where}{key}", f"unknown field {key!r}", f"drop it; the fields are {', '.join(names)}")
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and f.name not in data:
            raise UsageError(f"{where}{f.name}", "required field is missing", "add it")
    return dict(data)


@dataclasses.dataclass(frozen=True)
class EndpointAuth:
    """How a client authenticates to one cluster (the fields and rules of ``AuthConfig``).

    - ``iam``: SASL_SSL + AWS_MSK_IAM; ``scram``: SASL/SCRAM, credentials from ``secret_arn``;
    - ``mtls``: SSL with a client certificate from ``secret_arn``; ``plaintext``: no auth, no TLS.
    ``secrets_from`` ``env``/``file`` are for operator tools only (the job reads Secrets Manager).
    """

    mode: str = "plaintext"
    scram_mechanism: str = "SCRAM-SHA-512"
    tls: bool = True
    secret_arn: str | None = None
    secrets_from: str = "secrets_manager"
    secrets_file: str | None = None
    ca_secret_arn: str | None = None

    def __post_init__(self) -> None:
        _one_of("auth.mode", self.mode, AUTH_MODES)
        _one_of("auth.scram_mechanism", self.scram_mechanism, SCRAM_MECHANISMS)
        _one_of("auth.secrets_from", self.secrets_from, SECRETS_FROM)
        if not isinstance(self.tls, bool):
            raise UsageError("auth.tls", f"expected true or false, not {self.tls!r}")
        for name in ("secret_arn", "secrets_file", "ca_secret_arn"):
            _optional_str(f"auth.{name}", getattr(self, name))
        if (self.secrets_from == "file") != bool(self.secrets_file):
            raise UsageError("auth.secrets_file", "secrets_file goes with secrets_from 'file' (and it needs one); set both or neither")
        if self.secrets_from in ("env", "file"):
            if self.secret_arn:
                raise UsageError("auth.secret_arn", f"secrets_from {self.secrets_from!r} takes no secret_arn; remove one of them")
        elif self.mode in ("scram", "mtls") and not self.secret_arn:
            raise UsageError("auth.secret_arn", f"auth mode {self.mode!r} needs secret_arn (the Secrets Manager secret with the "
                             "credentials), or secrets_from: env for operator tools")
        if self.mode in ("iam", "plaintext") and self.secret_arn:
            raise UsageError("auth.secret_arn", f"auth mode {self.mode!r} takes no secret_arn; remove it")
        for name in ("secret_arn", "ca_secret_arn"):
            value = getattr(self, name)
            if value and not value.startswith("arn:aws"):
                raise UsageError(f"auth.{name}", f"{name} must be a Secrets Manager ARN (arn:aws:secretsmanager:...)")

    @property
    def uses_tls(self) -> bool:
        """IAM and mTLS always encrypt; SCRAM unless ``tls`` is false; plaintext never."""
        return self.mode in ("iam", "mtls") or (self.mode == "scram" and self.tls)

    @classmethod
    def from_dict(cls, data: Any) -> EndpointAuth:
        return cls(**_known_keys(cls, data, "auth."))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


AUTH_FIELDS = tuple(f.name for f in dataclasses.fields(EndpointAuth))


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """One Kafka cluster as a client sees it (the fields and rules of ``ClusterEndpoint``)."""

    alias: str
    bootstrap_servers: str
    auth: EndpointAuth = dataclasses.field(default_factory=EndpointAuth)
    #: MSK broker instance type (e.g. kafka.m7g.large) when this is an MSK cluster, as the environment names it.
    msk_broker_type: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.alias, str) or not _ALIAS.match(self.alias):
            raise UsageError("alias", f"alias {self.alias!r} must match [A-Za-z0-9_-]{{1,64}}")
        if not isinstance(self.bootstrap_servers, str):
            raise UsageError("bootstrap_servers", f"expected host:port[,host:port...], not {type(self.bootstrap_servers).__name__}")
        parts = [p.strip() for p in self.bootstrap_servers.split(",") if p.strip()]
        if not parts:
            raise UsageError("bootstrap_servers", "bootstrap_servers is empty; give host:port[,host:port...]")
        for p in parts:
            if not _HOSTPORT.match(p):
                raise UsageError("bootstrap_servers", f"bootstrap server {p!r} is not host:port")
        object.__setattr__(self, "bootstrap_servers", ",".join(parts))
        if isinstance(self.auth, dict):
            object.__setattr__(self, "auth", EndpointAuth.from_dict(self.auth))
        elif not isinstance(self.auth, EndpointAuth):
            raise UsageError("auth", f"expected an object, not {type(self.auth).__name__}")
        v = self.msk_broker_type
        if v is not None and not (isinstance(v, str) and _BROKER_TYPE.fullmatch(v)):
            raise UsageError("msk_broker_type", f"msk_broker_type {v!r} is not an MSK instance type like kafka.m7g.large")

    @classmethod
    def from_dict(cls, data: Any) -> Endpoint:
        """From :meth:`to_dict`'s shape; unknown keys are refused by name."""
        kw = _known_keys(cls, data, "")
        if "auth" in kw:
            kw["auth"] = EndpointAuth.from_dict(kw["auth"])
        return cls(**kw)

    @classmethod
    def of(cls, value: Any) -> Endpoint:
        """An :class:`Endpoint` from itself, a dict of :meth:`to_dict`'s shape, or a pydantic ``ClusterEndpoint``
        (the same fields)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls.from_dict(value)
        if hasattr(value, "model_dump"):
            dumped = value.model_dump(mode="json")
            auth = {k: v for k, v in (dumped.get("auth") or {}).items() if k in AUTH_FIELDS}
            return cls(alias=dumped["alias"], bootstrap_servers=dumped["bootstrap_servers"], auth=EndpointAuth(**auth),
                       msk_broker_type=dumped.get("msk_broker_type"))
        raise UsageError("endpoint", f"expected a cluster endpoint, not {type(value).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"alias", "bootstrap_servers", "auth": {...}, "msk_broker_type"}``."""
        return {"alias": self.alias, "bootstrap_servers": self.bootstrap_servers, "auth": self.auth.to_dict(),
                "msk_broker_type": self.msk_broker_type}
