"""Secrets of a Kafka client: where each one comes from (:func:`secret_refs`) and its value (:class:`SecretResolver`).

The names: the environment variables that carry secrets into the Connect worker.

Rendered configs only ever contain ``${env:NAME}``; Kafka's EnvVarConfigProvider (enabled in the
worker by the image entrypoint as provider ``env``) resolves them inside the worker JVM. On ECS the
task definition's ``secrets`` fills NAME from Secrets Manager (``valueFrom = <arn>:<json-key>::``).
Locally the harness sets NAME on the worker process.

The values, for operator tools (validate, preflight, offsets) per cluster role ('source' or 'target'):
secrets (SCRAM username/password, mTLS certificate chain and key, a private CA) are never command-line
arguments. Each one is read, in this order, from

1. the environment variable named for it (``MM2_SOURCE_SASL_PASSWORD``, ``MM2_TARGET_TLS_PRIVATE_KEY``, ...), or
2. AWS Secrets Manager: the ``secret_arn`` / ``ca_secret_arn`` of the side's auth config, JSON key as
   documented on :class:`msk_migrate.config.AuthConfig`.

unless the side's auth config names a secrets file (``secrets_from: file``, the local harness's MM2 user):
then every secret comes from that file, whichever role the side plays.

The operator principal wins over all of these, on every flow kind (``--env``, ``--config``, ``--local``): when
``MSK_MIGRATE_<ROLE>_SASL_USERNAME``/``_SASL_PASSWORD`` (a SCRAM side) or ``MSK_MIGRATE_<ROLE>_TLS_CERTIFICATE_CHAIN``/
``_TLS_PRIVATE_KEY`` (an mTLS side) are exported, the operator tools act as that principal instead of the flow's
own (MirrorMaker 2's) identity; the CA still comes from the flow. This is how an operator runs a command that needs
rights MirrorMaker 2's user does not hold (the fence: ALTER on the cluster), and every rights error names the
principal it acted as and these variables (:func:`principal_origin`). One of a pair without the other is bad input.
The Connect worker never reads them (its configs name only ``MM2_*`` variables).

The resolved values live only in memory (the driver's, and the Spark plan's Kafka options).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config.identifiers import SECRET_ARN, secret_region
from ..errors import UsageError

if TYPE_CHECKING:  # the models are pydantic; the Spark job passes the validation's own endpoints
    from ..config.auth import AuthConfig


@dataclass(frozen=True)
class SecretRef:
    env: str  #: variable name inside the worker, e.g. MM2_SOURCE_SASL_PASSWORD
    secret_arn: str | None  #: Secrets Manager secret (None: operator tools with secrets_from env)
    json_key: str  #: key inside the secret's JSON

    @property
    def placeholder(self) -> str:
        return "${env:" + self.env + "}"

    @property
    def ecs_value_from(self) -> str:
        return f"{self.secret_arn}:{self.json_key}::"


#: Variable suffix per purpose; the purpose is also the JSON key inside the Secrets Manager secret.
SECRET_PURPOSES: dict[str, str] = {
    "username": "SASL_USERNAME",
    "password": "SASL_PASSWORD",
    "certificate_chain": "TLS_CERTIFICATE_CHAIN",
    "private_key": "TLS_PRIVATE_KEY",
    "ca": "TLS_CA",
}


def read_secret_json(arn: str, field: str, fix: str, client: Any | None = None) -> dict[str, Any]:
    """The JSON object the Secrets Manager secret ``arn`` holds, read from the secret's own region (``client``: a
    secretsmanager client to use instead). The one reader of a secret for every command: anything else is one
    line naming ``field`` (exit 2) — not a secret ARN (before any call), not readable (``fix`` says what to grant
    or export instead), not a JSON object."""
    if SECRET_ARN.match(arn) is None:
        raise UsageError(field, f"{arn!r} is not a Secrets Manager secret ARN", "pass arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME")
    try:
        if client is None:
            import boto3

            client = boto3.client("secretsmanager", region_name=secret_region(arn))
        raw = client.get_secret_value(SecretId=arn)["SecretString"]
    except Exception as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise UsageError(field, f"cannot read {arn} from Secrets Manager: {first}", fix) from None
    try:
        data = json.loads(raw)
    except (ValueError, TypeError):
        data = None
    if not isinstance(data, dict):
        raise UsageError(field, f"secret {arn} is not a JSON object", "store the keys as JSON")
    return data


def username_password(arn: str, field: str, fix: str, what: str) -> tuple[str, str]:
    """Basic-auth credentials from a Secrets Manager secret with JSON keys ``username`` and ``password``
    (:func:`read_secret_json`); ``what`` names them in the fix of a secret without both keys."""
    data = read_secret_json(arn, field, fix)
    if data.get("username") is None or data.get("password") is None:
        raise UsageError(field, f"secret {arn} is not JSON with keys username and password",
                         f'store the {what} as {{"username": ..., "password": ...}}')
    return str(data["username"]), str(data["password"])


def secret_env_name(role: str, purpose: str) -> str:
    """The one spelling of a secret variable: ``MM2_<ROLE>_<SUFFIX>`` (e.g. MM2_SOURCE_SASL_PASSWORD)."""
    return f"MM2_{role.upper()}_{SECRET_PURPOSES[purpose]}"


def secret_refs(role: str, auth: AuthConfig) -> dict[str, SecretRef]:
    """Secret variables for one side ('source' or 'target'), keyed by purpose."""
    purposes = {"scram": ("username", "password"), "mtls": ("certificate_chain", "private_key")}.get(auth.mode, ())
    refs = {p: SecretRef(secret_env_name(role, p), auth.secret_arn, p) for p in purposes}
    if auth.ca_secret_arn:
        refs["ca"] = SecretRef(secret_env_name(role, "ca"), auth.ca_secret_arn, "ca")
    return refs


def operator_env_name(role: str, purpose: str) -> str:
    """The operator principal's variable: ``MSK_MIGRATE_<ROLE>_<SUFFIX>`` (e.g. MSK_MIGRATE_SOURCE_SASL_USERNAME)."""
    return f"MSK_MIGRATE_{role.upper()}_{SECRET_PURPOSES[purpose]}"


#: The operator principal's secrets per auth mode (the pair that names one identity).
OPERATOR_PURPOSES: dict[str, tuple[str, str]] = {"scram": ("username", "password"), "mtls": ("certificate_chain", "private_key")}


def operator_hint(role: str = "source") -> str:
    """How an operator acts as a principal of their own, on any flow kind (the text of every rights error)."""
    return (f"export {operator_env_name(role, 'username')}/_SASL_PASSWORD (SCRAM) or {operator_env_name(role, 'certificate_chain')}/"
            "_TLS_PRIVATE_KEY (mTLS) of a principal that holds them: it wins over the flow's own secret on --env, --config and --local")


def operator_secrets(role: str, auth: AuthConfig, environ: dict[str, str] | None = None) -> dict[str, str] | None:
    """The exported operator principal of side ``role`` by purpose, or None when none is exported (or the side's
    auth mode has no principal of that kind). One of the pair without the other is bad input."""
    env = dict(os.environ) if environ is None else environ
    pair = OPERATOR_PURPOSES.get(auth.mode)
    if pair is None:
        return None
    got = {p: env[operator_env_name(role, p)] for p in pair if env.get(operator_env_name(role, p))}
    if not got:
        return None
    if len(got) < len(pair):
        have, lack = (operator_env_name(role, p) for p in sorted(pair, key=lambda p: p not in got))
        raise UsageError(lack, f"is not set but {have} is (the operator principal needs both)",
                         f"export {lack} too, or unset {have} to act as the flow's own principal")
    return got


def principal_origin(role: str, user: str | None, environ: dict[str, str] | None = None) -> str:
    """Where the principal a session acts as came from, for a rights error: the exported operator principal or the
    flow's own secret (and how to export one)."""
    env = dict(os.environ) if environ is None else environ
    var = operator_env_name(role, "username")
    if user and env.get(var) == user:
        return f"the operator principal exported as {var}"
    if not user and env.get(operator_env_name(role, "certificate_chain")):
        return f"the operator principal exported as {operator_env_name(role, 'certificate_chain')}"
    return f"the flow's own {role} principal (no operator principal exported: {operator_hint(role)})"


def ca_env(role: str) -> str:
    """Variable for a private CA bundle (PEM) when no ``ca_secret_arn`` is configured."""
    return secret_env_name(role, "ca")


@dataclass
class SecretResolver:
    """Resolves :class:`SecretRef` values from the environment, then Secrets Manager (cached per ARN)."""

    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    secretsmanager: Callable[[], Any] | None = None  #: factory of a boto3 secretsmanager client
    _cache: dict[str, dict[str, Any]] = field(default_factory=dict)

    def _secret_json(self, arn: str, role: str) -> dict[str, Any]:
        if arn not in self._cache:
            self._cache[arn] = read_secret_json(
                arn, f"{role}.auth.secret_arn", "grant secretsmanager:GetSecretValue on it, or export the secret in the environment",
                self.secretsmanager() if self.secretsmanager is not None else None)
        return self._cache[arn]

    def value(self, role: str, ref: SecretRef) -> str:
        if self.environ.get(ref.env):
            return self.environ[ref.env]
        if ref.secret_arn:
            data = self._secret_json(ref.secret_arn, role)
            if ref.json_key not in data:
                raise UsageError(
                    f"{role}.auth.secret_arn",
                    f"secret {ref.secret_arn} has no JSON key {ref.json_key!r}",
                    f"add {ref.json_key!r} to the secret or export {ref.env}",
                )
            return str(data[ref.json_key])
        raise UsageError(
            f"{role}.auth",
            f"{ref.env} is not set and no secret ARN is configured",
            f"export {ref.env} or pass --{role}-secret-arn",
        )

    def from_file(self, role: str, auth: AuthConfig) -> dict[str, str]:
        """The secrets of a side whose endpoint names a secrets file (``secrets_from: file``), by purpose."""
        path = str(auth.secrets_file)
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"{role}.auth.secrets_file", f"cannot read {path}: {exc}",
                             "point it at the JSON secrets file (e.g. start the local environment again)") from None
        out: dict[str, str] = {}
        for purpose in secret_refs(role, auth):
            if purpose not in data:
                raise UsageError(f"{role}.auth.secrets_file", f"{path} has no key {purpose!r}", f"add {purpose!r} to it")
            out[purpose] = str(data[purpose])
        if auth.uses_tls and "ca" in data:
            out["ca"] = str(data["ca"])
        return out

    def resolve(self, role: str, auth: AuthConfig) -> dict[str, str]:
        """Every secret of one side by purpose (username, password, certificate_chain, private_key, ca): the exported
        operator principal's when there is one (:func:`operator_secrets`, any flow kind), else the flow's own."""
        op = operator_secrets(role, auth, self.environ)
        if op is not None:
            out = dict(op)
            ca = self._ca(role, auth)
            if ca is not None:
                out["ca"] = ca
            return out
        if auth.secrets_from == "file":
            return self.from_file(role, auth)
        out = {purpose: self.value(role, ref) for purpose, ref in secret_refs(role, auth).items()}
        if "ca" not in out and auth.uses_tls and self.environ.get(ca_env(role)):
            out["ca"] = self.environ[ca_env(role)]
        return out

    def _ca(self, role: str, auth: AuthConfig) -> str | None:
        """The flow's CA of a side (beside an operator principal): its secrets file, its CA secret or variable."""
        if not auth.uses_tls:
            return None
        if auth.secrets_from == "file":
            try:
                data = json.loads(Path(str(auth.secrets_file)).read_text())
            except (OSError, ValueError) as exc:
                raise UsageError(f"{role}.auth.secrets_file", f"cannot read {auth.secrets_file}: {exc}",
                                 "point it at the JSON secrets file (e.g. start the local environment again)") from None
            return str(data["ca"]) if "ca" in data else None
        ref = secret_refs(role, auth).get("ca")
        if ref is not None:
            return self.value(role, ref)
        return self.environ.get(ca_env(role)) or None

    def check_tls_material(self, role: str, auth: AuthConfig, secrets: dict[str, str]) -> None:
        """The PEM a librdkafka client will load, checked first: garbage is one line naming the variable
        (or the secret's key) and the fix, exit 2 -- not librdkafka's KafkaException at client start."""
        refs = secret_refs(role, auth)
        for purpose in ("certificate_chain", "private_key", "ca"):
            if purpose not in secrets:
                continue
            ref = refs.get(purpose)
            if purpose in OPERATOR_PURPOSES.get(auth.mode, ()) and self.environ.get(operator_env_name(role, purpose)):
                where = operator_env_name(role, purpose)
            elif auth.secrets_from == "file":
                where = f"{auth.secrets_file} key {purpose!r}"
            elif ref is None:
                where = ca_env(role)
            elif self.environ.get(ref.env):
                where = ref.env
            else:
                where = f"{ref.secret_arn} key {ref.json_key!r}"
            check_pem(purpose, secrets[purpose], where)


def check_pem(purpose: str, value: str, where: str) -> None:
    """PEM material a TLS client will load: certificates (chain, CA) or an unencrypted private key.
    Garbage is bad input (exit 2, naming the variable or secret key) before any client starts."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    what = "an unencrypted PEM private key" if purpose == "private_key" else "PEM certificate(s)"
    try:
        if purpose == "private_key":
            load_pem_private_key(value.encode(), password=None)
        elif not x509.load_pem_x509_certificates(value.encode()):
            raise ValueError("no certificate")
    except Exception:
        raise UsageError(where, f"is not {what}",
                         f"put the {'key' if purpose == 'private_key' else 'certificate'} PEM "
                         "(-----BEGIN ...----- block) there") from None
