"""Per-partition checksum aggregates, whichever engine computed them (:mod:`.checksum` in Spark,
:mod:`.native` with confluent-kafka): the :class:`Digest`, how the order digest of a partition is
folded from its chunks, and what a checksum mismatch means in words. No pyspark import here.

See :mod:`.checksum` for the definitions (Σ fp mod 2^64; order digest Σ fp_i · i mod 2^61 - 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

COMPONENTS = ("fp", "h_key", "h_value", "h_headers", "h_headers_sorted", "h_ts")
MASK64 = (1 << 64) - 1
ORDER_PRIME = (1 << 61) - 1


@dataclass
class Digest:
    """Checksum aggregates of one partition on one cluster."""

    count: int = 0
    min_ts: int | None = None
    max_ts: int | None = None
    null_keys: int = 0
    tombstones: int = 0
    sums: dict[str, int] = field(default_factory=lambda: {c: 0 for c in COMPONENTS})
    order: int = 0  #: order digest, mod ORDER_PRIME
    #: copy marks counted by either pass (:mod:`.copy_marks`; the same keys in both engines): stripped,
    #: missing_or_wrong (target side), origin_target (source side), natives (two-origin); None when marks are off
    marks: dict[str, int] | None = None

    @property
    def fingerprint(self) -> str:
        return f"{self.sums['fp']:016x}"

    @property
    def order_fingerprint(self) -> str:
        return f"{self.order:016x}"

    def same_records(self, other: Digest) -> bool:
        return self.count == other.count and self.sums["fp"] == other.sums["fp"]

    def same_order(self, other: Digest) -> bool:
        return self.order == other.order


@dataclass
class _Chunk:
    """One Spark task's aggregates of one partition (exact integers, before folding)."""

    first_offset: int
    count: int
    fp_sum: int  #: exact Σ fp (unsigned)
    fp_idx_sum: int  #: exact Σ fp · idx


def fold_order(chunks: list[_Chunk]) -> int:
    """The order digest of a partition from its tasks' chunks (joined in offset order)."""
    base = 0
    total = 0
    for c in sorted(chunks, key=lambda c: c.first_offset):
        total += base * c.fp_sum + c.fp_idx_sum
        base += c.count
    return total % ORDER_PRIME


def explain_checksum(src: Digest, tgt: Digest, order_checked: bool = True) -> list[str]:
    """Human explanation of a checksum mismatch from the component sums and the order digest."""
    if src.count != tgt.count:
        delta = tgt.count - src.count
        word = "more" if delta > 0 else "fewer"
        return [f"target has {abs(delta)} {word} record(s) than the source ({tgt.count} vs {src.count})"]
    out = []
    if src.sums["h_key"] != tgt.sums["h_key"]:
        out.append("keys differ")
    if src.sums["h_value"] != tgt.sums["h_value"]:
        out.append("values differ" + (" (tombstone count differs)" if src.tombstones != tgt.tombstones else ""))
    if src.sums["h_headers_sorted"] != tgt.sums["h_headers_sorted"]:
        out.append("headers differ")
    elif src.sums["h_headers"] != tgt.sums["h_headers"]:
        out.append("header order differs (same headers, different order)")
    if src.sums["h_ts"] != tgt.sums["h_ts"]:
        out.append("timestamps differ")
    if not out and src.sums["fp"] != tgt.sums["fp"]:
        out.append("same records by field, differently combined (records were changed in several fields)")
    if not out and order_checked and not src.same_order(tgt):
        out.append(
            "records reordered: the same records in a different order within the partition "
            "(--mode auto or full shows where)"
        )
    return out
