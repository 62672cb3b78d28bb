"""The rehearsal's Protobuf demo application: a ``.proto`` that imports another, registered as text with the
import as a reference, records written with confluent-kafka's ``ProtobufSerializer`` and decoded with its
``ProtobufDeserializer``; the message classes on both sides are compiled at run time by protoc (grpcio-tools).

- :data:`FILES`: ``shop/common.proto`` (``Address``) and ``shop/shipments.proto`` (``Shipment``, which imports it
  and nests ``Parcel``), registered as :data:`COMMON_SUBJECT` and :data:`SUBJECT` (:func:`register`), and the keys'
  ``shop/shipment_key.proto`` (``ShipmentKey``), registered as :data:`KEY_SUBJECT` (:func:`register_key`): keys
  and values are Protobuf, each under TopicNameStrategy;
- :func:`serializer`: the producer (key and value); :class:`TopicDecoder`: the consumer's proof per record, each part
  by :class:`ProtobufPart` (id, message index, bytes), then the value against the one written under the key;
- :func:`registry_client`: confluent-kafka's registry client, except that a Protobuf schema asked for in the
  ``serialized`` format (what both clients ask for) is compiled here from the text and references the registry
  serves. Apicurio 3.3.3 answers that format with bytes that are not the registered file (docs/schemas.md), so
  neither client can work from them; everything else is confluent-kafka's own code.

Needs the ``rehearsal`` extra (protobuf, grpcio-tools), imported lazily through :func:`_module` only: the product
reads Protobuf's wire format and schemas without them (:mod:`msk_migrate.schemas.protobuf`), and the Spark
validation job and the operator image must not need them.
"""

from __future__ import annotations

import base64
import importlib
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import UsageError
from ..schemas.protobuf import descriptor_messages, is_builtin, read_message_indexes, show
from .decoding import PairedDecoder, first_line, proven_id, subject_ids
from .result import StepFailed

#: The subject of the demo topic's values (TopicNameStrategy) and the subject of the file it imports (named by
#: its import path, as confluent-kafka's serializers name a reference's subject); the subject of its keys.
SUBJECT, COMMON_SUBJECT, KEY_SUBJECT = "shop.shipments-value", "shop/common.proto", "shop.shipments-key"
COMMON_PATH, SHIPMENTS_PATH, KEY_PATH = "shop/common.proto", "shop/shipments.proto", "shop/shipment_key.proto"
#: The message every demo record's value holds, and the one its key holds.
MESSAGE, KEY_MESSAGE = "shop.shipments.Shipment", "shop.shipments.ShipmentKey"
FILES: dict[str, str] = {
    COMMON_PATH: """syntax = "proto3";
package shop.common;

// Where a parcel goes.
message Address {
  string city = 1;
  string postcode = 2;
}
""",
    SHIPMENTS_PATH: """syntax = "proto3";
package shop.shipments;

import "shop/common.proto";

// A shipment of an order: where it goes and what it holds.
message Shipment {
  int64 id = 1;
  shop.common.Address to = 2;
  repeated Parcel parcels = 3;

  message Parcel {
    string sku = 1;
    int32 grams = 2;
  }
}
""",
    # a file of its own: the value's file stays the one registered (and proven) before keys were schema'd
    KEY_PATH: """syntax = "proto3";
package shop.shipments;

// The key of a shipment record: the shipment's id.
message ShipmentKey {
  int64 id = 1;
}
""",
}
_CITIES = ("Lyon", "Porto", "Gdansk", "Turku")
#: How a missing extra is fixed.
_FIX = "pip install -e '.[rehearsal]' into the venv (make setup installs it with the dev extra)"


def _module(name: str) -> Any:
    """``name`` imported; one line naming the extra when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise UsageError("rehearsal", f"the Protobuf demo needs {exc.name or name} (protobuf and grpcio-tools: the "
                                      f"`rehearsal` extra), which is not installed", _FIX) from None


def require() -> None:
    """Fail in one line (exit 2) before anything starts when the ``rehearsal`` extra is missing."""
    for name in ("google.protobuf.descriptor_pool", "google.protobuf.message_factory", "grpc_tools.protoc"):
        _module(name)


def key_of(i: int) -> dict[str, Any]:
    """The key of demo record ``i`` (field names as in the ``.proto``)."""
    return {"id": i}


def shipment(i: int) -> dict[str, Any]:
    """The value of demo record ``i`` (field names as in the ``.proto``)."""
    return {"id": i, "to": {"city": _CITIES[i % len(_CITIES)], "postcode": f"{10_000 + i}"},
            "parcels": [{"sku": f"sku-{(i + p) % 13}", "grams": 100 * (p + 1)} for p in range(i % 3 + 1)]}


def as_read(cls: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` as a decoded message of ``cls`` reads (protobuf's JSON mapping: int64 as text, defaults left out),
    so a decoded part compares with what was written."""
    json_format = _module("google.protobuf.json_format")
    return dict(json_format.MessageToDict(json_format.ParseDict(fields, cls()), preserving_proto_field_name=True))


# ---- protoc -----------------------------------------------------------------------------------------------------
def compile_files(files: Mapping[str, str]) -> Any:
    """protoc (grpcio-tools) over ``files`` (import path -> ``.proto`` text): a ``FileDescriptorSet`` holding
    every file and what it imports, dependencies first (well-known ``google/protobuf`` files from grpcio-tools)."""
    descriptor_pb2 = _module("google.protobuf.descriptor_pb2")
    _module("grpc_tools.protoc")
    with tempfile.TemporaryDirectory(prefix="msk-migrate-protoc-") as tmp:
        root = Path(tmp) / "src"
        for path, text in files.items():
            p = PurePosixPath(path)
            if p.is_absolute() or ".." in p.parts or not path.endswith(".proto"):
                raise StepFailed(f"a Protobuf file named {path!r} cannot be compiled: a reference's name must be a "
                                 "relative import path ending in .proto")
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_text(text)
        out = Path(tmp) / "set.pb"
        # ``-m grpc_tools.protoc`` adds grpcio-tools' own include path (the well-known google/protobuf files)
        proc = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", "--include_imports",
                               f"--descriptor_set_out={out}", *files], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
            raise StepFailed(f"protoc refused {', '.join(files)}: {first}")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def pool_of(descriptor_set: Any) -> Any:
    """A fresh descriptor pool holding ``descriptor_set`` (its own: classes compiled twice never collide)."""
    pool = _module("google.protobuf.descriptor_pool").DescriptorPool()
    for f in descriptor_set.file:
        pool.Add(f)
    return pool


def message_class(descriptor: Any) -> Any:
    """The Python class of a message descriptor."""
    return _module("google.protobuf.message_factory").GetMessageClass(descriptor)


def demo_classes() -> Any:
    """The producer's message classes, compiled from :data:`FILES` (a pool: ``FindMessageTypeByName``)."""
    return pool_of(compile_files(FILES))


def descriptor_at(file: Any, indexes: tuple[int, ...]) -> Any | None:
    """The message descriptor an index path names in a compiled file (its top-level messages in the order
    written, then nested ones); None when it names none. Read from the file's ``FileDescriptorProto``, whose lists
    keep the order the Confluent wire format counts in."""
    proto = _module("google.protobuf.descriptor_pb2").FileDescriptorProto()
    file.CopyToProto(proto)
    level, names = proto.message_type, []
    for index in indexes:
        if index >= len(level):
            return None
        names.append(level[index].name)
        level = level[index].nested_type
    return file.pool.FindMessageTypeByName(".".join([proto.package, *names] if proto.package else names)) if names else None


# ---- the registry -----------------------------------------------------------------------------------------------
def _files_of(client: Any, root: str, schema: Any) -> dict[str, str]:
    """``schema``'s text at ``root`` and the text of every file it refers to (references, recursively), by import
    path, as the registry serves them."""
    files, todo = {root: schema.schema_str}, list(schema.references or [])
    while todo:
        ref = todo.pop()
        if ref.name in files or is_builtin(ref.name):
            continue
        held = client.plain_version(ref.subject, ref.version).schema
        if descriptor_messages(held.schema_str) is not None:
            raise StepFailed(f"{ref.subject} v{ref.version} (imported as {ref.name}) is registered as a base64 "
                             "FileDescriptorProto: protoc compiles .proto text only")
        files[ref.name] = held.schema_str
        todo.extend(held.references or [])
    return files


def compiled(client: Any, root: str, schema: Any) -> Any:
    """``schema`` (a ``.proto`` text and its references, read from ``client``'s registry) compiled: the pool,
    whose file ``root`` is the schema's own."""
    return pool_of(compile_files(_files_of(client, root, schema)))


def registry_client(url: str) -> Any:
    """confluent-kafka's ``SchemaRegistryClient`` for ``url``, answering requests for a Protobuf schema in the
    ``serialized`` format (a base64 ``FileDescriptorProto``: what ``ProtobufSerializer`` with
    ``use.latest.version`` and ``ProtobufDeserializer`` ask for) with the registry's ``.proto`` text compiled here,
    once per schema. Schemas of other types, and the other formats, are what the registry answers."""
    sr = _module("confluent_kafka.schema_registry")

    # the base class comes through _module (one line when something is missing): a variable to mypy, not a class
    class CompilingClient(sr.SchemaRegistryClient):  # type: ignore[name-defined]
        def __init__(self, conf: dict[str, Any]) -> None:
            super().__init__(conf)
            self._compiled: dict[tuple[str, str], Any] = {}

        def plain_version(self, subject: str, version: int | str) -> Any:
            return super().get_version(subject, version, True)

        def _serialized(self, key: str, root: str, schema: Any) -> Any:
            if schema.schema_type != "PROTOBUF" or descriptor_messages(schema.schema_str) is not None:
                return schema  # not Protobuf, or already a base64 descriptor
            if (key, root) not in self._compiled:
                pool = compiled(self, root, schema)
                data = pool.FindFileByName(root)
                proto = _module("google.protobuf.descriptor_pb2").FileDescriptorProto()
                data.CopyToProto(proto)
                text = base64.standard_b64encode(proto.SerializeToString()).decode("ascii")
                self._compiled[(key, root)] = sr.Schema(text, "PROTOBUF", schema.references)
            return self._compiled[(key, root)]

        def _registered(self, held: Any) -> Any:
            root = held.subject if held.subject.endswith(".proto") else f"{held.subject}.proto"
            schema = self._serialized(f"{held.subject}/{held.version}", root, held.schema)
            return sr.RegisteredSchema(held.schema_id, held.guid, schema, held.subject, held.version)

        def get_schema(self, schema_id: int, subject_name: str | None = None, fmt: str | None = None) -> Any:
            schema = super().get_schema(schema_id, subject_name)
            return self._serialized(f"id {schema_id}", f"registry-id-{schema_id}.proto", schema) if fmt == "serialized" else schema

        def get_version(self, subject_name: str, version: int | str = "latest", deleted: bool = False,
                        fmt: str | None = None) -> Any:
            held = super().get_version(subject_name, version, deleted)
            return self._registered(held) if fmt == "serialized" else held

        def get_latest_version(self, subject_name: str, fmt: str | None = None) -> Any:
            held = super().get_latest_version(subject_name)
            return self._registered(held) if fmt == "serialized" else held

    return CompilingClient({"url": url})


def register(client: Any, reg: Callable[[str, Any], None], subject: str = SUBJECT, common_subject: str = COMMON_SUBJECT) -> None:
    """Register :data:`FILES` through ``reg(subject, schema)``: the imported file first (as ``common_subject``),
    then the file importing it (as ``subject``) with a reference naming it by its import path."""
    sr = _module("confluent_kafka.schema_registry")
    reg(common_subject, sr.Schema(FILES[COMMON_PATH], "PROTOBUF", []))
    version = client.get_latest_version(common_subject).version
    reg(subject, sr.Schema(FILES[SHIPMENTS_PATH], "PROTOBUF", [sr.SchemaReference(COMMON_PATH, common_subject, version)]))


def register_key(reg: Callable[[str, Any], None], subject: str = KEY_SUBJECT) -> None:
    """Register the keys' file (:data:`KEY_PATH`, no imports) through ``reg(subject, schema)``."""
    sr = _module("confluent_kafka.schema_registry")
    reg(subject, sr.Schema(FILES[KEY_PATH], "PROTOBUF", []))


def serializer(url: str, topic: str) -> Callable[[int], tuple[bytes, bytes]]:
    """Record i -> (key bytes, value bytes): confluent-kafka's ``ProtobufSerializer`` per part, writing
    :data:`KEY_MESSAGE` and :data:`MESSAGE` compiled from :data:`FILES`, each under the id of the latest version of
    ``topic``'s subject for that part (TopicNameStrategy; it registers nothing)."""
    pb = _module("confluent_kafka.schema_registry.protobuf")
    ser_mod = _module("confluent_kafka.serialization")
    json_format = _module("google.protobuf.json_format")
    pool = demo_classes()
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    client = registry_client(url)
    parts = {}
    for part, name, field, fields_of in (("key", KEY_MESSAGE, ser_mod.MessageField.KEY, key_of),
                                         ("value", MESSAGE, ser_mod.MessageField.VALUE, shipment)):
        cls = message_class(pool.FindMessageTypeByName(name))
        parts[part] = (pb.ProtobufSerializer(cls, client, conf), ser_mod.SerializationContext(topic, field), cls, fields_of)

    def write(i: int) -> tuple[bytes, bytes]:
        key, value = (ser(json_format.ParseDict(fields_of(i), cls()), ctx) for ser, ctx, cls, fields_of in parts.values())
        return key, value

    return write


class ProtobufPart:
    """One part (key or value) of a topic's records, decoded with confluent-kafka's ``ProtobufDeserializer`` and the
    registry of ``client`` (at ``url``) and proven: its schema id is one the registry maps to ``subject``, its
    message-index array names a message of that schema, its bytes decode, and to ``message`` (the one the demo
    producer writes in this part). Returns the message as :func:`as_read` reads it; any failure raises
    :class:`StepFailed` naming the record part and the reason."""

    def __init__(self, client: Any, url: str, topic: str, part: str, subject: str, message: str) -> None:
        self.url, self.subject, self.message, self._client = url, subject, message, client
        self._pb = _module("confluent_kafka.schema_registry.protobuf")
        ser_mod = _module("confluent_kafka.serialization")
        self._json = _module("google.protobuf.json_format")
        field = ser_mod.MessageField.KEY if part == "key" else ser_mod.MessageField.VALUE
        self._ctx = ser_mod.SerializationContext(topic, field)
        self.ids = subject_ids(client, subject, url)
        self._files: dict[int, Any] = {}
        self._deserializers: dict[str, Any] = {}

    def _file(self, schema_id: int) -> Any:
        """The writer schema of ``schema_id`` compiled from the registry's text (once per id)."""
        if schema_id not in self._files:
            root = f"registry-id-{schema_id}.proto"
            schema = self._client.get_schema(schema_id)
            self._files[schema_id] = compiled(self._client, root, schema).FindFileByName(root)
        return self._files[schema_id]

    def _deserializer(self, descriptor: Any) -> Any:
        if descriptor.full_name not in self._deserializers:
            self._deserializers[descriptor.full_name] = self._pb.ProtobufDeserializer(
                message_class(descriptor), {}, schema_registry_client=self._client)
        return self._deserializers[descriptor.full_name]

    def __call__(self, data: bytes | None, where: str) -> dict[str, Any]:
        """Decode and prove one part (``where``: ``topic[p]@offset key|value`` for the messages)."""
        schema_id = proven_id(data, where, self.subject, self.ids, self.url, "message indexes")
        assert data is not None  # proven_id refused None
        try:
            indexes, _at = read_message_indexes(data)
        except ValueError as exc:
            raise StepFailed(f"{where}: its message-index array does not read ({exc})") from None
        descriptor = descriptor_at(self._file(schema_id), indexes)
        if descriptor is None:
            raise StepFailed(f"{where}: message index {show(indexes)} names no message of {self.subject} "
                             f"v{self.ids[schema_id]} (id {schema_id}) on the registry at {self.url}")
        try:
            msg = self._deserializer(descriptor)(data, self._ctx)
        except Exception as exc:
            raise StepFailed(f"{where} does not decode as {descriptor.full_name} (id {schema_id}): {first_line(exc)}") from None
        if msg.DESCRIPTOR.full_name != self.message:
            raise StepFailed(f"{where} decoded as {msg.DESCRIPTOR.full_name}; the producer wrote {self.message}")
        return dict(self._json.MessageToDict(msg, preserving_proto_field_name=True))


class TopicDecoder(PairedDecoder):
    """Decodes one record of a topic the Protobuf demo wrote, key and value, with ``ProtobufDeserializer`` and the
    registry at ``url``, each part proven by :class:`ProtobufPart` under its own subject (``<topic>-key``,
    ``<topic>-value``); then the key must be one the demo producer writes and the value the one written under it
    (:class:`.decoding.PairedDecoder`). ``__call__`` returns the value as :func:`as_read` reads it."""

    def __init__(self, url: str, topic: str) -> None:
        self.url, self.topic = url, topic
        client = registry_client(url)
        pool = demo_classes()
        key_cls, value_cls = (message_class(pool.FindMessageTypeByName(n)) for n in (KEY_MESSAGE, MESSAGE))
        key = ProtobufPart(client, url, topic, "key", f"{topic}-key", KEY_MESSAGE)
        value = ProtobufPart(client, url, topic, "value", f"{topic}-value", MESSAGE)
        #: part -> {id: version} of every version the registry holds under the part's subject
        self.ids = {"key": key.ids, "value": value.ids}

        def index_of(got: dict[str, Any]) -> int | None:
            text = str(got.get("id", "0"))  # int64 reads as text; id 0, a default, is left out
            return int(text) if text.isdigit() and got == as_read(key_cls, key_of(int(text))) else None

        super().__init__(key, value, index_of, lambda i: as_read(value_cls, shipment(i)))
