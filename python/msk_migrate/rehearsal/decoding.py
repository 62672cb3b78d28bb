"""How the rehearsal's decoders prove a record, one way for every format (:mod:`.schema_demo`, :mod:`.returns_demo`,
:mod:`.protobuf_demo`): a part's id must be one the registry maps to the subject its producer used
(:func:`subject_ids`, :func:`proven_id`), its bytes must decode with a registry-backed deserializer of
confluent-kafka (:func:`decode_record`, :class:`RegistryPart`), and for a topic whose keys are schema'd the key must
be one the demo producer writes and the value the one written under it (:class:`PairedDecoder`). Every failure is a
:class:`~.result.StepFailed` naming the record, the part and the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .result import StepFailed

#: (part bytes, where: the record and the part) -> the part decoded to a comparable dict; raises StepFailed naming where.
PartProof = Callable[[bytes | None, str], dict[str, Any]]


class Deserializer(Protocol):
    def __call__(self, data: bytes, ctx: Any) -> Any: ...


def first_line(exc: Exception) -> str:
    """``exc`` as one line: its type and the first line of its message."""
    text = str(exc)
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def decode_record(deserializer: Any, data: bytes, ctx: Any, where: str, how: str) -> dict[str, Any]:
    """``deserializer(data, ctx)``, which must be a record (a dict). ``where`` names the record part; ``how`` says
    what it was decoded as or with, for the one line that says it did not decode."""
    try:
        obj = deserializer(data, ctx)
    except Exception as exc:
        raise StepFailed(f"{where} does not decode {how}: {first_line(exc)}") from None
    if not isinstance(obj, dict):
        raise StepFailed(f"{where} decoded to {type(obj).__name__}, not a record")
    return obj


def subject_ids(client: Any, subject: str, url: str) -> dict[int, int]:
    """id -> version of every version the registry at ``url`` (``client``) holds under ``subject``."""
    try:
        versions = client.get_versions(subject)
    except Exception as exc:
        raise StepFailed(f"the registry at {url} has no subject {subject}: {first_line(exc)}") from None
    return {client.get_version(subject, v).schema_id: v for v in versions}


def proven_id(data: bytes | None, where: str, subject: str, ids: dict[int, int], url: str, layout: str) -> int:
    """The schema id in ``data``'s wire prefix, which must be one of ``ids`` (``subject``'s on the registry at
    ``url``). ``where`` names the record part; ``layout`` says what follows the id in the format its producer writes."""
    if data is None or len(data) < 6 or data[0] != 0:
        raise StepFailed(f"{where} is not in the Confluent wire format (magic byte 0, 4-byte id, {layout}): the demo "
                         f"producer writes it under {subject}")
    schema_id = int.from_bytes(data[1:5], "big")
    if schema_id not in ids:
        raise StepFailed(f"{where} carries schema id {schema_id}; the registry at {url} maps {subject} to id(s) "
                         f"{', '.join(map(str, sorted(ids)))}")
    return schema_id


def first_difference(got: dict[str, Any], written: dict[str, Any]) -> str:
    """The first field (by name) on which ``got`` and ``written`` differ, for a one-line reason."""
    field = next((f for f in sorted(set(got) | set(written)) if got.get(f) != written.get(f)), "?")
    return f"field {field} is {got.get(field)!r}, written {written.get(field)!r}"


class RegistryPart:
    """One part (key or value) of a topic's records proven with a registry-backed deserializer of confluent-kafka
    (Avro, JSON Schema): its id is one the registry maps to ``subject``, and its bytes decode to a record."""

    def __init__(self, client: Any, url: str, subject: str, deserializer: Deserializer, ctx: Any, layout: str) -> None:
        self.url, self.subject, self._de, self._ctx, self._layout = url, subject, deserializer, ctx, layout
        self.ids = subject_ids(client, subject, url)

    def __call__(self, data: bytes | None, where: str) -> dict[str, Any]:
        schema_id = proven_id(data, where, self.subject, self.ids, self.url, self._layout)
        assert data is not None  # proven_id refused None
        return decode_record(self._de, data, self._ctx, where, f"as {self.subject} v{self.ids[schema_id]} (id {schema_id})")


class PairedDecoder:
    """Decodes one record of a topic whose keys AND values are schema'd and proves it: the key by ``key`` (its
    id, its bytes), the demo record it names by ``index_of`` (None: a key the demo producer never writes), the
    value by ``value``, and the value equal to ``written(index)``, the one written under that key. ``__call__``
    (key, value, where) returns the decoded value; ``where`` names the record (``topic[partition]@offset``)."""

    def __init__(self, key: PartProof, value: PartProof, index_of: Callable[[dict[str, Any]], int | None],
                 written: Callable[[int], dict[str, Any]]) -> None:
        self.key, self.value, self._index_of, self._written = key, value, index_of, written

    def __call__(self, key: bytes | None, value: bytes | None, where: str) -> dict[str, Any]:
        got_key = self.key(key, f"{where} key")
        index = self._index_of(got_key)
        if index is None:
            raise StepFailed(f"{where} key decoded to {got_key}: not a key the demo producer writes")
        got, written = self.value(value, f"{where} value"), self._written(index)
        if got != written:
            named = ", ".join(f"{k} {v}" for k, v in got_key.items())
            raise StepFailed(f"{where} value decoded to a value other than the one written under key {named}: "
                             f"{first_difference(got, written)}")
        return got
