"""The throwaway CA of one local environment: made at ``local up``, kept 0600 under the environment's
directory, never committed. It signs each broker's server certificate (SAN 127.0.0.1/localhost) and the
client certificate of the harness admin, which talks to a secured cluster over its mTLS listener."""

from __future__ import annotations

import datetime as dt
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: Subject CN of every broker certificate (its principal on the mTLS listeners is ``User:CN=<this>``).
BROKER_CN = "localhost"
#: Subject CN of the harness admin's client certificate (a super user of the secured clusters).
ADMIN_CN = "msk-migrate-harness"


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of one local environment's PKI."""

    ca: Path  #: the CA certificate (trust store)
    broker_keystore: Path  #: broker key + certificate chain, PKCS#12 (Kafka 2.8 takes no unencrypted PEM key)
    broker_keystore_password: Path  #: its password (0600; the brokers' server.properties are 0600 too)
    admin_cert: Path  #: harness admin client certificate
    admin_key: Path  #: its key (unencrypted PKCS#8, 0600)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def ensure_pki(directory: Path, days: int = 30) -> TlsFiles:
    """Create the CA, the broker and the admin certificates once under ``directory``; reuse them after."""
    files = TlsFiles(directory / "ca.pem", directory / "broker-keystore.p12", directory / "broker-keystore.password",
                     directory / "admin-cert.pem", directory / "admin-key.pem")
    if all(p.exists() for p in (files.ca, files.broker_keystore, files.broker_keystore_password, files.admin_cert,
                                files.admin_key)):
        return files
    directory.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("msk-migrate local CA")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + dt.timedelta(days=days))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    ca_pem = ca.public_bytes(serialization.Encoding.PEM).decode()

    def issue(cn: str, server: bool) -> tuple[str, str, ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(ca_name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                   .not_valid_after(now + dt.timedelta(days=days))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage(
                       [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH] if server
                       else [ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
        return key_pem, cert.public_bytes(serialization.Encoding.PEM).decode(), key, cert

    _bk, _bc, broker_key, broker_cert = issue(BROKER_CN, server=True)
    admin_key, admin_cert, _ak, _ac = issue(ADMIN_CN, server=False)
    password = secrets.token_urlsafe(18)
    _write(files.ca, ca_pem)
    files.broker_keystore.write_bytes(pkcs12.serialize_key_and_certificates(
        b"broker", broker_key, broker_cert, [ca], serialization.BestAvailableEncryption(password.encode())))
    files.broker_keystore.chmod(0o600)
    _write(files.broker_keystore_password, password)
    _write(files.admin_cert, admin_cert)
    _write(files.admin_key, admin_key)
    return files
