"""Two-origin offset translation on the real local clusters (issue 33, active/active with identical names).

Each side's partition is built the way two marked flows leave it, without MM2: its natives (written by "its
producers") and the copies of the other side's natives (the same key, value, headers and timestamp plus the one
trailing mark ``msk-migrate.copied-from.<origin>``), in a chosen interleaving per side; the source side's first
natives of partition 0 in a transaction, so its offsets have a marker hole. A group commits on the target side
(``msk``), is translated to the source side (``onprem``), committed there, and a consumer of the group reads on;
the records it saw on the target before its position and the ones it reads on the source are counted by key
(each key is one record of one origin): every record is seen, and seen twice exactly when the translation
declared it re-delivered.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, TopicPartition

from msk_migrate.access.admin import AdminSession
from msk_migrate.offset_translation.two_origin_read import translate_commits
from msk_migrate.topology.marks import mark_header
from tests.kafka_helpers import BASE_TS, Rec, commit_group, create_topic, produce, wait_until

SRC, TGT = "onprem", "msk"
N = 30  #: natives per origin and partition
#: Per partition, each side's interleaving: "n" = this side's next native, "c" = the next copy of the other side's.
LAYOUT = {
    0: {SRC: "n" * 10 + "c" * 10 + "nc" * 20, TGT: "n" * 10 + "c" * 10 + "nc" * 20},
    1: {SRC: "nc" * 30, TGT: "n" * 5 + "c" * 5 + "cn" * 25},
}
#: The group's position on the target side, per partition.
POSITION = {0: 20, 1: 7}


def native(origin: str, p: int, i: int) -> Rec:
    headers = (("trace", f"{origin}-{i}".encode()),) if i % 2 == 0 else ()
    return Rec(p, f"{origin}-p{p}-{i}".encode(), f"value-{i}".encode() * (1 + i % 3), headers, BASE_TS + 10 * i + (p * 1000))


def copy(r: Rec, origin: str) -> Rec:
    return r.with_(headers=(*r.headers, (mark_header(origin), origin.encode())))


def build(bootstrap: str, topic: str, side: str, peer: str, p: int, tx_first: int = 0) -> list[bytes]:
    """Write one side's partition in its LAYOUT order; returns the keys in offset order."""
    nat = iter(native(side, p, i) for i in range(N))
    cop = iter(copy(native(peer, p, i), peer) for i in range(N))
    recs = [next(nat) if c == "n" else next(cop) for c in LAYOUT[p][side]]
    if tx_first:
        produce(bootstrap, topic, recs[:tx_first], transactional=True)
        # the commit marker reaches the partition after EndTxn returns: wait for it, so it sits right after them
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ends-{time.time_ns()}"})
        try:
            wait_until(lambda: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] == tx_first + 1, 30,
                       "the transaction's commit marker at the end of the partition", interval=0.1)
        finally:
            c.close()
    produce(bootstrap, topic, recs[tx_first:])
    return [r.key for r in recs if r.key is not None]


def read_keys(bootstrap: str, group: str, topic: str, p: int, start: int) -> list[tuple[int, bytes]]:
    """(offset, key) of each record a read_committed consumer of ``group`` reads from ``start`` to the end of
    partition ``p``."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                  "isolation.level": "read_committed", "enable.partition.eof": True})
    try:
        _lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
        if start >= hi:
            return []
        c.assign([TopicPartition(topic, p, start)])
        out: list[tuple[int, bytes]] = []
        deadline = time.time() + 30
        while time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                break  # end of partition
            out.append((m.offset(), m.key()))
        return out
    finally:
        c.close()


def test_a_group_moved_between_two_origin_partitions_sees_every_record_once_or_as_declared_redelivered(local_env, unique):
    src_bs, tgt_bs = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"two-origin-{unique}", f"app-{unique}"
    for bs in (src_bs, tgt_bs):
        create_topic(bs, topic, partitions=2)
    keys = {SRC: {}, TGT: {}}
    for p in LAYOUT:
        keys[SRC][p] = build(src_bs, topic, SRC, TGT, p, tx_first=10 if p == 0 else 0)
        keys[TGT][p] = build(tgt_bs, topic, TGT, SRC, p)
    commit_group(tgt_bs, group, topic, POSITION)

    src = AdminSession.for_endpoint("source", local_env.source())
    tgt = AdminSession.for_endpoint("target", local_env.target())
    committed = tgt.committed(group)
    assert committed == {(topic, p): o for p, o in POSITION.items()}
    plans = translate_commits(tgt, TGT, src, SRC, committed)

    # partition 0: both sides hold their first 10 natives and then the other's first 10: an exact point exists,
    # behind the source's transaction marker (offset 10), at the first unconsumed record (offset 21)
    t0 = plans[(topic, 0)]
    assert t0.proven and t0.exact and t0.offset == 21, t0.as_dict()
    assert t0.consumed == {SRC: 10, TGT: 10} == t0.covered
    # partition 1: the group consumed msk 0-4 and onprem 0-1; the source alternates, so onprem 2 (offset 4) comes
    # before msk 5: no exact point; msk 2, 3, 4 (offsets 5, 7, 9) are read again, nothing is skipped
    t1 = plans[(topic, 1)]
    assert t1.proven and not t1.exact and t1.offset == 4, t1.as_dict()
    (red,) = t1.redelivered
    assert (red.origin, red.count, red.pending, red.first_offset, red.last_offset) == (TGT, 3, 0, 5, 9)

    src.alter_committed(group, {tp: t.offset for tp, t in plans.items() if t.offset is not None})
    moved = src.committed(group)
    every = {p: set(keys[SRC][p]) for p in LAYOUT}
    for p in LAYOUT:
        assert every[p] == set(keys[TGT][p]) and len(every[p]) == 2 * N  # both sides hold the same union
        before = keys[TGT][p][:POSITION[p]]  # what the group read on the target
        after = read_keys(src_bs, group, topic, p, moved[(topic, p)])
        seen = before + [k for _, k in after]
        assert set(seen) == every[p], f"partition {p}: {len(every[p] - set(seen))} record(s) never delivered"
        twice = sorted(k for k in set(seen) if seen.count(k) > 1)
        key_at = dict(read_keys(src_bs, f"reader-{unique}", topic, p, 0))
        declared = sorted(key_at[r.offset] for red in plans[(topic, p)].redelivered for r in red.records)
        assert twice == declared, f"partition {p}: re-delivered {twice}, declared {declared}"
        assert len(seen) == 2 * N + len(declared)
    assert sum(len(r.records) for t in plans.values() for r in t.redelivered) == 3



def build_with_rerun(bootstrap: str, topic: str, side: str, peer: str, p: int, layout: str) -> list[bytes]:
    """One side's partition in ``layout`` where ``R`` is an MM2 restart: the last 3 copies written again, in
    order, as a restarted MirrorSourceTask re-copies from its last committed source offset."""
    nat = iter(native(side, p, i) for i in range(N))
    cop = iter(copy(native(peer, p, i), peer) for i in range(N))
    recs: list[Rec] = []
    copies: list[Rec] = []
    for c in layout:
        if c == "n":
            recs.append(next(nat))
        elif c == "c":
            copies.append(next(cop))
            recs.append(copies[-1])
        else:
            recs.extend(copies[-3:])
    produce(bootstrap, topic, recs)
    return [r.key for r in recs if r.key is not None]


def test_mm2_restart_duplicates_are_placed_by_identity_and_the_group_moves_exactly(local_env, unique):
    """The target side holds a restart's re-run of three copies before the group's position (partition 0) and
    another after it (partition 1): both partitions are placed exactly, every duplicate is counted, and the
    consumer on the source side sees every record once (the re-run past the position is on the target, which
    the group leaves)."""
    src_bs, tgt_bs = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"two-origin-restart-{unique}", f"app-{unique}"
    for bs in (src_bs, tgt_bs):
        create_topic(bs, topic, partitions=2)
    layouts = {0: {SRC: "n" * 10 + "c" * 10 + "nc" * 20, TGT: "n" * 10 + "c" * 10 + "R" + "nc" * 20},
               1: {SRC: "n" * 10 + "c" * 10 + "nc" * 20, TGT: "n" * 10 + "c" * 10 + "nc" * 5 + "R" + "nc" * 15}}
    keys = {SRC: {}, TGT: {}}
    for p, layout in layouts.items():
        keys[SRC][p] = build_with_rerun(src_bs, topic, SRC, TGT, p, layout[SRC])
        keys[TGT][p] = build_with_rerun(tgt_bs, topic, TGT, SRC, p, layout[TGT])
    position = {0: 23, 1: 20}  # past the re-run on partition 0; before it on partition 1
    commit_group(tgt_bs, group, topic, position)
    src = AdminSession.for_endpoint("source", local_env.source())
    tgt = AdminSession.for_endpoint("target", local_env.target())
    plans = translate_commits(tgt, TGT, src, SRC, tgt.committed(group))
    for p in layouts:
        t = plans[(topic, p)]
        assert t.proven and t.exact and t.duplicates == {"source": 3}, t.as_dict()
        assert t.consumed == {SRC: 10, TGT: 10} == t.covered and t.offset == 20
    src.alter_committed(group, {tp: t.offset for tp, t in plans.items()})
    moved = src.committed(group)
    for p in layouts:
        before = keys[TGT][p][:position[p]]
        after = [k for _, k in read_keys(src_bs, group, topic, p, moved[(topic, p)])]
        seen = before + after
        assert set(seen) == set(keys[SRC][p]) and len(set(seen)) == 2 * N
        # the only records seen twice are the re-run MM2 wrote before the group's position on the target
        assert sorted(k for k in set(seen) if seen.count(k) > 1) == (sorted(set(keys[TGT][p][20:23])) if p == 0 else [])
