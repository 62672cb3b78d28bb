"""Protobuf schemas as a registry holds them (``.proto`` text) and Protobuf records as the Confluent serializers
frame them: what the copy, the canonical form and the validator's proof per record need, without protoc.

- :func:`tokens` / :func:`canonical`: the text as a list of tokens (identifiers, numbers, quoted strings,
  punctuation); comments (``//`` and ``/* */``) and whitespace are not tokens. Two texts with the same tokens are
  the same schema (the one canonical form, :mod:`.canonical`); anything else (a field renumbered, a message
  reordered, an option added) differs. It is not a semantic comparison: ``int32 a = 1 ;`` and a descriptor that
  protoc would compile to the same thing from another text are still two schemas.
- :func:`imports`: the files a ``.proto`` imports (``import``, ``import public``, ``import weak``); each must be
  a registry **reference** whose ``name`` is the import path, except the well-known files every Confluent client
  carries (:func:`is_builtin`: ``google/protobuf/*.proto``, ``google/type/*.proto``, ``confluent/*.proto``).
- :func:`read_message_indexes`: the **message-index array** the Confluent wire format puts after the 4-byte id
  (a zig-zag varint count, then that many zig-zag varint indexes; the single byte 0 means ``[0]``, the file's
  first message), and :func:`message_at`: which message of the file an index path names (top-level messages in
  the order written, then nested messages in the order written, a ``map<>`` field's entry type among them).

Invariant: stdlib only and Python 3.9 compatible (the validation job ships and imports it on EMR and Glue).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence

#: A message-index array: the path of indexes from the file's top-level messages down to nested ones.
Indexes = tuple[int, ...]

#: Nesting read in a record's message-index array; more is taken for data that is not an index array (the
#: Spark pass reads the same bounds: :mod:`msk_migrate.validation.schema_spark`).
MAX_DEPTH = 8
#: Bytes one index may take: a zig-zag varint of at most two bytes, i.e. indexes up to 8,191 messages.
MAX_VARINT_BYTES = 2
#: The longest prefix read: the count byte, then ``MAX_DEPTH`` indexes of ``MAX_VARINT_BYTES``.
MAX_PREFIX_BYTES = 1 + MAX_DEPTH * MAX_VARINT_BYTES

# (?xs): verbose and dot-all written inline; ``re.VERBOSE | re.DOTALL`` reads as a 3.10 union type to vermin,
# which checks that the job's modules run on EMR's Python 3.9
_TOKEN = re.compile(r"""(?xs)
    (?P<ws>\s+)
  | (?P<line>//[^\n]*)
  | (?P<block>/\*.*?\*/)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<word>[A-Za-z_][A-Za-z0-9_.]*|\.?[0-9][A-Za-z0-9_.+-]*|\.[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>.)
""")

_BUILTIN = re.compile(r"^(google/protobuf/[^/]+\.proto|google/type/[^/]+\.proto|confluent/(?:[^/]+/)*[^/]+\.proto)$")


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` (comments and whitespace dropped; an unterminated ``/*`` comment is a token, so
    two broken texts still compare by their content)."""
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("ws", "line", "block"):
            continue
        out.append(m.group())
    return out


def canonical(text: str) -> str:
    """The canonical text: tokens joined by one space."""
    return " ".join(tokens(text))


def _unquote(token: str) -> str:
    return token[1:-1] if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'" else token


def imports(text: str) -> list[str]:
    """The import paths of a ``.proto`` text, in the order written."""
    toks = tokens(text)
    out = []
    for i, t in enumerate(toks):
        if t != "import" or (i > 0 and toks[i - 1] not in (";", "}", "{")):
            continue  # "import" as a field or option name is not a statement
        j = i + 1
        if j < len(toks) and toks[j] in ("public", "weak"):
            j += 1
        if j < len(toks) and toks[j][:1] in "\"'":
            out.append(_unquote(toks[j]))
    return out


def is_builtin(path: str) -> bool:
    """A well-known file the Confluent clients carry themselves (registered by no one, referenced by no one)."""
    return bool(_BUILTIN.match(path))


def missing_imports(text: str, reference_names: Sequence[str]) -> list[str]:
    """The imports of ``text`` that no reference names (well-known files aside)."""
    names = set(reference_names)
    return [p for p in imports(text) if p not in names and not is_builtin(p)]


class Truncated(ValueError):
    """The bytes end inside the message-index array."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The zig-zag varint at ``pos`` and the position after it (at most 5 bytes: a 32-bit value)."""
    value = shift = 0
    for n in range(5):
        if pos + n >= len(data):
            raise Truncated(f"the bytes end inside a varint at byte {pos + n}")
        b = data[pos + n]
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (value >> 1) ^ -(value & 1), pos + n + 1
    raise ValueError(f"the varint at byte {pos} is longer than 5 bytes")


def read_message_indexes(data: bytes, offset: int = 5) -> tuple[Indexes, int]:
    """The message-index array at ``offset`` (after the magic byte and the 4-byte id) and the offset of the
    payload after it. A single 0 byte is ``[0]``. Raises :class:`Truncated` when the bytes end inside it and
    ValueError for a negative count or index (what Confluent's deserializers refuse too)."""
    count, pos = _varint(data, offset)
    if count < 0:
        raise ValueError(f"negative message-index count {count}")
    if count == 0:
        return (0,), pos
    out = []
    for _ in range(count):
        index, pos = _varint(data, pos)
        if index < 0:
            raise ValueError(f"negative message index {index}")
        out.append(index)
    return tuple(out), pos


def prefix_length(value: bytes) -> int:
    """The length of the message-index array after the 5-byte header of a wire-format ``value``, read within the
    bounds the validator tallies (:data:`MAX_DEPTH` indexes of at most :data:`MAX_VARINT_BYTES` bytes, none
    negative); 0 when the bytes there are no such array (Avro or JSON payload bytes, a truncated record)."""
    n = len(value)
    if n <= 5:
        return 0
    b = value[5]
    if b == 0:
        return 1
    if b & 0x81 or b > 2 * MAX_DEPTH:  # a continuation byte, a negative count, or deeper than read
        return 0
    i = 6
    for _ in range(b >> 1):
        if i >= n:
            return 0
        x = value[i]
        if x & 1:  # zig-zag: a negative index
            return 0
        if x & 0x80:
            if i + 1 >= n or value[i + 1] & 0x80:
                return 0
            i += 2
        else:
            i += 1
    return i - 5


def indexes_of_prefix(prefix: bytes) -> Indexes:
    """The indexes of a prefix :func:`prefix_length` accepted (the raw bytes after the id)."""
    return read_message_indexes(prefix, 0)[0]


def show(indexes: Indexes | None) -> str:
    """``[1, 0]``; ``none`` for records without a readable array."""
    return "none" if indexes is None else "[" + ", ".join(map(str, indexes)) + "]"


def _messages(toks: list[str], start: int, end: int) -> list[tuple[str, int, int]]:
    """The messages declared directly in ``toks[start:end]`` (a file, or a message's body), in the order a
    descriptor lists them: (name, body start, body end). A ``map<K, V> f = n;`` field is its entry message
    ``FEntry`` (protoc makes it a nested type where it is declared); a proto2 ``group`` is its message."""
    out = []
    i, depth = start, 0
    while i < end:
        t = toks[i]
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        elif depth == 0 and t in ("message", "group") and i + 1 < end:
            if t == "group":  # [label] group Name = n { ... }
                name, j = toks[i + 1], i + 2
                while j < end and toks[j] != "{":
                    j += 1
            else:
                name, j = toks[i + 1], i + 2
            if j < end and toks[j] == "{":
                close = _close(toks, j, end)
                out.append((name, j + 1, close))
                i = close + 1
                continue
        elif depth == 0 and t == "map" and i + 1 < end and toks[i + 1] == "<":
            j = i + 2
            while j < end and toks[j] != ">":
                j += 1
            if j + 1 < end:
                field = toks[j + 1]
                out.append(("".join(p[:1].upper() + p[1:] for p in field.split("_")) + "Entry", j, j))
            i = j + 1
            continue
        elif depth == 0 and t in ("enum", "service", "extend", "oneof") and i + 1 < end:
            # their bodies hold no message of this level (a oneof's fields belong to the message: walk into it)
            if t != "oneof":
                j = i + 1
                while j < end and toks[j] != "{":
                    j += 1
                if j < end:
                    i = _close(toks, j, end) + 1
                    continue
            else:
                j = i + 1
                while j < end and toks[j] != "{":
                    j += 1
                if j < end:
                    close = _close(toks, j, end)
                    out.extend(_messages(toks, j + 1, close))
                    i = close + 1
                    continue
        i += 1
    return out


def _close(toks: list[str], open_at: int, end: int) -> int:
    depth = 0
    for k in range(open_at, end):
        if toks[k] == "{":
            depth += 1
        elif toks[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return end


def _fields(data: bytes) -> list[tuple[int, bytes]]:
    """The length-delimited fields of a protobuf message (number, bytes); other wire types skipped. ValueError
    when ``data`` is not a protobuf message."""
    out, pos = [], 0
    while pos < len(data):
        tag, pos = _uvarint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = _uvarint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            size, pos = _uvarint(data, pos)
            out.append((number, data[pos:pos + size]))
            pos += size
        else:
            raise ValueError(f"wire type {wire}")
        if pos > len(data) or number == 0:
            raise ValueError("not a protobuf message")
    return out


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(data) and shift < 64:
        b = data[pos]
        value |= (b & 0x7F) << shift
        pos += 1
        shift += 7
        if not b & 0x80:
            return value, pos
    raise ValueError("truncated varint")


def descriptor_messages(text: str) -> tuple[str, list[tuple[str, bytes]]] | None:
    """A schema registered as a base64 ``FileDescriptorProto`` (confluent-kafka's Python serializer registers that;
    Apicurio keeps it as given): its package and top-level messages (name, DescriptorProto bytes); None for
    ``.proto`` text."""
    compact = "".join(text.split())
    if not compact or not re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", compact):
        return None
    try:
        fields = _fields(base64.b64decode(compact, validate=True))
        package = next((v.decode() for n, v in fields if n == 2), "")
        return package, [(_name(v), v) for n, v in fields if n == 4]
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None


def _name(descriptor: bytes) -> str:
    return next((v.decode() for n, v in _fields(descriptor) if n == 1), "")


def message_at(text: str, indexes: Indexes) -> str | None:
    """The full name (``package.Outer.Inner``) of the message the index path names in the ``.proto`` ``text`` (or a
    base64 ``FileDescriptorProto``, :func:`descriptor_messages`); None when it names none (an index past the file's
    or the message's messages)."""
    described = descriptor_messages(text)
    if described is not None:
        package, level = described
        path = []
        for n, index in enumerate(indexes):
            if index >= len(level):
                return None
            name, body = level[index]
            path.append(name)
            if n + 1 < len(indexes):
                level = [(_name(v), v) for f, v in _fields(body) if f == 3]
        return ".".join([package, *path] if package else path) if path else None
    toks = tokens(text)
    package = ""
    for i, t in enumerate(toks[:-1]):
        if t == "package" and (i == 0 or toks[i - 1] in (";", "}")):
            package = toks[i + 1]
            break
    names = []
    start, end = 0, len(toks)
    for index in indexes:
        found = _messages(toks, start, end)
        if index >= len(found):
            return None
        name, start, end = found[index]
        names.append(name)
    return ".".join([package, *names] if package else names) if names else None
