"""``msk-migrate validate --follow``: the follower's run, as data (an :class:`~msk_migrate.outcome.Outcome`).

``--once``: check the mark, one pass, persist, return the partitions' marks (exit 0 proven, 1 a mismatch,
a truncated partition, or nothing proven at all: a verdict on nothing is never a pass). Without it: passes
every ``--interval`` seconds until SIGTERM/SIGINT, the mark persisted after every pass and on the way out.
Where copies are marked the outcome says it compared per origin (``compare: per-origin``, the aliases) and gives
each origin's records per partition and in all (:func:`origin_counts`).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

from ...outcome import Outcome, View, col, quiet
from ..request import ValidationRequest
from .cluster_facts import prepare
from .compare import origins_of
from .follower import Clusters, Follower, FollowOptions
from .mark import ClusterFacts
from .mark import verdict as mark_verdict
from .metrics import Metrics
from .store import MarkStore


def origin_counts(pm: Any, marks: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each origin's records below a per-origin partition mark, per side, and whether they were compared: the
    source's origin (its natives, and their copies on the target, restart duplicates passed over included) is
    compared in order; the target's (records copied from it on the source, its natives) is counted."""
    ot = pm.origin_target or {"source": 0, "target": 0}
    return {marks["source_alias"]: {"source": pm.compared, "target": pm.compared + pm.duplicates, "compared": True},
            marks["target_alias"]: {"source": ot["source"], "target": ot["target"], "compared": False}}


def origin_totals(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """:func:`origin_counts` summed over the rows that carry them."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        for origin, c in (r.get("origins") or {}).items():
            o = out.setdefault(origin, {"source": 0, "target": 0, "compared": c["compared"]})
            o["source"] += c["source"]
            o["target"] += c["target"]
    return out


def rows_of(follower: Follower) -> list[dict[str, Any]]:
    lags = {(s.topic, s.partition): s for s in follower.samples()}
    out = []
    for (t, p), pm in follower.mark.items():
        s = lags[(t, p)]
        row: dict[str, Any] = {"topic": t, "partition": p, "state": pm.state, "source_verified_up_to": pm.source_next,
                               "target_verified_up_to": pm.target_next, "compared": pm.compared,
                               "lag_records": s.lag_records, "lag_seconds": round(s.lag_seconds, 1),
                               "resumed_from": list(follower.resumed_from.get((t, p), (pm.source_next, pm.target_next))),
                               "proven_this_run": c.proven_now if (c := follower.cmp.get((t, p))) is not None else 0}
        if pm.duplicates:
            row["duplicates"] = pm.duplicates
        if follower.mark.copy_marks is not None:
            row["origins"] = origin_counts(pm, follower.mark.copy_marks)
        if pm.mismatch is not None:
            row["mismatch"] = pm.mismatch
        if pm.source_log_start is not None:
            row["source_log_start"] = pm.source_log_start
        out.append(row)
    return out


def _mismatch_text(r: dict[str, Any]) -> str:
    m = r.get("mismatch")
    if not m:
        return f"retention passed the mark (log start {r['source_log_start']})" if r["state"] == "truncated" else ""
    what = m["category"] + (f" ({', '.join(m['changed'])})" if m.get("changed") else "")
    if m.get("reason"):
        what += f": {m['reason']}"
    return f"{what} at source offset {m['source_offset']}, target offset {m['target_offset']}"


def follow(req: ValidationRequest, opts: FollowOptions, say: Callable[[str], None] = quiet) -> Outcome:
    """Run the follower (see the module doc); UsageError/UnreachableError (exit 2) before anything is written."""
    store = MarkStore(opts.mark)
    store.check_writable()
    clusters = Clusters.open(req, opts.migration)
    talked = {"source": req.source.bootstrap_servers, "target": req.target.bootstrap_servers, "mark": str(store)}
    say("reading both clusters' metadata and the mark")
    facts = clusters.facts()
    origins = origins_of(req.marks)
    mark, truncated = prepare(store, facts, origins.as_dict() if origins is not None else None)
    metrics = Metrics() if opts.metrics_port is not None else None
    if metrics is not None:
        port = metrics.serve(opts.metrics_port or 0, opts.metrics_bind)
        talked["metrics"] = f"http://{opts.metrics_bind}:{port}/metrics"
    follower = Follower(clusters, store, mark, opts, metrics, say)
    follower.persist()  # the checked mark (truncations, new partitions) before the first read
    stop = {"now": False}
    # The caller's handlers come back when the follower stops (it also runs inside a longer process: the
    # rehearsal, the tests).
    before: dict[signal.Signals, Any] = {}
    if not opts.once:
        def _stop(_sig: int, _frame: Any) -> None:
            stop["now"] = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            before[sig] = signal.signal(sig, _stop)
    try:
        follower.apply_fences()
        follower.assign()
        follower.seed_recent(facts)
        follower.assign()
        truncated += follow_loop(follower, clusters, facts, opts, lambda: stop["now"], say)
    finally:
        follower.persist()
        follower.close()
        if metrics is not None:
            metrics.close()
        for signum, handler in before.items():
            signal.signal(signum, handler)
    verdict, code = mark_verdict(mark)
    rows = rows_of(follower)
    notes = [f"mark: {store}"]
    if truncated:
        notes.append(f"[red]truncated: retention deleted source records past the mark of {len(truncated)} partition(s)[/]")
    extra: dict[str, Any] = {"mark": str(store), "migration": mark.migration, "verdict_reason": verdict,
                             "compare": mark.compare}
    title = "proof: verified-up-to marks"
    if mark.copy_marks is not None:
        src, tgt = mark.copy_marks["source_alias"], mark.copy_marks["target_alias"]
        totals = origin_totals(rows)
        extra |= {"copy_marks": dict(mark.copy_marks), "origins": totals}
        title += f", per origin ({src} compared in order, {tgt} counted)"
        s_n, t_n = totals.get(src, {}), totals.get(tgt, {})
        notes.append(f"compared per origin (copies are marked): origin {src}: {s_n.get('source', 0):,} record(s) on the "
                     f"source, {s_n.get('target', 0):,} on the target, compared in order; origin {tgt}: "
                     f"{t_n.get('source', 0):,} on the source (copied from the target, left out), {t_n.get('target', 0):,} "
                     "on the target (its own), counted, not compared")
        dups = sum(r.get("duplicates", 0) for r in rows)
        if dups:
            notes.append(f"[yellow]{dups:,} copy(ies) re-delivered by MM2 passed over (--allow-duplicates)[/]")
    return Outcome("validate --follow", verdict, code, rows, talked, extra=extra,
                   views=[marks_view(title, col("lag", "lag_records", numeric=True))], notes=notes)


def marks_view(title: str, progress: Any) -> View:
    """The follower's table of marks (and the chained Spark run's): ``progress`` is the column between the
    records compared and the first difference (the lag, or what one run proved)."""
    return View(title, [
        col("topic", "topic"), col("partition", "partition", numeric=True),
        col("state", "state", ok=lambda r: r["state"] in ("following", "cut-over")),
        col("source mark", "source_verified_up_to", numeric=True),
        col("target mark", "target_verified_up_to", numeric=True),
        col("compared", "compared", numeric=True), progress, col("first difference", _mismatch_text)])


def follow_loop(follower: Follower, clusters: Clusters, facts: ClusterFacts, opts: FollowOptions,
                stopped: Callable[[], bool], say: Callable[[str], None] = quiet) -> list[tuple[str, int]]:
    """Passes until ``stopped()`` (``--once``: one). A pass that proved nothing waits ``--interval``; a busy
    follower starts the next pass at once. End offsets are read again before every pass, the full check
    of the clusters (ids, partition counts, topic ids, retention) every ``--interval``. The mark is
    persisted after every pass. Returns the partitions found truncated on the way."""
    truncated: list[tuple[str, int]] = []
    last_full = time.monotonic()
    while True:
        began = time.monotonic()
        cut = follower.apply_fences()
        if cut:
            say(f"proof: {len(cut)} partition(s) proven to the fence their producers moved behind: cut over")
        proven = follower.run_pass(facts, began + (3600.0 if opts.once else opts.pass_seconds))
        follower.persist()
        follower.publish()
        total = sum(pm.compared for _, pm in follower.mark.items())
        lag = sum(s.lag_records for s in follower.samples())
        say(f"proof: {proven:,} record(s) proven this pass, {total:,} in all, {lag:,} offset(s) behind the source")
        if opts.once or stopped():
            return truncated
        if proven == 0:
            while not stopped() and time.monotonic() - began < opts.interval:
                time.sleep(0.1)
            if stopped():
                return truncated
        if time.monotonic() - last_full >= opts.interval:
            facts = clusters.facts()
            truncated += prepare_again(follower, facts)
            last_full = time.monotonic()
        else:
            facts = clusters.latest(facts)


def prepare_again(follower: Follower, facts: Any) -> list[tuple[str, int]]:
    """Between passes: the clusters re-checked (a recreated topic or a changed partition count stops the
    follower with exit 2); retention past a mark makes that partition truncated."""
    from .mark import check_against, truncate_passed

    check_against(follower.mark, facts)
    hit = truncate_passed(follower.mark, facts)
    for tp in hit:
        follower.cmp.pop(tp, None)
    if hit:
        follower.assign()
    return hit
