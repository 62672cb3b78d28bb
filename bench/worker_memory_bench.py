"""The Connect worker's memory against the sizing model (``msk_migrate.config.worker_sizing``).

Drives bench/mm2_scale_bench.py (the same harness, shipped connector configs, sampler and full-GC live heap)
at several partition counts, keeps each run's figures in ``.local/worker-memory-bench/<partitions>-<heap>.json``
instead of the scale bench's own section, and writes the section "Worker memory model" of docs/PERFORMANCE.md:
every measurement beside the model's prediction for the same flow.

    .venv/bin/python bench/worker_memory_bench.py run --partitions 1000 3000 [--worker-heap 2g]
    .venv/bin/python bench/worker_memory_bench.py report

The scale bench's own 10,000-partition run of 2026-11-25 (docs/sizing.md) is kept as data below and shown beside
the runs of this bench: it measured the live heap after new topics and 240 s of quiet, not 30 s after the copy.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from msk_migrate.paths import LOCAL_DIR

OUT = LOCAL_DIR / "worker-memory-bench"

#: bench/mm2_scale_bench.py --broker-heap 2g --worker-heap 2g --precreate-target, 2026-11-25 19:32-19:44 UTC
#: (docs/sizing.md "Findings"): 1,000 topics x 10 partitions, 1,000 groups, tasks_max 4.
EARLIER = {
    "partitions": 10000, "topics": 1000, "groups": 1000, "tasks": 4, "worker_heap": "2g",
    "peak_rss": 2380.0, "peak_heap": 1825.0, "live_heap": 369.0, "idle_rss": 339.0,
    "date": "2026-11-25 19:32 UTC", "copied_s": 127.4,
    "command": "python bench/mm2_scale_bench.py --broker-heap 2g --worker-heap 2g --precreate-target",
}


def run(parts: int, worker_heap: str, broker_heap: str, tasks: int) -> dict[str, Any]:
    import mm2_scale_bench as scale

    captured: dict[str, Any] = {}

    def keep(_args: argparse.Namespace, fig: dict[str, Any]) -> None:  # instead of the scale bench's section
        captured.update(fig)

    scale.write = keep
    topics = max(1, parts // 10)
    argv = ["mm2_scale_bench.py", "--topics", str(topics), "--partitions", "10", "--groups", str(topics),
            "--tasks", str(tasks), "--broker-heap", broker_heap, "--worker-heap", worker_heap,
            "--new-topics", "0", "--translate-stall", "30", "--precreate-target"]
    sys.argv = argv
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    scale.main()
    fig = {k: captured.get(k) for k in ("peak_rss", "peak_heap", "live_heap", "idle_rss", "end_rss", "copied_s",
                                        "total_min")}
    fig.update(partitions=topics * 10, topics=topics, groups=topics, tasks=tasks, worker_heap=worker_heap,
               date=started, command="python bench/mm2_scale_bench.py " + " ".join(argv[1:]))
    return fig


def report() -> None:
    from msk_migrate.config.worker_sizing import FlowLoad, worker_memory
    from perfdoc import write_section

    runs = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
    runs = sorted([*runs, {**EARLIER, "earlier": True}], key=lambda r: (r["partitions"], r["date"]))
    rows = []
    for r in runs:
        need = worker_memory(FlowLoad(partitions=r["partitions"], tasks=r["tasks"]))
        rows.append(
            f"| {r['partitions']:,} | {r['tasks']} | {r['date']}{' (earlier run)' if r.get('earlier') else ''} | "
            f"-Xmx{r['worker_heap']} | {r['live_heap']:,.0f} | {need.live_mib:,.0f} | {r['peak_heap']:,.0f} | "
            f"{need.heap_mib:,} | {r['peak_rss']:,.0f} | {need.task_memory_mib:,} | {r['copied_s']:.0f} s |")
    cmds = "\n".join(f"- {r['partitions']:,} partitions: `{r['command']}`" for r in runs)
    body = f"""The worker's memory at three flow sizes (topics of 10 partitions of 50 records of 100 bytes, one stopped
group per topic committed half-way, the shipped `bulk` at-least-once configs, one worker, source and target single
KRaft brokers) beside the prediction of `msk_migrate.config.worker_sizing` for the same flow: at -Xmx2g (the JVM not
the limit: the live heap the model is fitted to) and at the model's own heap (does the figure hold the copy?). Live heap = heap used after
`jcmd GC.run` once the copy and the checkpoints are done; peak heap = the largest `GC.heap_info` "used" sampled every
2 s (G1 collects lazily under a 2 GiB ceiling, so this is what the JVM *took*, not what it *needed*); RSS peak =
`VmRSS` sampled every 2 s. The model's "live" is its base + per-partition state; its "heap" adds the in-flight
bound (fetch and producer buffers) and the headroom factor; its "task" adds the JVM's off-heap overhead. A row whose
worker runs at the model's heap (not 2g) is the check that the figure holds the copy: the worker neither died nor
restarted (a dead worker never finishes the copy; the bench would stop at its one-hour bound).

| partitions | tasks | run | worker | live heap (MiB) | model live | peak heap used | model heap | RSS peak | model task memory | every record copied after |
| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}

Commands (driven by `bench/worker_memory_bench.py run`, figures kept in `.local/worker-memory-bench/`):

{cmds}"""
    write_section("Worker memory model", body)
    print(body)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--partitions", type=int, nargs="+", default=[1000, 3000])
    r.add_argument("--worker-heap", default="2g")
    r.add_argument("--broker-heap", default="1g")
    r.add_argument("--tasks", type=int, default=4)
    sub.add_parser("report")
    args = ap.parse_args()
    if args.cmd == "report":
        report()
        return
    OUT.mkdir(parents=True, exist_ok=True)
    for parts in args.partitions:
        fig = run(parts, args.worker_heap, args.broker_heap, args.tasks)
        (OUT / f"{parts:06d}-{args.worker_heap}.json").write_text(json.dumps(fig, indent=1))
        print(json.dumps(fig), flush=True)


if __name__ == "__main__":
    main()
