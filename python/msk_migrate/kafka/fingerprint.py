"""One record's identity: the fingerprint the validator compares and offset translation aligns by.

Every record's ``fp`` is Spark's ``xxhash64`` chain of :mod:`msk_migrate.validation.fingerprint` (XXH64,
seed 42; a boolean hashes as the 4-byte int 1/0, an int as 4 bytes little-endian, a long as 8, a string
or binary as its bytes, an array or struct element by element, NULL leaves the running hash unchanged),
computed here in plain Python so the native checksum pass (:mod:`msk_migrate.validation.native`) and the
offset planner (:mod:`msk_migrate.offset_translation`) get the same number Spark does for the same record.

Invariants: this module is the one writer of the hash outside Spark; a NULL key (or value) and an empty
one hash differently; header order counts in ``fp`` (``h_headers_sorted`` is the order-free variant);
``ts_used`` is the record timestamp, or 0 where the other cluster stamps its own (LogAppendTime).
"""

from __future__ import annotations

import struct

import xxhash

SEED = 42

_h = xxhash.xxh64_intdigest
_int = struct.Struct("<i").pack
_long = struct.Struct("<q").pack
_TRUE, _FALSE = _int(1), _int(0)
#: xxhash64(flag IS NULL, field) for a NULL field, and the seed a present field is hashed with.
_NULL_FIELD = _h(_TRUE, SEED)
_PRESENT = _h(_FALSE, SEED)

Headers = list[tuple[str, bytes | None]]


def _headers_hash(headers: Headers | None, seed: int) -> int:
    """``xxhash64(size(headers), headers)`` chained from ``seed`` (no headers: size 0)."""
    if not headers:
        return _h(_FALSE, seed)
    s = _h(_int(len(headers)), seed)
    for hk, hv in headers:
        s = _h(hk.encode(), s)
        if hv is not None:
            s = _h(hv, s)
    return s


def _sorted_headers(headers: Headers) -> Headers:
    """Spark's ``array_sort`` of ``struct<key string, value binary>``: by key bytes, then value, NULL first."""
    return sorted(headers, key=lambda kv: (kv[0].encode(), kv[1] is not None, kv[1] or b""))


def fingerprint(key: bytes | None, value: bytes | None, headers: Headers | None, ts_used: int) -> int:
    """One record's ``fp`` (unsigned 64-bit), as :func:`msk_migrate.validation.fingerprint.fingerprinted` computes it in Spark."""
    s = _NULL_FIELD if key is None else _h(key, _PRESENT)
    s = _h(_TRUE, s) if value is None else _h(value, _h(_FALSE, s))
    return _h(_long(ts_used), _headers_hash(headers, s))


def key_hash(key: bytes) -> int:
    """``h_key`` of a present key: the unit a latest-per-key (compacted) topic is compared by."""
    return _h(key, _PRESENT)


def field_hashes(key: bytes | None, value: bytes | None, headers: Headers | None, ts_used: int) -> dict[str, int]:
    """The per-field hashes of the validator's ``detail`` (h_key, h_value, h_headers, h_headers_sorted, h_ts)."""
    return {
        "h_key": _NULL_FIELD if key is None else key_hash(key),
        "h_value": _NULL_FIELD if value is None else _h(value, _PRESENT),
        "h_headers": _headers_hash(headers, SEED),
        "h_headers_sorted": _headers_hash(_sorted_headers(headers) if headers else headers, SEED),
        "h_ts": _h(_long(ts_used), SEED),
    }
