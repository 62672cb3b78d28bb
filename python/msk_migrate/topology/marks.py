"""Copy marks: the record header a flow adds to every record it copies, and the filter that keeps a flow from
copying back what the opposite flow brought in. The one place the header names and the transform settings live.

A flow ``S -> T`` with marks on (``migration.mark_copies``) renders two Connect transforms on its
MirrorSourceConnector, in this order:

1. ``skipFromTarget``: Kafka's ``Filter`` with the ``HasHeaderKey`` predicate on ``copied-from.<T>``: a record
   that reached S by a copy *from T* is never copied back to T (path-vector loop prevention: a record is refused
   by the cluster it already passed through, whatever its topic name).
2. ``markSource``: adds ``msk-migrate.copied-from.<S>`` (value: the alias S, UTF-8) after the record's own headers.

Invariants: a record written by a producer carries no mark; a record copied once carries exactly one mark (the
cluster it was copied from); a record forwarded A -> B -> C carries the marks in path order
(``copied-from.A``, ``copied-from.B``). :func:`origins` reads that path back. The validator accounts for these
headers and nothing else (docs/active-active.md).
"""

from __future__ import annotations

from collections.abc import Iterable

#: Every mark's header key starts with this; the rest is the cluster alias the record was copied from.
MARK_PREFIX = "msk-migrate.copied-from."

#: Our transform that adds a header whose value is *bytes* (Kafka's InsertHeader adds a STRING header, which the
#: ByteArrayConverter every MM2 flow uses for headers refuses: jvm/connect-extensions, io.mskmigrate.connect.marks).
INSERT_MARK_CLASS = "io.mskmigrate.connect.marks.InsertBytesHeader"
FILTER_CLASS = "org.apache.kafka.connect.transforms.Filter"
HAS_HEADER_KEY_CLASS = "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"

#: Names of the transforms and the predicate in the connector config (``transforms.<name>.*``).
SKIP_TRANSFORM = "skipFromTarget"
MARK_TRANSFORM = "markSource"
COPIED_FROM_TARGET_PREDICATE = "copiedFromTarget"


def mark_header(alias: str) -> str:
    """The header a flow whose *source* cluster is ``alias`` adds to each record it copies."""
    return f"{MARK_PREFIX}{alias}"


def mark_transforms(source_alias: str, target_alias: str) -> dict[str, str]:
    """The MirrorSourceConnector settings of the flow ``source_alias -> target_alias`` with marks on.

    The filter runs first: a record marked as copied from the target is dropped before it is marked again.
    ``source_alias == target_alias`` is a configuration error upstream (MM2 refuses it); not checked here.
    """
    return {
        "transforms": f"{SKIP_TRANSFORM},{MARK_TRANSFORM}",
        f"transforms.{SKIP_TRANSFORM}.type": FILTER_CLASS,
        f"transforms.{SKIP_TRANSFORM}.predicate": COPIED_FROM_TARGET_PREDICATE,
        f"transforms.{MARK_TRANSFORM}.type": INSERT_MARK_CLASS,
        f"transforms.{MARK_TRANSFORM}.header": mark_header(source_alias),
        f"transforms.{MARK_TRANSFORM}.value.literal": source_alias,
        "predicates": COPIED_FROM_TARGET_PREDICATE,
        f"predicates.{COPIED_FROM_TARGET_PREDICATE}.type": HAS_HEADER_KEY_CLASS,
        f"predicates.{COPIED_FROM_TARGET_PREDICATE}.name": mark_header(target_alias),
    }


def marked(config: dict[str, str]) -> bool:
    """True when a MirrorSourceConnector ``config`` carries the copy marks of its own flow (skips what its target
    copied in, marks with its source alias): two such connectors in opposite directions cannot loop a record, so the
    apply-time loop guard lets them replicate the same topic (active/active)."""
    src, tgt = config.get("source.cluster.alias"), config.get("target.cluster.alias")
    if not src or not tgt:
        return False
    return all(config.get(k) == v for k, v in mark_transforms(src, tgt).items())


def origins(headers: Iterable[tuple[str, bytes | None]] | None) -> tuple[str, ...]:
    """The clusters a record was copied from, in path order (first: the cluster its producer wrote to), read
    from its headers; ``()`` for a record its producer wrote here. Headers that are not marks are ignored.

    Read from the header *keys* (the value repeats the alias for humans and is not trusted). A repeated alias
    is kept: it would mean the record looped, which the caller is the one to report.
    """
    return tuple(key[len(MARK_PREFIX):] for key, _ in (headers or ()) if key.startswith(MARK_PREFIX))


def is_mark(key: str) -> bool:
    """True when the header ``key`` is a copy mark (the only header a flow adds to a record)."""
    return key.startswith(MARK_PREFIX)
