"""AWS Glue Schema Registry as a migration's registry: what it means, said before anything moves.

Glue's registry is not id-compatible with the Confluent wire format: it names a schema version by a UUID and
its serializers write their own header (a header-version byte 3, a compression byte, the 16-byte UUID), so the
4-byte ids in every record MirrorMaker 2 copied cannot be found there, and a Confluent deserializer on the target
pointed at Glue cannot decode them. Nothing here renumbers records; the fix is a Confluent-compatible registry on
the target (Confluent Schema Registry, Karapace, Apicurio's ccompat API) that ``schemas copy`` fills with the same
ids, or re-serializing every record (a different migration)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_GLUE_HOST = re.compile(r"(^|\.)glue(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$")

NOTE = ("AWS Glue Schema Registry cannot keep the schema ids the records carry: it names schema versions by UUID and "
        "its serializers write their own header, so Confluent-format records copied by MirrorMaker 2 cannot be decoded "
        "against it; use a Confluent-compatible registry on the target (Confluent Schema Registry, Karapace, Apicurio) "
        "and `msk-migrate schemas copy` (docs/schemas.md)")


def is_glue(url: str) -> bool:
    """Whether ``url`` names AWS Glue Schema Registry (its endpoint, or a ``glue:`` / ARN reference)."""
    value = url.strip()
    if value.startswith(("glue:", "arn:aws:glue:", "arn:aws-cn:glue:", "arn:aws-us-gov:glue:")):
        return True
    return bool(_GLUE_HOST.search(urlsplit(value).hostname or ""))
