"""How a Kafka client authenticates to one cluster.

Secrets never appear in config files or rendered connector JSON. A config names *where* a secret
lives (a Secrets Manager ARN for ECS); the rendered client properties reference it as
``${env:MM2_<ROLE>_...}`` which Kafka's EnvVarConfigProvider resolves inside the Connect worker,
and ECS injects those variables from Secrets Manager through the task definition's ``secrets``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

AuthMode = Literal["iam", "scram", "mtls", "plaintext"]

#: MSK broker ports per auth mode (private connectivity).
MSK_PORTS: dict[str, int] = {"plaintext": 9092, "mtls": 9094, "scram": 9096, "iam": 9098}


class AuthConfig(BaseModel):
    """Authentication of one side (source or target).

    - ``iam``: SASL_SSL + AWS_MSK_IAM (aws-msk-iam-auth); credentials from the ECS task role.
    - ``scram``: SASL/SCRAM; username and password come from ``secret_arn`` (JSON keys
      ``username``/``password``, the MSK convention).
    - ``mtls``: SSL with a client certificate; PEM certificate chain and private key come from
      ``secret_arn`` (JSON keys ``certificate_chain``/``private_key``).
    - ``plaintext``: no auth, no TLS (old self-managed clusters inside a trusted network only).
    """

    model_config = ConfigDict(extra="forbid")

    mode: AuthMode = Field("plaintext", description="iam | scram | mtls | plaintext")
    scram_mechanism: Literal["SCRAM-SHA-512", "SCRAM-SHA-256"] = Field(
        "SCRAM-SHA-512", description="SCRAM mechanism; MSK supports SCRAM-SHA-512 only."
    )
    tls: bool = Field(
        True,
        description="Encrypt SCRAM connections (SASL_SSL). False = SASL_PLAINTEXT for legacy clusters.",
    )
    secret_arn: str | None = Field(
        None, description="Secrets Manager ARN holding the SCRAM credentials or the mTLS client cert+key."
    )
    secrets_from: Literal["secrets_manager", "env", "file"] = Field(
        "secrets_manager",
        description="Where SCRAM/mTLS secrets come from: ``secrets_manager`` (``secret_arn``; required on "
        "ECS), ``env`` (operator tools only: the MM2_<ROLE>_* variables of :mod:`msk_migrate.access.secrets`) "
        "or ``file`` (operator tools only: ``secrets_file``).",
    )
    secrets_file: str | None = Field(
        None,
        description="With secrets_from ``file``: a JSON file of this side's secrets by purpose (``username``, "
        "``password``, ``certificate_chain``, ``private_key``, ``ca``), mode 0600 -- the local harness's MM2 user.",
    )
    ca_secret_arn: str | None = Field(
        None,
        description="Secrets Manager ARN of a PEM CA bundle (JSON key ``ca``) for brokers signed by a "
        "private CA. Unset = the JVM's default trust store (right for MSK).",
    )

    @model_validator(mode="after")
    def _check(self) -> AuthConfig:
        if (self.secrets_from == "file") != bool(self.secrets_file):
            raise ValueError("secrets_file goes with secrets_from 'file' (and it needs one); set both or neither")
        if self.secrets_from in ("env", "file"):
            if self.secret_arn:
                raise ValueError(f"secrets_from {self.secrets_from!r} takes no secret_arn; remove one of them")
        elif self.mode in ("scram", "mtls") and not self.secret_arn:
            raise ValueError(
                f"auth mode {self.mode!r} needs secret_arn (the Secrets Manager secret with the credentials), "
                "or secrets_from: env for operator tools"
            )
        if self.mode in ("iam", "plaintext") and self.secret_arn:
            raise ValueError(f"auth mode {self.mode!r} takes no secret_arn; remove it")
        for name in ("secret_arn", "ca_secret_arn"):
            value = getattr(self, name)
            if value and not value.startswith("arn:aws") :
                raise ValueError(f"{name} must be a Secrets Manager ARN (arn:aws:secretsmanager:...)")
        return self

    @property
    def uses_tls(self) -> bool:
        return self.mode in ("iam", "mtls") or (self.mode == "scram" and self.tls)

    @property
    def msk_port(self) -> int:
        return MSK_PORTS[self.mode]
