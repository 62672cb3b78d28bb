"""Wall time of `make rehearse` steps (warm caches), from environment start-up to cleanup, and the peak
memory of the processes the rehearsal started (``msk_migrate.local.memory.PeakSampler``).
Writes the 'Local rehearsal' section of docs/PERFORMANCE.md.

    .venv/bin/python bench/rehearsal_bench.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from msk_migrate.local.harness import LocalEnvironment
from msk_migrate.local.memory import PeakSampler
from msk_migrate.paths import LOCAL_DIR
from msk_migrate.rehearsal import DEMO_TOPICS, rehearse
from perfdoc import write_section


def main() -> None:
    base = LOCAL_DIR / "bench-rehearsal"
    with PeakSampler(interval=0.5) as sampler:
        t0 = time.time()
        res = rehearse(base_dir=base, with_monitoring=True)
        wall = time.time() - t0
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
Prometheus and Spark's driver JVM), sampled every 0.5 s: {sampler.peak / 2**20:,.0f} MiB."""
    write_section("Local rehearsal (make rehearse)", body)
    print(body)


if __name__ == "__main__":
    main()
