"""SCRAM users of a secured local cluster and where their passwords live.

Passwords are generated per environment and kept in ``<env>/<role>/scram-users.json`` (0600); nothing else
holds them (not a command line, not state.json). The harness admin creates the users through the
AlterUserScramCredentials API (KIP-554, Kafka >= 2.7) over the brokers' mTLS listener, on ZooKeeper and
KRaft alike.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

#: The harness admin's SCRAM user (a super user: the demo applications' producers and consumers).
ADMIN_USER = "msk-admin"
#: MirrorMaker 2's user: granted only :mod:`msk_migrate.kafka.mm2_acls`.
MM2_USER = "mm2"
ITERATIONS = 4096


def scram_users(directory: Path) -> dict[str, str]:
    """user -> password of this cluster, generated on first use."""
    path = directory / "scram-users.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    directory.mkdir(parents=True, exist_ok=True)
    users = {ADMIN_USER: secrets.token_urlsafe(24), MM2_USER: secrets.token_urlsafe(24)}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(users, fh)
    return users


def create_users(admin: AdminClient, users: dict[str, str], mechanism: str = "SCRAM-SHA-512") -> None:
    mech = ScramMechanism.SCRAM_SHA_512 if mechanism == "SCRAM-SHA-512" else ScramMechanism.SCRAM_SHA_256
    upserts = [UserScramCredentialUpsertion(u, ScramCredentialInfo(mech, ITERATIONS), p.encode())
               for u, p in users.items()]
    for user, fut in admin.alter_user_scram_credentials(upserts).items():
        try:
            fut.result(timeout=30)
        except KafkaException as exc:
            raise RuntimeError(f"creating SCRAM user {user} failed: {exc.args[0].str()}") from None
