"""Which schema ids the compared records carry: the Confluent wire format and a per-topic tally.

Wire format (Confluent, also written by Apicurio's, Karapace's and Redpanda's Confluent-compatible
serializers): byte 0 is the magic byte ``0x00``, bytes 1–4 the schema id as a big-endian unsigned
integer, then the payload (Avro binary; Protobuf message indexes then the message; JSON text). Only a
record's **value** is read; keys are compared as bytes only.

Other formats are not decoded, and never failed for being other formats: a value that does not start
with ``0x00`` or is shorter than five bytes counts as "not schema'd" and is compared as bytes, like
every record. Apicurio's own default format (magic byte, then an 8-byte global id) starts with the same
magic byte and cannot be told apart from the Confluent format by its bytes: it is not supported (its
first four id bytes would read as id 0 for any id below 2^32, which no registry assigns).

A topic is **schema'd** when at least half of its non-null values in the window are in the wire format.
Below that, values starting with ``0x00`` are taken to be raw data that happens to start with a zero byte
(random bytes do so once in 256): their ids are still resolved when registries are given, but an id
neither registry knows is not held against the topic (see :mod:`.schema_proof`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAGIC = 0
#: Magic byte + 4-byte id.
HEADER_BYTES = 5
#: A topic is schema'd when wire-format values are at least this share of its non-null values.
SCHEMAD_SHARE = 0.5


def wire_id(value: bytes | None) -> int | None:
    """The schema id of a Confluent wire-format value; None for a tombstone or any other format."""
    if value is None or len(value) < HEADER_BYTES or value[0] != MAGIC:
        return None
    return int.from_bytes(value[1:HEADER_BYTES], "big")


def count_ids(counts: dict[bytes, int], value: bytes | None) -> None:
    """Add one value to ``counts`` (raw id bytes -> records): the per-record step of the read loops,
    kept to a slice and a dict update (ids are converted once, in :func:`ids_of`)."""
    if value is not None and len(value) >= HEADER_BYTES and value[0] == MAGIC:
        k = value[1:HEADER_BYTES]
        counts[k] = counts.get(k, 0) + 1


def ids_of(counts: Mapping[bytes, int]) -> dict[int, int]:
    """Raw id bytes -> records, as schema id -> records."""
    out: dict[int, int] = {}
    for k, n in counts.items():
        i = int.from_bytes(k, "big")
        out[i] = out.get(i, 0) + n
    return out


@dataclass
class IdTally:
    """One side of one topic: non-null values compared, and how many carried each schema id."""

    values: int = 0
    ids: dict[int, int] = field(default_factory=dict)

    @property
    def wire_format(self) -> int:
        """Values in the Confluent wire format."""
        return sum(self.ids.values())

    @property
    def not_schemad(self) -> int:
        return self.values - self.wire_format

    def add(self, values: int, ids: Mapping[int, int]) -> None:
        self.values += values
        for i, n in ids.items():
            self.ids[i] = self.ids.get(i, 0) + n

    def to_dict(self) -> dict[str, Any]:
        return {"values": self.values, "wire_format": self.wire_format, "not_schemad": self.not_schemad}


@dataclass
class TopicIds:
    """Both sides of one topic."""

    source: IdTally = field(default_factory=IdTally)
    target: IdTally = field(default_factory=IdTally)

    @property
    def ids(self) -> list[int]:
        """Every id seen on either side, ascending."""
        return sorted(set(self.source.ids) | set(self.target.ids))

    @property
    def schemad(self) -> bool:
        """At least half of the non-null values (of the side with more of them) are in the wire format."""
        side = max((self.source, self.target), key=lambda t: t.values)
        return side.wire_format > 0 and side.wire_format >= SCHEMAD_SHARE * side.values


def tally(rows: Iterable[tuple[str, str, int, Mapping[int, int]]]) -> dict[str, TopicIds]:
    """``(side, topic, non-null values, {id: records})`` rows (one per partition read) as per-topic tallies."""
    out: dict[str, TopicIds] = {}
    for side, topic, values, ids in rows:
        getattr(out.setdefault(topic, TopicIds()), side).add(values, ids)
    return out
