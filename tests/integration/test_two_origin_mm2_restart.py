"""Issue 47, part 2: a real MirrorMaker 2 restart mid-copy on an active/active pair, then `offsets sync --exact-only`.

The pair as the active/active rehearsal builds it (rehearsal/topology/active_active.py: its flows, its context, its
steps): flow ``east`` (source -> target, the pair's worker) and ``west`` (target -> source, a worker of its own),
both with ``migration.mark_copies``. Producers write on both sides while both flows copy; mid-copy the east worker
is killed with SIGKILL and started again. Its tasks run at least once: a restarted MirrorSourceTask copies again
from its last committed source offset, so the target holds some source records twice, in order (a "re-run"). The
test counts them itself, by key (every record the producers write has a key of its own), so it fails for the
reason it names if MM2 happened to write none (the kill is repeated with more records in flight, bounded).

Once both sides hold the union and no more (the cut), both producers write a second round. Two stopped groups
read each side up to the cut (part of the partition: the second round follows) and commit; `msk-migrate offsets
sync --exact-only`, as the runbook runs it, moves one from the source to the target (whose log holds the re-run:
the duplicates are on the destination) and the other from the target to the source (the duplicates are among
what it consumed). Each must exit 0 with an exact certificate, 0 re-delivered and the duplicates counted; then a
consumer of each group reads on the other side: with what it read before it sees every record, and the only
records it reads on both sides are the ones the certificate declares as ``restart_duplicates_ahead``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.local.shape import make_shape
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.rehearsal.demo import commit, wait
from msk_migrate.rehearsal.result import RehearsalResult
from msk_migrate.rehearsal.topology import active_active, steps
from msk_migrate.rehearsal.topology.context import FlowCase, TopologyContext
from msk_migrate.topology.marks import mark_header

TIERS = ("kafka",)
pytestmark = pytest.mark.timeout(900)

TOPIC, PARTITIONS = active_active.TOPIC, active_active.PARTITIONS
RATE = 150  #: records per second each producer writes while the flows copy: enough that MM2 is mid-copy at the kill
ROUND_ONE = 1200  #: records per side in the round the kill interrupts (about 8 s of writing at RATE)
ROUND_TWO = 450  #: source records of round two, before the source app pauses (3 s at RATE)
BILLING_RATE = 60  #: billing records per second on the target through round two (and its kill)
ATTEMPTS = 3  #: kills at most; each later one with more records in flight
CATCH_UP = 150.0  #: seconds the copies may take to reach the union (a worker restart is in there)


def _writer(ctx: TopologyContext, role: str, tag: str, n: int, rate: float, stop: threading.Event,
            sent: list[str] | None = None) -> threading.Thread:
    """A producer on ``role`` writing up to ``n`` keyed records at ``rate`` per second until ``stop`` (round robin
    over the partitions, so every partition is mid-copy at once); the key ``<tag>-<i>`` is the record's identity
    for this test. ``sent`` gets every key written (all delivered: the flush is checked)."""

    def run() -> None:
        p = Producer(ctx.apps.config(ctx.endpoint(role).bootstrap_servers, **{"enable.idempotence": True, "linger.ms": 5}))
        t0 = time.time()
        for i in range(n):
            if stop.is_set():
                break
            key = f"{tag}-{i}"
            p.produce(TOPIC, key=key.encode(), value=f"{tag} record {i}".encode() * 4,
                      headers=[("app", tag.encode())], partition=i % PARTITIONS)
            if sent is not None:
                sent.append(key)
            p.poll(0)
            ahead = t0 + (i + 1) / rate - time.time()
            if ahead > 0:
                time.sleep(ahead)
        assert p.flush(60) == 0, f"{role}: {tag}'s records still unsent after 60 s"

    t = threading.Thread(target=run, name=f"writer-{tag}", daemon=True)
    t.start()
    return t


def _ends(ctx: TopologyContext, role: str) -> dict[int, int]:
    c = Consumer(ctx.apps.config(ctx.endpoint(role).bootstrap_servers, **{"group.id": f"ends-{time.time_ns()}"}))
    try:
        return {q: c.get_watermark_offsets(TopicPartition(TOPIC, q), timeout=10)[1] for q in range(PARTITIONS)}
    finally:
        c.close()


def _log(ctx: TopologyContext, role: str, ends: dict[int, int] | None = None) -> dict[int, list[tuple[int, str, bool]]]:
    """Every record of ``role``'s partitions up to ``ends`` (default: now) as (offset, key, carries the peer's mark)."""
    peer = "target" if role == "source" else "source"
    mark = mark_header(ctx.endpoint(peer).alias)
    ends = ends or _ends(ctx, role)
    out: dict[int, list[tuple[int, str, bool]]] = {q: [] for q in range(PARTITIONS)}
    c = Consumer(ctx.apps.config(ctx.endpoint(role).bootstrap_servers, **{
        "group.id": f"log-{time.time_ns()}", "enable.auto.commit": False, "isolation.level": "read_committed"}))
    try:
        c.assign([TopicPartition(TOPIC, q, 0) for q in range(PARTITIONS) if ends[q]])
        todo = {q for q in range(PARTITIONS) if ends[q]}
        deadline = time.time() + 60
        while todo and time.time() < deadline:
            for m in c.consume(1000, timeout=0.5):
                q = m.partition()
                if m.error() or q not in todo or m.offset() >= ends[q]:
                    continue
                out[q].append((m.offset(), m.key().decode(), any(k == mark for k, _ in m.headers() or [])))
                if m.offset() + 1 >= ends[q]:
                    todo.discard(q)
        assert not todo, f"{role}: partitions {sorted(todo)} not read to {ends} within 60 s"
        return out
    finally:
        c.close()


def _keys(log: dict[int, list[tuple[int, str, bool]]]) -> Counter[str]:
    return Counter(k for recs in log.values() for _o, k, _m in recs)


def _duplicates(log: dict[int, list[tuple[int, str, bool]]]) -> int:
    """Records beyond the first of their identity: what MM2 wrote twice (only copies may repeat; asserted)."""
    for recs in log.values():
        natives = Counter(k for _o, k, marked in recs if not marked)
        assert all(n == 1 for n in natives.values()), f"a native written twice: {[k for k, n in natives.items() if n > 1][:3]}"
    n = _keys(log)
    return sum(n.values()) - len(n)


def _caught_up(ctx: TopologyContext, written: set[str]) -> tuple[dict, dict] | None:
    """Both sides' logs once each holds every written identity and its end stood still for 3 s (the copies, a
    re-run included, are over), else None."""
    before = {r: _ends(ctx, r) for r in ("source", "target")}
    logs = {r: _log(ctx, r, before[r]) for r in ("source", "target")}
    if any(set(_keys(logs[r])) != written for r in logs):
        return None
    time.sleep(3)
    if {r: _ends(ctx, r) for r in ("source", "target")} != before:
        return None
    return logs["source"], logs["target"]


def _read_group(ctx: TopologyContext, role: str, group: str, until: dict[int, int] | None = None) -> list[str]:
    """What a consumer of ``group`` reads on ``role`` from its commits (else the start) to ``until`` (else the end),
    committing where it stops (then it is stopped: the group has no member)."""
    ends = until or _ends(ctx, role)
    c = Consumer(ctx.apps.config(ctx.endpoint(role).bootstrap_servers, **{
        "group.id": group, "enable.auto.commit": False, "isolation.level": "read_committed"}))
    try:
        start = {tp.partition: max(tp.offset, 0) for tp in c.committed([TopicPartition(TOPIC, q) for q in range(PARTITIONS)], timeout=10)}
        c.assign([TopicPartition(TOPIC, q, start[q]) for q in range(PARTITIONS)])
        todo = {q for q in range(PARTITIONS) if ends[q] > start[q]}
        out: list[str] = []
        deadline = time.time() + 60
        while todo and time.time() < deadline:
            for m in c.consume(500, timeout=0.5):
                q = m.partition()
                if m.error() or q not in todo or m.offset() >= ends[q]:
                    continue
                out.append(m.key().decode())
                if m.offset() + 1 >= ends[q]:
                    todo.discard(q)
        assert not todo, f"{group} on {role}: partitions {sorted(todo)} not read to their end within 60 s"
        commit(c, [TopicPartition(TOPIC, q, ends[q]) for q in range(PARTITIONS)])
        return out
    finally:
        c.close()


def _kill_east(ctx: TopologyContext) -> str:
    """SIGKILL the east flow's worker (the pair's), then start it again as ECS would start a replacement."""
    rec = ctx.env.proc(ctx.env.worker_name(0))
    assert rec is not None and rec.alive(), "east's worker (the pair's) is not running"
    os.kill(rec.pid, signal.SIGKILL)
    time.sleep(2)  # the producers keep writing while the worker is down
    t0 = time.time()
    ctx.env.restart_worker(0)
    return f"east killed (pid {rec.pid}), back in {time.time() - t0:.0f} s"


def _kill_east_mid_copy(ctx: TopologyContext, attempt: int, written: set[str]) -> str:
    """Round one: both sides write while both flows copy, and the east worker is killed mid-copy."""
    n = ROUND_ONE * (attempt + 1)
    stop = threading.Event()
    tags = {"source": f"orders-{attempt}", "target": f"billing-{attempt}"}
    writers = [_writer(ctx, role, tag, n, RATE * (attempt + 1), stop) for role, tag in tags.items()]

    def copied() -> int:
        return sum(c for k, c in _keys(_log(ctx, "target")).items() if k.startswith(f"{tags['source']}-"))

    # the copy is flowing (east has written some of this round's source records on the target) before the kill
    assert wait(lambda: copied() > RATE, 60, 0.2), "east copied nothing of the round within 60 s"
    time.sleep(1.5)  # well inside an offset flush interval's worth of copies since the last commit (2 s)
    what = _kill_east(ctx)
    for w in writers:
        w.join()
    written |= {f"{tag}-{i}" for tag in tags.values() for i in range(n)}
    return f"round one, attempt {attempt + 1}: {n} records per side at {RATE * (attempt + 1)}/s; {what}"


def _kill_east_after_its_last_copy(ctx: TopologyContext, attempt: int, written: set[str]) -> tuple[str, str]:
    """Round two: the source app writes ROUND_TWO records and pauses; the moment the target holds all their copies
    (before east's next offset commit, 2 s at most) east is killed, while the billing app keeps writing on the
    target through the restart. The target then holds, per partition, the round's copies, billing records written
    while east was down, and the re-run: a group that read the source into the pause is placed exactly before
    the re-run, so the re-run is ahead of it. Returns (what happened, the round's source tag)."""
    src_tag, tgt_tag = f"orders-pause-{attempt}", f"billing-pause-{attempt}"
    start = _ends(ctx, "target")
    tail = Consumer(ctx.apps.config(ctx.endpoint("target").bootstrap_servers, **{
        "group.id": f"tail-{time.time_ns()}", "enable.auto.commit": False, "fetch.wait.max.ms": 10}))
    tail.assign([TopicPartition(TOPIC, q, start[q]) for q in range(PARTITIONS)])
    billing: list[str] = []
    stop_billing, never = threading.Event(), threading.Event()
    writers = [_writer(ctx, "target", tgt_tag, 10**6, BILLING_RATE, stop_billing, billing),
               _writer(ctx, "source", src_tag, ROUND_TWO, RATE, never)]
    try:
        copies, deadline = 0, time.time() + 60
        while copies < ROUND_TWO and time.time() < deadline:
            copies += sum(1 for m in tail.consume(1000, timeout=0.05)
                          if not m.error() and m.key().decode().startswith(f"{src_tag}-"))
        assert copies == ROUND_TWO, f"east copied {copies} of {ROUND_TWO} within 60 s"
        what = _kill_east(ctx)
    finally:
        tail.close()
    time.sleep(3)  # billing records after the re-run too
    stop_billing.set()
    for w in writers:
        w.join()
    written |= {f"{src_tag}-{i}" for i in range(ROUND_TWO)} | set(billing)
    return f"round two, attempt {attempt + 1}: {ROUND_TWO} source records, then paused; {len(billing)} billing; {what}", src_tag


def _ahead_position(src: list[tuple[int, str, bool]], tgt: list[tuple[int, str, bool]], rerun_tag: str) -> tuple[int, int, int] | None:
    """For one partition: a source position a group can stop at, inside the source app's pause, whose exact
    counterpart on the target lies before the re-run of ``rerun_tag``'s copies; computed by key, apart from the
    product. Returns (source position, target offset, re-run records past it that the group consumed) or None
    when the partition holds no re-run or no billing record between the round's last copy and the re-run."""
    seen: set[str] = set()
    rerun = None
    for off, key, marked in tgt:
        if marked and key in seen and key.startswith(f"{rerun_tag}-"):
            rerun = off
            break
        seen.add(key)
    if rerun is None:
        return None
    natives = [(off, key) for off, key, marked in tgt if not marked]
    last_copy = max(off for off, _k, marked in tgt if marked and off < rerun)
    gap = [i for i, (off, _k) in enumerate(natives) if last_copy < off < rerun]
    if not gap:
        return None
    b1 = gap[-1]  # the group consumed billing records 0..b1-1: the last one written while east was down is next
    copies = [(off, key) for off, key, marked in src if marked]
    assert copies[b1 - 1][1] == natives[b1 - 1][1], "west's copies not in the billing app's order"
    position = copies[b1 - 1][0] + 1
    consumed = {key for off, key, _m in src if off < position}
    placed = natives[b1][0]
    # the exact point, by the definition: before it the target holds exactly the records consumed, each at least once
    assert {key for off, key, _m in tgt if off < placed} == consumed, "no exact point before the re-run"
    return position, placed, sum(1 for off, key, _m in tgt if off >= placed and key in consumed)


def _move(ctx: TopologyContext, flow: FlowCase, group: str, certs: Path) -> tuple[dict, dict]:
    """`msk-migrate offsets sync --exact-only` as the runbook runs it (each flow moves groups into its own target:
    west's target is the source); exit 0 or the test fails naming the refusal. Returns (output, certificate)."""
    code, doc, err = ctx.cli("offsets", "sync", "--config", str(ctx.flow_file(flow)), "--group", group,
                             "--to", "target", "--exact-only", "--certificate", str(certs))
    assert code == 0, f"{group} via {flow.label}: exit {code}: {err[-800:]}"
    return doc, json.loads((certs / f"offset-certificate-{group}.json").read_text())


def test_a_real_mm2_restart_on_active_active_then_offsets_sync_exact_only_places_every_group(tmp_path: Path):
    t_start = time.time()
    notes: list[str] = []
    base = LOCAL_DIR / "test-two-origin-restart" / "env"
    shape = make_shape(peer_brokers=0)
    env = LocalEnvironment(base, with_monitoring=False, progress=lambda m: None, shape=shape)
    ctx = TopologyContext(env=env, say=lambda m: None, result=RehearsalResult(status={}), timeout=CATCH_UP,
                          flows=active_active.flows(shape.target.replication_factor))
    east, west = ctx.flows["east"], ctx.flows["west"]
    shutil.rmtree(ctx.work_dir, ignore_errors=True)  # flow files and their ledgers: a previous run's moves not in this one's
    try:
        steps.environment_up(ctx)
        for role, tag in (("source", "orders"), ("target", "billing")):
            steps.create_and_fill(ctx, role, {TOPIC: (PARTITIONS, 0)}, tag)
        for flow in (east, west):
            steps.apply_flow(ctx, flow)
        notes.append(f"up and copying after {time.time() - t_start:.0f} s")

        # round one, with a kill mid-copy; repeated (bounded) until MM2 really wrote some records twice
        written: set[str] = set()
        for attempt in range(ATTEMPTS):
            notes.append(_kill_east_mid_copy(ctx, attempt, written))
            logs = wait(lambda: _caught_up(ctx, written), CATCH_UP, 2)
            assert logs, f"the union of {len(written)} records not on both sides within {CATCH_UP:.0f} s: " + "; ".join(notes)
            dups = {"source": _duplicates(logs[0]), "target": _duplicates(logs[1])}
            notes.append(f"restart duplicates by key: {dups}")
            if sum(dups.values()):
                break
        assert sum(dups.values()) > 0, "MM2 wrote no record twice after any of the kills: " + "; ".join(notes)
        cut = {"source": _ends(ctx, "source"), "target": _ends(ctx, "target")}  # both sides hold the union, no more

        # round two: the source app pauses, east is killed after its last copy (bounded retries, as above)
        for attempt in range(ATTEMPTS):
            what, rerun_tag = _kill_east_after_its_last_copy(ctx, attempt, written)
            notes.append(what)
            final = wait(lambda: _caught_up(ctx, written), CATCH_UP, 2)
            assert final, f"round two not on both sides within {CATCH_UP:.0f} s: " + "; ".join(notes)
            rerun = sum(c - 1 for k, c in _keys(final[1]).items() if k.startswith(f"{rerun_tag}-"))
            notes.append(f"round two: {rerun} of its copies written twice")
            if rerun:
                break
        assert rerun > 0, "MM2 re-ran none of round two's copies after any of the kills: " + "; ".join(notes)
        logs_by_role = {"source": final[0], "target": final[1]}
        total_dups = _duplicates(final[0]) + _duplicates(final[1])

        # where a group that read the source into the pause stops, per partition (the cut where none can)
        ahead_at = {q: _ahead_position(final[0][q], final[1][q], rerun_tag) for q in range(PARTITIONS)}
        assert any(ahead_at.values()), f"no partition with billing records between round two's copies and the re-run: {notes}"
        notes.append(f"app-restart-ahead stops per partition at (source position, target offset, re-run ahead): {ahead_at}")
        moves = {"app-restart-east": (east, "source", "target", cut["source"]),
                 "app-restart-west": (west, "target", "source", cut["target"]),
                 "app-restart-ahead": (east, "source", "target",
                                       {q: a[0] if a else cut["source"][q] for q, a in ahead_at.items()})}
        for group, (flow, frm, to, until) in moves.items():
            before = _read_group(ctx, frm, group, until=until)  # read part of the side, committed where it stopped
            doc, cert = _move(ctx, flow, group, tmp_path / f"certificates-{group}")
            tot = cert["totals"]
            notes.append(f"{group} {frm} -> {to}: verdict {cert['verdict']}, totals {tot}")
            assert doc["verdict"] == cert["verdict"] == "exact", notes[-1]
            assert tot["partitions"] == PARTITIONS and tot["exact"] == PARTITIONS and tot["redelivered"] == 0, notes[-1]
            # the certificate counts every record MM2 wrote twice on both sides of the group's partitions: as counted here
            assert tot["restart_duplicates"] == total_dups > 0, f"{notes[-1]}; counted by key: {total_dups}"
            if group == "app-restart-ahead":
                placed = {p["partition"]: (p["offset"], p["restart_duplicates_ahead"]) for p in cert["partitions"]}
                want = {q: a[1:] for q, a in ahead_at.items() if a}
                assert {q: placed[q] for q in want} == want, f"placed (offset, ahead) {placed}, by key {want}"
                assert tot["restart_duplicates_ahead"] == sum(a for _o, a in want.values()) > 0, notes[-1]
            after = _read_group(ctx, to, group)  # a consumer of the group reads on the other side
            seen = Counter(before) + Counter(after)
            assert set(seen) == written, f"{group}: {len(written - set(seen))} record(s) never read"
            # read on both sides of the move: only what the certificate declares MM2 wrote twice past the placed offsets
            read_before = set(before)
            both = Counter(k for k in after if k in read_before)
            assert sum(both.values()) == tot["restart_duplicates_ahead"], f"{group}: {sum(both.values())} read again, {notes[-1]}"
            on_dest = _keys(logs_by_role[to])
            assert all(on_dest[k] > 1 for k in both), f"{group}: re-read records MM2 wrote once: {sorted(both)[:5]}"
            # on each side, a record read twice is one that side holds twice (MM2's, not the move's)
            for part, where in ((before, frm), (after, to)):
                held = _keys(logs_by_role[where])
                twice = [k for k, n in Counter(part).items() if n > held[k]]
                assert not twice, f"{group} on {where}: read more often than written there: {twice[:5]}"
        notes.append(f"done in {time.time() - t_start:.0f} s")
        print("\n".join(notes))  # the figures in the CI log (-s / on failure)
    finally:
        env.down(wipe=True)
