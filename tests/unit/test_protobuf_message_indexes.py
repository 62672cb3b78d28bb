"""Protobuf on the wire and in text (issue 45, part 1): the message-index array after the id, the bounded prefix the
validator tallies, the message an index path names, imports without references, and the token canonical form."""

from __future__ import annotations

import pytest

from msk_migrate.schemas.canonical import schema_identity
from msk_migrate.schemas.model import Inventory, Reference, SchemaVersion
from msk_migrate.schemas.planner import unresolved_references
from msk_migrate.schemas.protobuf import (
    Truncated,
    imports,
    message_at,
    missing_imports,
    prefix_length,
    read_message_indexes,
)
from msk_migrate.validation.schema_ids import MAX_KEYS, NO_PREFIX, NOT_READ, count_ids, ids_of, tally

HEADER = b"\x00\x00\x00\x00\x2a"  # magic byte, id 42


def zz(n: int) -> bytes:
    """n as a zig-zag varint (what Confluent's serializers write)."""
    v = (n << 1) ^ (n >> 63)
    out = bytearray()
    while v & ~0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def framed(indexes: list[int], payload: bytes = b"\x0a\x02hi") -> bytes:
    arr = b"\x00" if indexes == [0] else zz(len(indexes)) + b"".join(zz(i) for i in indexes)
    return HEADER + arr + payload


def test_the_single_zero_byte_is_the_first_message_and_the_payload_follows_it():
    assert read_message_indexes(framed([0])) == ((0,), 6)
    assert prefix_length(framed([0])) == 1


def test_an_explicit_array_reads_every_index_in_order_nested_ones_too():
    data = framed([1, 0, 3])
    assert read_message_indexes(data) == ((1, 0, 3), 5 + 4)
    assert prefix_length(data) == 4


def test_an_index_of_two_varint_bytes_is_read_whole():
    data = framed([200])
    assert read_message_indexes(data) == ((200,), 5 + 3)
    assert prefix_length(data) == 3


def test_bytes_ending_inside_the_array_are_truncated_not_a_shorter_array():
    with pytest.raises(Truncated):
        read_message_indexes(HEADER + zz(2) + zz(1))
    with pytest.raises(Truncated):
        read_message_indexes(HEADER)
    with pytest.raises(Truncated):
        read_message_indexes(HEADER + b"\x02\x80")  # a varint cut after its continuation byte
    assert prefix_length(HEADER + zz(2) + zz(1)) == 0
    assert prefix_length(HEADER) == 0
    assert prefix_length(HEADER + b"\x02\x80") == 0


def test_a_negative_count_or_index_is_no_array():
    with pytest.raises(ValueError):
        read_message_indexes(HEADER + zz(-1))
    with pytest.raises(ValueError):
        read_message_indexes(HEADER + zz(1) + zz(-3))
    assert prefix_length(HEADER + zz(-1) + b"x") == 0
    assert prefix_length(HEADER + zz(1) + zz(-3)) == 0


def test_the_tallied_prefix_is_bounded_in_depth_and_index_size():
    assert prefix_length(framed([0] * 8)) == 9
    assert prefix_length(framed([0] * 9)) == 0  # deeper than read: taken for payload bytes
    assert prefix_length(framed([9000])) == 0  # a three-byte varint: beyond the two bytes read


def test_the_tally_keeps_records_per_message_index_beside_the_id():
    counts: dict[bytes, int] = {}
    for v in [framed([0]), framed([0]), framed([1]), HEADER + b"\x7b\x22a\x22"]:  # the last: JSON payload bytes
        count_ids(counts, v)
    ids = ids_of(counts)
    assert ids == {42: 4}
    assert ids.prefixes[42] == {b"\x00": 2, b"\x02\x02": 1, NO_PREFIX: 1}
    t = tally([("source", "t", 4, ids)])["t"]
    assert t.source.ids == {42: 4} and t.source.prefixes[42][b"\x02\x02"] == 1


def test_past_the_key_bound_new_prefixes_are_counted_as_not_read_never_dropped():
    counts = {(100_000 + i).to_bytes(4, "big"): 1 for i in range(MAX_KEYS)}  # other ids fill the bound
    count_ids(counts, framed([3]))
    ids = ids_of(counts)
    assert ids[42] == 1 and ids.prefixes[42] == {NOT_READ: 1}


PROTO = '''syntax = "proto3";
package demo.orders;
import "demo/common.proto";
import public "google/protobuf/timestamp.proto";
// message Commented { }
message Order {
  string id = 1;
  map<string, int32> line_counts = 2;
  message Line { string sku = 1; }
  oneof kind { string a = 3; int32 b = 4; }
  enum State { NEW = 0; }
}
enum Top { X = 0; }
message Refund { message Reason { string text = 1; } }
'''


def test_an_index_path_names_the_message_a_descriptor_lists_there():
    assert message_at(PROTO, (0,)) == "demo.orders.Order"
    assert message_at(PROTO, (1,)) == "demo.orders.Refund"
    assert message_at(PROTO, (0, 0)) == "demo.orders.Order.LineCountsEntry"  # protoc's map entry type
    assert message_at(PROTO, (0, 1)) == "demo.orders.Order.Line"
    assert message_at(PROTO, (1, 0)) == "demo.orders.Refund.Reason"


def test_an_index_past_the_messages_names_none():
    assert message_at(PROTO, (2,)) is None
    assert message_at(PROTO, (1, 1)) is None


def test_imports_are_read_and_well_known_files_need_no_reference():
    assert imports(PROTO) == ["demo/common.proto", "google/protobuf/timestamp.proto"]
    assert missing_imports(PROTO, []) == ["demo/common.proto"]
    assert missing_imports(PROTO, ["demo/common.proto"]) == []


def test_a_protobuf_import_no_reference_names_is_refused_by_the_plan_check():
    common = SchemaVersion("demo/common.proto", 1, 1, "PROTOBUF", 'syntax = "proto3"; package demo.common; message Money {}')
    good = SchemaVersion("orders-value", 1, 2, "PROTOBUF", PROTO, (Reference("demo/common.proto", "demo/common.proto", 1),))
    bad = SchemaVersion("refunds-value", 1, 3, "PROTOBUF", PROTO)
    dangling = SchemaVersion("x-value", 1, 4, "PROTOBUF", PROTO, (Reference("demo/common.proto", "gone.proto", 2),))
    found = unresolved_references(Inventory("u", [common, good, bad, dangling]))
    assert [(v.subject, why) for v, why in found] == [
        ("refunds-value", 'it imports "demo/common.proto", which none of its references names'),
        ("x-value", "its reference demo/common.proto names gone.proto version 2, which the registry does not hold")]


def test_protobuf_texts_equal_up_to_whitespace_and_comments_differ_in_any_token():
    a = 'syntax = "proto3";\nmessage A {\n  int32 x = 1; // one\n}\n'
    b = 'syntax="proto3"; /* block */ message A{int32 x=1;}'
    c = 'syntax = "proto3";\nmessage A {\n  int32 x = 2;\n}\n'
    assert schema_identity("PROTOBUF", a) == schema_identity("PROTOBUF", b)
    assert schema_identity("PROTOBUF", a) != schema_identity("PROTOBUF", c)
    assert schema_identity("PROTOBUF", 'option (u) = "a // b";') != schema_identity("PROTOBUF", 'option (u) = "a";')


def test_an_index_path_is_read_in_a_base64_file_descriptor_as_pythons_serializer_registers_it():
    import base64

    from google.protobuf import descriptor_pb2

    fd = descriptor_pb2.FileDescriptorProto(name="o.proto", package="demo.orders")
    order = fd.message_type.add(name="Order")
    order.nested_type.add(name="Line")
    fd.message_type.add(name="Refund")
    text = base64.b64encode(fd.SerializeToString()).decode()
    assert message_at(text, (0,)) == "demo.orders.Order"
    assert message_at(text, (0, 0)) == "demo.orders.Order.Line"
    assert message_at(text, (1,)) == "demo.orders.Refund"
    assert message_at(text, (2,)) is None and message_at(text, (1, 0)) is None
