"""Operator commands at scale: `lag`, `offsets verify`, `cutover check`, `preflight`, `cleanup` and
`rollback plan` on the local clusters holding TOPICS x PARTITIONS partitions and GROUPS consumer groups.

The load (see :func:`build_load`): every topic on the source and the target with RECORDS records per
partition (the target's are the same records with the same timestamps, as MM2 copies them); each group
commits on two topics (source and target, the same offsets: translated, nothing ahead); the flow's
MirrorSourceConnector exists STOPPED with Connect offsets that say every topic is copied except the first
``--behind-topics`` (BEHIND records short per partition: `lag` mid-copy).

Each command runs ``--repeat`` times interleaved, ``before`` (another checkout's msk-migrate, e.g.
main's venv: ``--before /work/main/.venv/bin/msk-migrate``) and ``after`` (this checkout). Per run:
wall seconds and the command process's peak RSS (``wait4``). The table goes to docs/PERFORMANCE.md.

    MSK_MIGRATE_LOCAL_BROKER_HEAP=1g python bench/scale_bench.py --topics 1000 --partitions 10 --groups 1000 \
        --before /work/main/.venv/bin/msk-migrate
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kafka_load import create_topics_served
from msk_migrate.config.migration import MigrationSpec
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors
from msk_migrate.local.harness import LocalEnvironment
from perfdoc import write_section

AFTER = str(Path(sys.executable).with_name("msk-migrate"))


def topic_name(i: int) -> str:
    return f"scale-{i:04d}"


def group_name(i: int) -> str:
    return f"scale-g{i:04d}"


def migration(name: str = "scale") -> MigrationSpec:
    return MigrationSpec(name=name, topics=["scale-.*"], groups=["scale-g.*"], tasks_max=2, replication_factor=1,
                         internal_replication_factor=1)


def create_topics(bootstrap: str, topics: int, partitions: int) -> None:
    create_topics_served(AdminClient({"bootstrap.servers": bootstrap}), [topic_name(i) for i in range(topics)],
                         partitions, bootstrap)


def produce(bootstrap: str, topics: int, partitions: int, records: int, ts0: int) -> None:
    """``records`` distinct records a partition with timestamps from ``ts0``: written with the same ``ts0``
    to both clusters, the target holds what MM2 would have copied (same key, value, headers, timestamp),
    so `offsets verify` can prove each placement by record identity as it does on a real migration."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.num.messages": 10000,
                  "queue.buffering.max.messages": 1_000_000,
                  "enable.idempotence": True, "message.timeout.ms": 600_000})  # exact counts on a loaded machine
    errors: list[str] = []

    def delivered(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    for i in range(topics):
        for part in range(partitions):
            for r in range(records):
                p.produce(topic_name(i), b"%d-%d-%d " % (i, part, r) + b"v" * 24, partition=part, timestamp=ts0 + r,
                          on_delivery=delivered)
        p.poll(0)
    # New partitions may have no leader yet: wait for every record (the load's counts are asserted exactly).
    left = p.flush(600)
    if left or errors:
        raise RuntimeError(f"producing the scale load to {bootstrap}: {left} record(s) undelivered, errors {errors[:3]}")


def commit_groups(bootstrap: str, groups: int, topics: int, partitions: int, offset: int, window: int = 16) -> None:
    """Group i commits ``offset`` on every partition of topics i and i+1 (mod topics), ``window`` requests in
    flight; a request that fails (a loaded machine, topics just created, the offsets topic loading) is retried
    (up to 6 times) until every partition's commit is accepted."""
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def request(g: int):
        tps = [TopicPartition(topic_name(t % topics), p, offset) for t in (g, g + 1) for p in range(partitions)]
        return admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group_name(g), tps)],
                                                  request_timeout=120)[group_name(g)]

    for start in range(0, groups, window):
        todo = list(range(start, min(start + window, groups)))
        for attempt in range(6):
            futs = {g: request(g) for g in todo}
            todo = []
            for g, f in futs.items():
                try:
                    res = f.result()
                    failed = [tp.error for tp in res.topic_partitions if tp.error is not None]
                    if failed:  # per-partition errors do not fail the future (topics just created, coordinator loading)
                        raise KafkaException(failed[0])
                except KafkaException:
                    if attempt == 5:
                        raise
                    todo.append(g)
            if not todo:
                break
            time.sleep(2)


def stop_source_connector_with_offsets(env: LocalEnvironment, m: MigrationSpec, topics: int, partitions: int,
                                       records: int, behind_topics: int, behind: int) -> None:
    """The flow's source connector, STOPPED, with Connect offsets: every record copied except ``behind`` per
    partition of the first ``behind_topics`` topics (what `lag` reads, without copying 10,000 partitions)."""
    client = ConnectClient(env.status()["connect"]["url"])
    configs = render_connectors(env.source(), env.target(), m)
    name = m.connector_names()["source"]
    if name not in client.connectors():
        client.create_stopped(name, {k: v for k, v in configs[name].items() if k != "name"})
    offsets = [{"partition": {"cluster": env.source().alias, "topic": topic_name(t), "partition": p},
                "offset": {"offset": records - 1 - (behind if t < behind_topics else 0)}}
               for t in range(topics) for p in range(partitions)]
    for i in range(0, len(offsets), 2000):
        client.alter_offsets(name, offsets[i:i + 2000])


def committed_at(a: argparse.Namespace) -> int:
    """The offset every group commits: half-way by default, or ``--group-lag`` records before the end."""
    return a.records // 2 if a.group_lag is None else max(a.records - a.group_lag, 0)


def build_load(env: LocalEnvironment, a: argparse.Namespace) -> None:
    src, tgt = env.source().bootstrap_servers, env.target().bootstrap_servers
    ts0 = int(time.time() * 1000) - 3_600_000
    for label, fn in (
        ("topics on the source", lambda: create_topics(src, a.topics, a.partitions)),
        ("topics on the target", lambda: create_topics(tgt, a.topics, a.partitions)),
        ("records on the source", lambda: produce(src, a.topics, a.partitions, a.records, ts0)),
        ("records on the target (as MM2 copies them)", lambda: produce(tgt, a.topics, a.partitions, a.records, ts0)),
        ("groups on the source", lambda: commit_groups(src, a.groups, a.topics, a.partitions, committed_at(a))),
        ("groups on the target", lambda: commit_groups(tgt, a.groups, a.topics, a.partitions, committed_at(a))),
        ("stopped source connector with offsets",
         lambda: stop_source_connector_with_offsets(env, migration(), a.topics, a.partitions, a.records, a.behind_topics, a.behind)),
    ):
        t0 = time.time()
        fn()
        print(f"  {label}: {time.time() - t0:.1f} s", flush=True)


def producers_moved(flow: Path, topic: str) -> None:
    """What `cutover confirm` records before `rollback plan` acts on a topic: its producers moved (the ledger),
    recorded once per load."""
    from msk_migrate.config.flow import read_flow
    from msk_migrate.ledger import Change, ledger_for

    ledger = ledger_for(read_flow(None, flow))
    view = ledger.read()
    if view.state_of("topic", topic) != "producers-moved":
        ledger.append(view, [Change("topic", topic, "producers-moved", detail="producers write to the target")], "scale bench")


def flow_file(env: LocalEnvironment, d: Path) -> Path:
    path = d / "scale-flow.yaml"
    path.write_text(yaml.safe_dump({
        "source": {"alias": "source", "bootstrap_servers": env.source().bootstrap_servers},
        "target": {"alias": "target", "bootstrap_servers": env.target().bootstrap_servers},
        "migration": migration().model_dump(),
        "worker": {"replication_factor": 1},
    }))
    return path


#: The row of the floor in the table (not a command of msk-migrate: :func:`floor_args`).
FLOOR = "floor: one ListOffsets round"


def floor_args(env: LocalEnvironment, a: argparse.Namespace) -> list[str]:
    """The floor as its own process (:func:`kafka_load.list_offsets_floor`): Python start-up, confluent-kafka
    and one ListOffsets round over every partition of the load on each cluster, in flight together."""
    return [str(Path(__file__).resolve().with_name("kafka_load.py")),
            f"{env.source().bootstrap_servers},{env.target().bootstrap_servers}", "scale-", str(a.topics), str(a.partitions)]


def scoped_groups(groups: int) -> int:
    """How many groups the scoped `offsets verify` names: a third (at least 1), so its peak beside the full
    run's shows whether memory grows with the groups (at 1,000 groups both runs hold more than one chunk
    of :func:`msk_migrate.runbook.group_offsets.iter_offset_rows`' 256 groups)."""
    return max(groups // 3, 1)


def commands(flow: Path, connect_url: str, groups: int = 10) -> dict[str, list[str]]:
    common = ["--config", str(flow)]
    few = scoped_groups(groups)
    return {
        "lag": ["lag", *common, "--connect-url", connect_url, "--output", "json"],
        "offsets verify": ["offsets", "verify", *common, "--output", "json"],
        f"offsets verify, {few:,} of the groups": ["offsets", "verify", *common, "--output", "json",
                                                   *(x for g in range(few) for x in ("--group", group_name(g)))],
        "cutover check": ["cutover", "check", *common, "--connect-url", connect_url, "--group", group_name(1), "--output", "json"],
        "preflight": ["preflight", *common, "--output", "json"],
        "cleanup": ["cleanup", *common, "--output", "json"],
        "rollback plan": ["rollback", "plan", *common, "--topic", topic_name(1), "--output", "json"],
    }


def high_water_mib(pid: int) -> float | None:
    """The process's own peak RSS so far (``VmHWM``: per address space, so it starts again at exec -- unlike
    ``ru_maxrss``, which keeps the pre-exec peak of the forked bench process)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes ``pids`` have used so far (``/proc/<pid>/stat``)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return total / os.sysconf("SC_CLK_TCK")


#: One run: wall seconds, peak RSS MiB, exit code, the command's CPU seconds, the brokers' CPU seconds meanwhile.
Run = tuple[float | None, float | None, int | None, float | None, float | None]


def run_once(exe: str, args: list[str], timeout: float, brokers: Sequence[int] = ()) -> Run:
    """One run; all None when it ran past ``timeout``. The peak is the command process's VmHWM, read every
    50 ms until it exits; its CPU is its own and its threads' (``wait4``); the brokers' CPU is what the
    ``brokers`` processes used while it ran (the machine's cores serve both)."""
    t0 = time.perf_counter()
    b0 = cpu_seconds(list(brokers))
    peak = 0.0
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([exe, *args], stdout=out, stderr=err)
        deadline = time.time() + timeout
        while True:
            hwm = high_water_mib(proc.pid)
            peak = max(peak, hwm or 0.0)
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                wall = time.perf_counter() - t0
                proc.returncode = os.waitstatus_to_exitcode(status)
                if proc.returncode not in (0, 1):  # an error: its one line, so a table never hides it
                    err.seek(0)
                    print(f"    {exe} {args[0]}: exit {proc.returncode}: {err.read().decode(errors='replace').strip()[-300:]}")
                return wall, peak, proc.returncode, usage.ru_utime + usage.ru_stime, cpu_seconds(list(brokers)) - b0
            if time.time() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                return None, None, None, None, None
            time.sleep(0.05)


def identity_coverage(flow: Path) -> str:
    """One untimed `offsets verify` of this checkout: how many group-partitions it counted by record identity."""
    proc = subprocess.run([AFTER, *commands(flow, "")["offsets verify"]], capture_output=True, text=True, timeout=600)
    try:
        rows = json.loads(proc.stdout)["rows"]
    except (ValueError, KeyError):
        return f"`offsets verify` gave no JSON document (exit {proc.returncode})"
    by_identity = sum(r["redelivery_by"] == "identity" for r in rows)
    again = sum(r["redelivery"] or 0 for r in rows)
    return (f"`offsets verify` counted {by_identity:,} of {len(rows):,} group-partitions by record identity (placement "
            f"proven), {again:,} records re-delivered in all, verdict {json.loads(proc.stdout)['verdict']}")


def fmt(values: list[float | None], unit: str, timeout: float) -> str:
    if not values:
        return "-"
    if any(v is None for v in values):
        return f"> {timeout:.0f} s (stopped)" if unit == "s" else "-"
    vals = [v for v in values if v is not None]
    med = statistics.median(vals)
    spread = f" ({min(vals):.1f}-{max(vals):.1f})" if len(vals) > 1 else ""
    return f"{med:.1f}{spread}" if unit == "s" else f"{med:.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--records", type=int, default=20, help="records per partition")
    ap.add_argument("--behind-topics", type=int, default=100, help="topics the connector's offsets leave behind")
    ap.add_argument("--behind", type=int, default=10, help="records behind per partition of those topics")
    ap.add_argument("--group-lag", type=int, default=None,
                    help="records each group is behind the end (default: half the partition; a cutover: a few)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", help="msk-migrate of the code to compare with (e.g. /work/main/.venv/bin/msk-migrate)")
    ap.add_argument("--before-repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds before a run is stopped")
    ap.add_argument("--dir", type=Path, default=None, help="harness directory (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="leave the clusters running")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--section", default="Operator commands at scale",
                    help="the PERFORMANCE.md section written (another shape of load: another section)")
    a = ap.parse_args()

    base = a.dir or Path(tempfile.mkdtemp(prefix="msk-scale-"))
    env = LocalEnvironment(base, progress=lambda s: print(f"  {s}", flush=True))
    load_avg = []
    try:
        t0 = time.time()
        env.up()
        print(f"harness up in {time.time() - t0:.0f} s ({base})", flush=True)
        marker = base / "scale-load.json"  # with --keep --dir: a later run reuses the load it finds
        shape = json.dumps({"load": 2,  # 2: the target holds copies of the source's records (identity provable)
                            **{k: getattr(a, k) for k in ("topics", "partitions", "groups", "records", "group_lag", "behind_topics", "behind")}})
        if marker.exists() and marker.read_text() == shape:
            print("  the load is already there (same shape): reused", flush=True)
        else:
            build_load(env, a)
            marker.write_text(shape)
        flow = flow_file(env, base)
        producers_moved(flow, topic_name(1))
        if a.repeat == 0:  # the load only (with --keep: built for later runs)
            return
        cmds = {FLOOR: floor_args(env, a), **commands(flow, env.status()["connect"]["url"], a.groups)}
        brokers = [rec.pid for name, rec in env.state().procs.items() if "-broker" in name]
        results: dict[tuple[str, str], list[Run]] = {}
        for rnd in range(a.repeat):
            for name, args in cmds.items():  # interleaved: before and after of a command back to back
                sides = [("after", AFTER)] + ([("before", a.before)] if a.before and rnd < a.before_repeat else [])
                if name == FLOOR:  # the same either side: confluent-kafka alone, no msk-migrate
                    sides = [("after", sys.executable)]
                for side, exe in sides:
                    load_avg.append(os.getloadavg()[0])
                    r = run_once(exe, args, a.timeout, brokers)
                    results.setdefault((name, side), []).append(r)
                    print(f"  round {rnd + 1} {side:6} {name:15} {r[0] if r[0] is None else round(r[0], 2)} s, "
                          f"{r[1] if r[1] is None else round(r[1])} MiB, exit {r[2]}", flush=True)
        rows = ["| command | before: s | before: peak MiB | after: s (median, min-max) | after: peak MiB "
                "| after: CPU s, command | after: CPU s, brokers meanwhile | exit |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name in cmds:
            after, before = results.get((name, "after"), []), results.get((name, "before"), [])
            rows.append(f"| `{name}` | {fmt([r[0] for r in before], 's', a.timeout)} | {fmt([r[1] for r in before], 'MiB', a.timeout)} "
                        f"| {fmt([r[0] for r in after], 's', a.timeout)} | {fmt([r[1] for r in after], 'MiB', a.timeout)} "
                        f"| {fmt([r[3] for r in after], 's', a.timeout)} | {fmt([r[4] for r in after], 's', a.timeout)} "
                        f"| {', '.join(sorted({str(r[2]) for r in after}))} |")
        table = "\n".join(rows)
        print(table)
        load = f"1-min load average during the runs: {min(load_avg):.1f}-{max(load_avg):.1f} on {os.cpu_count()} cores"
        body = (f"{a.topics * a.partitions:,} partitions ({a.topics:,} topics x {a.partitions}), {a.groups:,} groups "
                f"(each on 2 topics: {a.groups * 2 * a.partitions:,} group-partitions), {a.records} records a partition, "
                f"every group committed at offset {committed_at(a)}; "
                + (f"the source connector's offsets leave {a.behind_topics} topics {a.behind} records behind a partition "
                   f"(`lag` mid-copy)" if a.behind_topics else
                   "the copy is finished (the source connector's offsets at every partition's end)")
                + f". Brokers' heap: {os.environ.get('MSK_MIGRATE_LOCAL_BROKER_HEAP', '384m')}. "
                f"after = this branch ({a.repeat} runs, interleaved), before = `{a.before or '-'}` "
                f"({a.before_repeat} run(s); a run past {a.timeout:.0f} s is stopped). Seconds are wall time of the whole "
                f"command process (Python start-up included); peak MiB is that process's VmHWM (its peak RSS), read every 50 ms; "
                f"CPU s is the command's user + system time (its threads included) and the brokers' (both clusters) while it "
                f"ran: on {os.cpu_count()} cores no run can take less wall time than their sum divided by the cores. "
                f"The floor is one ListOffsets round (latest) over all {a.topics * a.partitions:,} partitions on each cluster, "
                f"both in flight together, as its own process importing confluent-kafka only (`bench/kafka_load.py`); "
                f"`offsets verify, {scoped_groups(a.groups):,} of the groups` names that many groups with `--group` "
                f"(its peak beside the full run's: memory against the number of groups). {load}.\n\n{table}\n\n"
                f"{identity_coverage(flow)}.\n")
        print(body)
        if not a.no_doc:
            write_section(a.section, body)
    finally:
        if not a.keep:
            env.down(wipe=True)
            if a.dir is None:
                shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
