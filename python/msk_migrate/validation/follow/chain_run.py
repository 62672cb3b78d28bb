"""``msk-migrate validate --follow --once --engine spark``: one chained Spark run on the persisted mark
(:func:`.spark_chain.chain_pass`), as data (an :class:`~msk_migrate.outcome.Outcome` of the follower's shape).

For volumes beyond one follower task the same incremental logic runs as Spark batch jobs, each started on a
schedule (cron, an EventBridge rule, an Airflow task) and each starting where the last one left the mark. Before
the job: the mark is checked against the clusters exactly as the follower checks it (other clusters, a recreated
topic, a changed partition count: exit 2, nothing written), partitions retention truncated are marked so, new
partitions are added, and that checked mark is persisted; then Spark compares ``[mark, end)`` per partition and
writes the advanced mark. Exit 0 proven, 1 a mismatch, a truncated partition or nothing proven at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...access.secrets import SecretResolver
from ...access.spark_options import spark_kafka_options
from ...outcome import Outcome, col, quiet
from ..request import ValidationRequest
from .follower import Clusters, FollowOptions, prepare
from .run import _verdict, marks_view
from .store import MarkStore


def follow_chained(req: ValidationRequest, opts: FollowOptions, spark: Any = None,
                   say: Callable[[str], None] = quiet) -> Outcome:
    """One chained Spark run (see the module doc); ``spark``: a session to use (default: a local one)."""
    from .spark_chain import chain_pass

    store = MarkStore(opts.mark)
    store.check_writable()
    clusters = Clusters.open(req, opts.migration)
    talked = {"source": req.source.bootstrap_servers, "target": req.target.bootstrap_servers, "mark": str(store)}
    say("reading both clusters' metadata and the mark")
    facts = clusters.facts()
    mark, truncated = prepare(store, facts)
    store.save(mark)  # the checked mark (truncations, new partitions) is what the job starts from
    if spark is None:
        from ..spark_local import local_spark

        say("starting Spark (local)")
        spark = local_spark()
    resolver = SecretResolver()
    src_opts, tgt_opts = (spark_kafka_options(role, getattr(req, role), resolver, req.isolation_level, req.kafka_options)
                          for role in ("source", "target"))
    say("comparing every partition from its mark to its end (Spark)")
    written, advances = chain_pass(spark, store, facts, src_opts, tgt_opts, clusters.no_ts, clusters.source_ends)
    verdict, code = _verdict(written)
    rows: list[dict[str, Any]] = []
    for (t, p), pm in written.items():
        a = advances.get((t, p))
        row: dict[str, Any] = {"topic": t, "partition": p, "state": pm.state, "source_verified_up_to": pm.source_next,
                               "target_verified_up_to": pm.target_next, "compared": pm.compared,
                               "proven_this_run": a.proven if a is not None else 0}
        if pm.mismatch is not None:
            row["mismatch"] = pm.mismatch
        rows.append(row)
    notes = [f"mark: {store} (one chained Spark run; the next run, or a follower, starts from it)"]
    if truncated:
        notes.append(f"[red]truncated: retention deleted source records past the mark of {len(truncated)} partition(s)[/]")
    return Outcome("validate --follow", verdict, code, rows, talked,
                   extra={"mark": str(store), "migration": written.migration, "verdict_reason": verdict, "engine": "spark"},
                   views=[marks_view("proof: verified-up-to marks (chained Spark run)",
                                     col("this run", "proven_this_run", numeric=True))],
                   notes=notes)
