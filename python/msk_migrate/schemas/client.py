"""HTTP to one schema registry's Confluent API (and, for an Apicurio target, its own v3 API beside it).

Every failure a user can fix is one :class:`~msk_migrate.errors.UsageError` naming the option of that
registry: unreachable, credentials refused (401/403), not a schema registry (no JSON where the API answers).
Credentials come from the environment (``MSK_MIGRATE_<ROLE>_REGISTRY_USER`` / ``..._PASSWORD``) or a Secrets
Manager secret (JSON ``username``/``password``: ``--<role>-registry-secret-arn``), never from the URL (a URL
with ``user:pass@`` is refused).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests

from ..access.secrets import username_password
from ..errors import UsageError
from .tls import RegistryTls, env_tls

__all__ = ["RegistryTls", "env_tls"]  # the validator's proof imports them from .tls (no requests there)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
#: The suffix of Apicurio's Confluent API; the registry's root (for /apis/registry/v3) is what precedes it.
CCOMPAT_SUFFIX = "/apis/ccompat/v7"


def check_registry_url(value: str, option: str = "--source-registry") -> str:
    """``value`` as a registry URL: http(s)://host[:port][/path], no credentials, no trailing slash; never AWS
    Glue Schema Registry, which cannot keep the records' ids (:mod:`.glue`)."""
    from .glue import NOTE, is_glue

    if is_glue(value):
        raise UsageError(option, "names AWS Glue Schema Registry", NOTE)
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(option, f"{value!r} is not an http(s) URL",
                         "give the registry's Confluent API URL with its scheme, e.g. https://registry.example:8081")
    if parts.username or parts.password:
        raise UsageError(option, "the URL carries credentials",
                         "drop user:password@ and set them in the environment or a Secrets Manager secret")
    return value.strip().rstrip("/")


def env_credentials(role: str) -> tuple[str, str] | None:
    """Basic-auth credentials of ``role``'s registry from MSK_MIGRATE_<ROLE>_REGISTRY_USER / _PASSWORD."""
    user_env, password_env = f"MSK_MIGRATE_{role.upper()}_REGISTRY_USER", f"MSK_MIGRATE_{role.upper()}_REGISTRY_PASSWORD"
    user, password = os.environ.get(user_env), os.environ.get(password_env)
    if bool(user) != bool(password):
        raise UsageError(user_env if not user else password_env, "is not set while its pair is", f"export both {user_env} and {password_env}")
    return (str(user), str(password)) if user and password else None


def secret_credentials(arn: str, option: str) -> tuple[str, str]:
    """Basic-auth credentials from a Secrets Manager secret with JSON keys ``username`` and ``password``."""
    return username_password(arn, option, "grant secretsmanager:GetSecretValue on it, or export the registry's _USER and "
                             "_PASSWORD variables", "registry credentials")


def credentials(role: str, secret_arn: str | None, option: str) -> tuple[str, str] | None:
    """``role``'s registry credentials: the environment's, else the secret's, else none."""
    return env_credentials(role) or (secret_credentials(secret_arn, option) if secret_arn else None)


class NotFound(Exception):
    """The registry answered 404 (a subject, version, id or setting that is not there)."""


@dataclass
class RegistryClient:
    """The Confluent API of one registry. ``role`` names it in messages; ``option`` is the CLI option whose
    value ``url`` is. ``auth``: basic credentials; ``cert``: client certificate (mTLS); ``verify``: CA bundle."""

    role: str
    url: str
    option: str
    auth: tuple[str, str] | None = None
    cert: tuple[str, str] | None = None
    verify: str | bool = True
    timeout: float = 15.0

    def __post_init__(self) -> None:
        self.session = requests.Session()
        self.session.auth = self.auth
        self.session.cert = self.cert
        self.session.verify = self.verify

    @property
    def root(self) -> str:
        """The server's root: the URL without Apicurio's ``/apis/ccompat/v7``."""
        return self.url[: -len(CCOMPAT_SUFFIX)] if self.url.endswith(CCOMPAT_SUFFIX) else self.url

    def request(self, method: str, path: str, body: Any = None, *, absolute: bool = False, raw: bytes | None = None,
                content_type: str = CONTENT_TYPE, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """JSON of ``method path`` (None when empty). 404 -> :class:`NotFound`; other 4xx/5xx -> RuntimeError
        with the server's message; unreachable or 401/403 -> UsageError naming :attr:`option`; no answer in
        time -> RuntimeError (the request may have been applied: the caller reads back)."""
        url = path if absolute else self.url + path
        data = raw if raw is not None else (None if body is None else json.dumps(body))
        try:
            # verify and cert per request: requests lets REQUESTS_CA_BUNDLE override a session's verify
            resp = self.session.request(method, url, data=data, params=params, timeout=timeout or self.timeout,
                                        headers={"Content-Type": content_type, "Accept": "application/json"},
                                        verify=self.verify, cert=self.cert)
        except requests.exceptions.SSLError as exc:
            raise UsageError(self.option, f"TLS to the {self.role} registry {self.url} failed ({type(exc).__name__})",
                             "give its CA bundle or the right https URL") from None
        except requests.exceptions.ReadTimeout:
            raise RuntimeError(f"the {self.role} registry {self.url} did not answer {method} {path} within "
                               f"{timeout or self.timeout:.0f} s") from None
        except requests.exceptions.RequestException as exc:
            reason = type(exc).__name__
            raise UsageError(self.option, f"the {self.role} registry {self.url} is unreachable ({reason})",
                             "check the URL and that the registry runs and is reachable from here") from None
        if resp.status_code in (401, 403):
            env = f"MSK_MIGRATE_{self.role.upper()}_REGISTRY_USER/_PASSWORD"
            raise UsageError(self.option, f"the {self.role} registry refused the credentials (HTTP {resp.status_code})",
                             f"set {env} (or the registry's secret) to a user allowed to read{' and write' if self.role == 'target' else ''} schemas")
        if resp.status_code == 404:
            raise NotFound(f"{method} {url}: {resp.text[:200]}")
        if resp.status_code >= 400:
            raise RuntimeError(f"{self.role} registry: {method} {url} answered HTTP {resp.status_code}: {resp.text[:300]}")
        if not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            raise UsageError(self.option, f"{self.url} did not answer with JSON (is it a schema registry's Confluent API?)",
                             "give the Confluent-compatible API URL (Apicurio: .../apis/ccompat/v7)") from None

    def get(self, path: str, **kw: Any) -> Any:
        return self.request("GET", path, **kw)

    def get_or_none(self, path: str, **kw: Any) -> Any:
        try:
            return self.get(path, **kw)
        except NotFound:
            return None
