"""One record part decoded by a registry-backed deserializer of confluent-kafka, for the rehearsal's decoders
(:mod:`.schema_demo`, :mod:`.returns_demo`): a part that does not decode, or decodes to something other than a
record, is a :class:`~.result.StepFailed` naming it."""

from __future__ import annotations

from typing import Any

from .result import StepFailed


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
