"""Ask a broker which API versions it accepts: one ApiVersions v0 request (KIP-35) over a socket of our own,
because the Kafka client library answers version questions from whatever request happens to work (it
fakes DescribeCluster from Metadata on old brokers) and does not expose the list.

Kafka answers ApiVersions before authentication on every listener (a SASL client sends it before
SaslHandshake), so no credentials are used: plaintext, or TLS with the cluster's CA (and, where the listener
demands one, the client certificate -- that handshake is TLS's, not Kafka's). The request and response are
the v0 wire format every broker from 0.10.0 accepts: ``api_key=18, api_version=0, correlation_id,
client_id``; the answer is ``correlation_id, error_code, [api_key, min_version, max_version]``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import struct
import tempfile
from collections.abc import Iterator
from typing import Any

from ..kafka.releases import API_VERSIONS_KEY, ApiVersions

CLIENT_ID = b"msk-migrate-preflight"
CORRELATION_ID = 0x4D4D32  # any value: the answer must carry it back


class ApiVersionsError(Exception):
    """No broker of the bootstrap list answered ApiVersions (the text says what each one did)."""


def request_v0() -> bytes:
    """ApiVersions v0: size, then header (key, version, correlation id, client id); the body is empty."""
    body = struct.pack(">hhih", API_VERSIONS_KEY, 0, CORRELATION_ID, len(CLIENT_ID)) + CLIENT_ID
    return struct.pack(">i", len(body)) + body


def parse_v0(payload: bytes) -> tuple[int, ApiVersions]:
    """(error code, key -> (min, max)) of an ApiVersions v0 response without its size prefix."""
    correlation, error, count = struct.unpack_from(">ihi", payload, 0)
    if correlation != CORRELATION_ID:
        raise ApiVersionsError(f"answer to another request (correlation id {correlation})")
    if count < 0 or len(payload) < 10 + 6 * count:
        raise ApiVersionsError("truncated ApiVersions answer")
    out: ApiVersions = {}
    for i in range(count):
        key, low, high = struct.unpack_from(">hhh", payload, 10 + 6 * i)
        out[key] = (low, high)
    return error, out


@contextlib.contextmanager
def _tls_context(conf: dict[str, Any]) -> Iterator[ssl.SSLContext]:
    """The TLS settings of a librdkafka configuration as an :class:`ssl.SSLContext` (PEM given inline is
    loaded through a private temporary directory, removed at once)."""
    ctx = ssl.create_default_context()
    if conf.get("ssl.ca.pem"):
        ctx.load_verify_locations(cadata=conf["ssl.ca.pem"])
    elif conf.get("ssl.ca.location"):
        ctx.load_verify_locations(cafile=conf["ssl.ca.location"])
    if conf.get("ssl.endpoint.identification.algorithm", "https") == "none":
        ctx.check_hostname = False
    cert, key = conf.get("ssl.certificate.location"), conf.get("ssl.key.location")
    if conf.get("ssl.certificate.pem") and conf.get("ssl.key.pem"):
        with tempfile.TemporaryDirectory(prefix="msk-migrate-tls-") as d:
            cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
            for path, text in ((cert, conf["ssl.certificate.pem"]), (key, conf["ssl.key.pem"])):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as fh:
                    fh.write(text)
            ctx.load_cert_chain(cert, key)
    elif cert and key:
        ctx.load_cert_chain(cert, key)
    yield ctx


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ApiVersionsError("the broker closed the connection (Kafka < 0.10.0 does on ApiVersions)")
        data += chunk
    return data


def _ask(host: str, port: int, tls: ssl.SSLContext | None, timeout: float) -> ApiVersions:
    with socket.create_connection((host, port), timeout=timeout) as raw:
        sock = tls.wrap_socket(raw, server_hostname=host) if tls else raw
        with sock:
            sock.sendall(request_v0())
            (size,) = struct.unpack(">i", _read(sock, 4))
            error, versions = parse_v0(_read(sock, size))
    if error != 0 and not versions:
        raise ApiVersionsError(f"ApiVersions error code {error}")
    return versions


def api_versions(conf: dict[str, Any], timeout: float = 10.0) -> ApiVersions:
    """The API versions of the first broker of ``conf["bootstrap.servers"]`` that answers; ``conf`` is the
    librdkafka configuration of an admin session (only its bootstrap and TLS settings are used)."""
    tls = str(conf.get("security.protocol", "PLAINTEXT")).upper() in ("SSL", "SASL_SSL")
    errors = []
    with contextlib.ExitStack() as stack:
        ctx = stack.enter_context(_tls_context(conf)) if tls else None
        for server in str(conf.get("bootstrap.servers", "")).split(","):
            host, _, port = server.strip().rpartition(":")
            try:
                return _ask(host.strip("[]"), int(port), ctx, timeout)
            except (OSError, ValueError, ApiVersionsError, struct.error) as exc:
                errors.append(f"{server.strip()}: {exc}")
    raise ApiVersionsError("; ".join(errors) or "no bootstrap server")
