"""Wall time of `make rehearse` phases (warm caches): environment start-up, produce, replication,
offset translation, Spark validation. Writes the 'Local rehearsal' section of docs/PERFORMANCE.md.

    .venv/bin/python bench/rehearsal_bench.py
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.rehearsal import DEMO_TOPICS, rehearse
from perfdoc import write_section


def _tree_rss_mib(root: int) -> float:
    """RSS of ``root`` and all its descendants (brokers, Connect, Prometheus, Spark's JVM)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kb = next((int(line.split()[1]) for line in (d / "status").read_text().splitlines()
                       if line.startswith("VmRSS:")), 0)
        except (OSError, StopIteration, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
        rss[int(d.name)] = kb
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / 1024


class PeakSampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, _tree_rss_mib(os.getpid()))
            self.stop.wait(0.5)


def main() -> None:
    base = LOCAL_DIR / "bench-rehearsal"
    sampler = PeakSampler()
    sampler.start()
    t0 = time.time()
    res = rehearse(base_dir=base, with_monitoring=True)
    wall = time.time() - t0
    sampler.stop.set()
    sampler.join()
    LocalEnvironment(base).down(wipe=True)
    if not res.ok:
        raise SystemExit(f"rehearsal did not succeed: {res.to_dict()}")
    records = sum(n for _, n, _ in DEMO_TOPICS.values())
    rows = "\n".join(f"| {k.replace('_', ' ')} | {v:.1f} s |" for k, v in res.seconds.items())
    body = f"""Records produced: {records:,} in {len(DEMO_TOPICS)} topics; validation verdict: {res.validation.get('verdict')}
({res.validation.get('records_compared')} records compared).

| phase | wall time |
| --- | --- |
{rows}
| whole command | {wall:.1f} s |

Peak resident memory of the whole process tree (this Python process, both brokers, Connect,
Prometheus and Spark's driver JVM), sampled every 0.5 s: {sampler.peak:,.0f} MiB."""
    write_section("Local rehearsal (make rehearse)", body)
    print(body)


if __name__ == "__main__":
    main()
