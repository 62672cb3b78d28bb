"""Which schema ids the compared records carry: the Confluent wire format and a per-topic tally.

Wire format (Confluent, also written by Apicurio's, Karapace's and Redpanda's Confluent-compatible
serializers): byte 0 is the magic byte ``0x00``, bytes 1–4 the schema id as a big-endian unsigned
integer, then the payload (Avro binary; Protobuf message indexes then the message; JSON text). Both
parts of a record are read: the **key** and the **value** (a serializer is configured per part, so each
part is tallied apart: :class:`PartIds`).

Other formats are not decoded, and never failed for being other formats: bytes that do not start
with ``0x00`` or are shorter than five bytes count as "not schema'd" and are compared as bytes, like
every record. Id 0, which no registry assigns, is read only from bytes long enough for Apicurio's own
format (:data:`WIDE_BYTES`: magic byte, then an 8-byte big-endian global id, then the payload); shorter bytes
with id 0 (a big-endian long below 2^32, the commonest raw key) are not schema'd. A schema'd part whose ids
all read as 0 is **Apicurio's 8-byte format** (:attr:`PartIds.apicurio_global_ids`: every global id below
2^32 has four zero bytes first): recognised and refused by name (:mod:`.schema_proof`), not resolved.

A part of a topic is **schema'd** when at least half of its non-null bytes in the window are in the wire
format; a topic is schema'd when its keys or its values are. Below that, bytes starting with ``0x00`` are
taken to be raw data that happens to start with a zero byte (random bytes do so once in 256; a big-endian
long key below 2^56 always does): their ids are still resolved when registries are given, but an id
neither registry knows is not held against the topic (see :mod:`.schema_proof`).

**Protobuf**: the Confluent serializers put the message-index array (which message of the ``.proto`` file the
payload is; :func:`msk_migrate.schemas.protobuf.read_message_indexes`) between the id and the payload. The read
loops cannot tell a Protobuf id from an Avro one (the registry says, later), so each counted key or value is
keyed by its id **and** the bytes after it that read as such an array (:func:`msk_migrate.schemas.protobuf.prefix_length`,
bounded: at most :data:`~msk_migrate.schemas.protobuf.MAX_DEPTH` indexes of two bytes); the tally keeps, per id,
records per prefix (:attr:`IdTally.prefixes`). For an id that resolves to PROTOBUF the proof reads them
(:mod:`.schema_proof`); for any other the breakdown is payload bytes and is ignored. Bounded memory: once a read
task's counts hold :data:`MAX_KEYS` keys, further new prefixes are counted as :data:`NOT_READ` (never dropped).

Invariant: ``TopicIds.source``/``.target`` are the **value** tallies (the report's existing fields);
``TopicIds.key`` holds the keys'; ``TopicIds.ids`` is every id of either part.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..schemas.protobuf import prefix_length

MAGIC = 0
#: The two parts of a record a serializer writes, each with its own subject.
PARTS = ("key", "value")
#: Magic byte + 4-byte id.
HEADER_BYTES = 5
#: Magic byte + Apicurio's 8-byte global id.
WIDE_BYTES = 9
#: The first four id bytes of every Apicurio global id below 2^32, and a Confluent id no registry assigns.
ZERO_ID = b"\x00\x00\x00\x00"
#: A topic is schema'd when wire-format values are at least this share of its non-null values.
SCHEMAD_SHARE = 0.5
#: Keys (id + prefix) one read task's counts hold before new prefixes are counted as :data:`NOT_READ`.
MAX_KEYS = 4096
#: The prefix of records counted past :data:`MAX_KEYS` (0xFF never ends a varint: no array reads as it).
NOT_READ = b"\xff"
#: The prefix of records whose bytes after the id are no message-index array (Avro/JSON payload, truncated).
NO_PREFIX = b""


def wire_id(value: bytes | None) -> int | None:
    """The schema id of a Confluent wire-format key or value; None for a null or any other format."""
    if value is None or len(value) < HEADER_BYTES or value[0] != MAGIC:
        return None
    if len(value) < WIDE_BYTES and value[1:HEADER_BYTES] == ZERO_ID:
        return None
    return int.from_bytes(value[1:HEADER_BYTES], "big")


def count_ids(counts: dict[bytes, int], value: bytes | None) -> None:
    """Add one key or value to ``counts`` (raw id bytes + the message-index prefix after them -> records): the
    per-record step of the read loops, kept to slices and a dict update (ids and prefixes are converted once,
    in :func:`ids_of`)."""
    if (value is not None and len(value) >= HEADER_BYTES and value[0] == MAGIC
            and (value[1:HEADER_BYTES] != ZERO_ID or len(value) >= WIDE_BYTES)):
        k = value[1:HEADER_BYTES + prefix_length(value)]
        n = counts.get(k)
        if n is None and len(counts) >= MAX_KEYS:
            k = value[1:HEADER_BYTES] + NOT_READ
            n = counts.get(k)
        counts[k] = (n or 0) + 1


class IdCounts(dict[int, int]):
    """Schema id -> records, and per id records per message-index prefix (raw bytes after the id:
    :data:`NO_PREFIX`, an array's bytes, or :data:`NOT_READ`)."""

    def __init__(self) -> None:
        super().__init__()
        self.prefixes: dict[int, dict[bytes, int]] = {}

    def add(self, schema_id: int, prefix: bytes, n: int) -> None:
        self[schema_id] = self.get(schema_id, 0) + n
        by = self.prefixes.setdefault(schema_id, {})
        by[prefix] = by.get(prefix, 0) + n


def ids_of(counts: Mapping[bytes, int]) -> IdCounts:
    """Raw id bytes (+ prefix) -> records, as schema id -> records with the prefixes beside (:class:`IdCounts`)."""
    out = IdCounts()
    for k, n in counts.items():
        out.add(int.from_bytes(k[:4], "big"), bytes(k[4:]), n)
    return out


@dataclass
class IdTally:
    """One side of one topic: non-null values compared, and how many carried each schema id."""

    values: int = 0
    ids: dict[int, int] = field(default_factory=dict)
    #: Per id, records per message-index prefix (raw bytes after the id; see :class:`IdCounts`). An id counted
    #: from a mapping without prefixes has none here: its prefixes were not read.
    prefixes: dict[int, dict[bytes, int]] = field(default_factory=dict)

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
        for i, by in (getattr(ids, "prefixes", None) or {}).items():
            mine = self.prefixes.setdefault(i, {})
            for p, n in by.items():
                mine[p] = mine.get(p, 0) + n

    def to_dict(self) -> dict[str, Any]:
        return {"values": self.values, "wire_format": self.wire_format, "not_schemad": self.not_schemad}


@dataclass
class PartIds:
    """One part (key or value) of one topic, both sides."""

    source: IdTally = field(default_factory=IdTally)
    target: IdTally = field(default_factory=IdTally)

    @property
    def ids(self) -> list[int]:
        """Every id seen on either side, ascending."""
        return sorted(set(self.source.ids) | set(self.target.ids))

    @property
    def schemad(self) -> bool:
        """At least half of the non-null bytes (of the side with more of them) are in the wire format."""
        side = max((self.source, self.target), key=lambda t: t.values)
        return side.wire_format > 0 and side.wire_format >= SCHEMAD_SHARE * side.values

    @property
    def apicurio_global_ids(self) -> bool:
        """Schema'd, and every id reads as 0: Apicurio's 8-byte global-id format (see the module's docstring)."""
        return self.schemad and self.ids == [0]

    def records(self, schema_id: int) -> dict[str, int]:
        return {"source": self.source.ids.get(schema_id, 0), "target": self.target.ids.get(schema_id, 0)}


@dataclass
class TopicIds(PartIds):
    """Both parts of one topic: the values' tallies are ``source``/``target`` (as before keys were read),
    the keys' are ``key``."""

    key: PartIds = field(default_factory=PartIds)

    @property
    def value(self) -> PartIds:
        """The values' part (the same tallies as ``source``/``target``)."""
        return PartIds(self.source, self.target)

    def part(self, name: str) -> PartIds:
        return self.key if name == "key" else self.value

    @property
    def ids(self) -> list[int]:
        """Every id seen in either part on either side, ascending."""
        return sorted(set(self.value.ids) | set(self.key.ids))

    @property
    def schemad(self) -> bool:
        """The values or the keys are schema'd."""
        return self.value.schemad or self.key.schemad

    def parts_of(self, schema_id: int) -> list[str]:
        """The parts whose bytes carry ``schema_id``."""
        return [p for p in PARTS if schema_id in self.part(p).source.ids or schema_id in self.part(p).target.ids]


def tally(rows: Iterable[tuple[Any, ...]]) -> dict[str, TopicIds]:
    """``(side, topic, non-null values, {id: records})`` rows (one per partition read), or the same with a
    fifth field, the part (``"key"``; four fields are values), as per-topic tallies."""
    out: dict[str, TopicIds] = {}
    for row in rows:
        side, topic, values, ids = row[:4]
        part = row[4] if len(row) > 4 else "value"
        getattr(out.setdefault(topic, TopicIds()).part(part), side).add(values, ids)
    return out
