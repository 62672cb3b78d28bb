"""Wall time of `make rehearse` phases (warm caches): environment start-up, produce, replication,
offset translation, Spark validation. Writes the 'Local rehearsal' section of docs/PERFORMANCE.md.

    .venv/bin/python bench/rehearsal_bench.py
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from msk_migrate.local.harness import LocalEnvironment  # noqa: E402
from msk_migrate.paths import LOCAL_DIR  # noqa: E402
from msk_migrate.runbook.rehearse import DEMO_TOPICS, rehearse  # noqa: E402
from perfdoc import write_section  # noqa: E402


def _rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def main() -> None:
    base = LOCAL_DIR / "bench-rehearsal"
    t0 = time.time()
    res = rehearse(base_dir=base, with_monitoring=True)
    wall = time.time() - t0
    status = LocalEnvironment(base).status()
    pids = [p["pid"] for p in status.values() if isinstance(p, dict) and "pid" in p]
    rss = _rss_mib(pids)
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

Resident memory of the environment's processes after the run (brokers, Connect, Prometheus):
{rss:,.0f} MiB; peak RSS of this Python process (with Spark's driver JVM as a child not included):
{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB."""
    write_section("Local rehearsal (make rehearse)", body)
    print(body)


if __name__ == "__main__":
    main()
