"""A registry's TLS settings from the environment: standard library only (the Spark job's schema proof reads them too)."""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class RegistryTls:
    """``role``'s registry TLS from MSK_MIGRATE_<ROLE>_REGISTRY_CERT / _KEY (PEM files of a client certificate
    chain and its unencrypted key: mutual TLS) and _CA (a PEM bundle of the registry's CA). Both clients of a
    registry use it: ``schemas`` (requests) and the validator's proof per record (:meth:`ssl_context`)."""

    cert: tuple[str, str] | None = None
    ca: str | None = None

    @property
    def verify(self) -> str | bool:
        return self.ca or True

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.ca)
        if self.cert:
            ctx.load_cert_chain(*self.cert)
        return ctx


def env_tls(role: str) -> RegistryTls:
    """:class:`RegistryTls` of ``role`` from the environment; a named file that is missing is one line naming it."""
    names = {k: f"MSK_MIGRATE_{role.upper()}_REGISTRY_{k}" for k in ("CERT", "KEY", "CA")}
    got = {k: os.environ.get(v) or None for k, v in names.items()}
    if bool(got["CERT"]) != bool(got["KEY"]):
        missing = names["KEY"] if got["CERT"] else names["CERT"]
        raise UsageError(missing, "is not set while its pair is", f"export both {names['CERT']} and {names['KEY']} (PEM files)")
    for k, path in got.items():
        if path and not os.path.isfile(path):
            raise UsageError(names[k], f"{path} is not a readable file", "give the path of a PEM file")
    cert = (str(got["CERT"]), str(got["KEY"])) if got["CERT"] else None
    return RegistryTls(cert, got["CA"])
