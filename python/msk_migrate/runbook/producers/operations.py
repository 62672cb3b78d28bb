"""``cutover fence|unfence|check --producers`` as operations: each takes the command's session and returns
one :class:`~msk_migrate.outcome.Outcome` (exit 0 done / ready, 1 not yet, 2 bad input).

The fence acts as the flow's source principal: the operator principal when one is exported
(``MSK_MIGRATE_SOURCE_SASL_USERNAME``/``_PASSWORD`` or ``_TLS_CERTIFICATE_CHAIN``/``_TLS_PRIVATE_KEY``, on every
flow kind, :mod:`msk_migrate.access.secrets`), else the flow's own (MirrorMaker 2's) secret. It needs DESCRIBE and
ALTER on the source cluster, which MirrorMaker 2's own user does not hold, so the operator runs it with an identity
that does (a missing right is bad input naming the principal and the grant, nothing changed).

Every watch that saw writes carries the producer table (:meth:`.watch.WatchResult.producer_rows`): one row per
producer of each partition still written, from DescribeProducers, or why the source did not answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...kafka.selection import topic_selection
from ...outcome import Outcome, View, col, quiet
from ..session import MigrationSession
from . import config_fence
from . import fence as fence_mod
from .fence_result import FenceResult, UnfenceResult
from .gate import GateResult, GroupsOnWave, build_certificate, producer_gate, write_certificate
from .watch import WatchResult


def _ok(v: Any) -> bool:
    return bool(v)


FENCE_VIEW = [col("topic", "topic"), col("fence ACL", "acl"), col("fenced", "fenced", ok=_ok), col("changed now", "changed")]
WATCH_VIEW = [col("topic", "topic"), col("p", "partition", numeric=True), col("end offset", "end_offset", numeric=True),
              col("written during watch", "written_during_watch", numeric=True, ok=lambda r: not r["written_during_watch"])]


def _when(ms: Any) -> str | None:
    if not isinstance(ms, int) or ms < 0:
        return None
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


PRODUCER_VIEW = [col("topic", "topic"), col("p", "partition", numeric=True), col("producer id", "producer_id", numeric=True),
                 col("epoch", "producer_epoch", numeric=True), col("last sequence", "last_sequence", numeric=True),
                 col("last timestamp", lambda r: _when(r["last_timestamp"])),
                 col("coordinator epoch", "coordinator_epoch", numeric=True),
                 col("txn start offset", "current_transaction_start_offset", numeric=True),
                 col("answer", "answer", ok=lambda r: str(r["answer"]).startswith("answered"))]


def producer_view(w: WatchResult | None, title: str) -> list[View]:
    """The producer table of a watch that saw writes (none when nothing was written)."""
    rows = w.producer_rows() if w is not None else []
    return [View(title, PRODUCER_VIEW, rows)] if rows else []


def _acl_rows(st: fence_mod.FenceState, wave: str | None) -> tuple[list[dict[str, Any]], list[View]]:
    """The ACL fence's rows per topic and their view (none when the source has no fence ACL to show)."""
    rows = st.rows()
    return rows, [View(f"fence on the source {st.cluster} (wave {wave or 'the whole migration'})", FENCE_VIEW, rows)] if rows else []


def _fence_rows(res: FenceResult) -> tuple[list[dict[str, Any]], list[View]]:
    """The fence's rows per topic (the ACL's, then the config fence's) and their views."""
    st, cfg, name = res.state, res.config, res.wave or "the whole migration"
    rows, views = _acl_rows(st, res.wave) if res.use_acl else ([], [])
    if cfg is not None:
        crow = [{"topic": t, "acl": f"{config_fence.KEY}={config_fence.VALUE} (was {cfg.previous[t]['value']}"
                 f"{'' if cfg.previous[t]['explicit'] else ', the default'})" if t in cfg.previous else config_fence.describe(t),
                 "fenced": t in res.config_fenced, "changed": t in cfg.changed} for t in cfg.topics]
        views.append(View(f"config fence on the source {st.cluster} (wave {name})", FENCE_VIEW, crow))
        rows = rows + crow
    return rows, views


def _cannot_fence(st: fence_mod.FenceState) -> str:
    return (f"cannot fence: the source {st.cluster} has no authorizer (DescribeAcls: SECURITY_DISABLED) and the config "
            "fence was not used; nothing was written. The producer gate relies on detection alone: no write for the "
            "quiet period")


def fence_notes(res: FenceResult) -> list[str]:
    """What the operator is told about a fence, most telling first (``cutover run`` shows the first three)."""
    st, w = res.state, res.watch
    notes: list[str] = []
    if w is not None:
        notes.append(w.summary())
        for m in w.moved[:5]:
            notes.append(f"{m.topic}[{m.partition}]: {m.written} record(s) written after the fence; producer ids: "
                         + (", ".join(map(str, m.producer_ids)) if m.producer_ids else (m.answer or "none active"))
                         + f" (ask again: {m.producers})")
    if res.not_config:
        notes.append(res.not_config)
    if not res.acl_on and not res.config_on:
        notes.append(_cannot_fence(st))
    elif res.verdict == "writes-seen":
        notes.append("a producer the fence does not bind (a super user" + ("" if res.config_on else "; `--fence acl+config` binds "
                     "them too") + ") keeps writing these partitions; stop it, then run the fence again to re-declare the "
                     "fenced end offsets")
    elif res.verdict == "fenced" and w is not None:
        # Writes that landed while the fence reached every broker are part of the source; the fenced end offsets
        # are those after the quiet period, and the gate refuses any move past them.
        how = " and ".join((["DENY User:* WRITE"] if res.acl_on else [])
                           + ([f"{config_fence.KEY}={config_fence.VALUE}"] if res.config_on else []))
        notes.append(f"fenced: {how} on {len(st.topics)} topic(s); `msk-migrate cutover unfence` removes exactly these"
                     + (" and restores each topic's recorded setting" if res.config_on else "")
                     + (" (the partitions above were written before the fence reached every broker)" if w.moved else ""))
    if res.transaction_open is not None and res.config is not None:
        notes.append(f"a transaction is open on {', '.join(res.config.open_transactions[:8])} (last stable offset below the "
                     f"end): the config fence would refuse its commit/abort marker and leave it hanging; "
                     f"{res.transaction_open}. Stop the transactional producer (or let its transaction end), then run the "
                     "fence again")
    if res.evidence:
        notes.append(f"recorded in the ledger {res.ledger}: {len(st.topics)} topic(s) fenced; evidence {res.evidence}")
    return notes


def fence_outcome(command: str, res: FenceResult, talked_to: dict[str, Any]) -> Outcome:
    """The fence's outcome: ``fenced`` (every topic carries the ACL or the config fence and no write for the quiet
    period), ``writes-seen`` (a partition moved: named), ``cannot-fence`` (neither fence: detection only),
    ``transaction-open`` (the config fence would hang an open transaction: not put on, or taken off at once)."""
    st, w, cfg = res.state, res.watch, res.config
    fence_rows, views = _fence_rows(res)
    if w is not None:
        views.append(View("end offsets watched after the fence", WATCH_VIEW, w.rows()))
        views += producer_view(w, "producers of the partitions still written (DescribeProducers)")
    rows = ([{"kind": "fence", **r} for r in fence_rows] + ([{"kind": "watch", **r} for r in w.rows()] if w else [])
            + ([{"kind": "producer", **r} for r in w.producer_rows()] if w else []))
    extra: dict[str, Any] = {"wave": res.wave, "authorizer": st.authorizer,
                             "fenced_topics": sorted(set(st.fenced) | res.config_fenced),
                             "changed": st.changed, "source_cluster_id": st.cluster_id, "fence": res.mechanisms}
    if cfg is not None:
        extra["config_fence"] = {"setting": {config_fence.KEY: config_fence.VALUE}, "previous": cfg.previous,
                                 "changed": cfg.changed, "open_transactions": cfg.open_transactions}
    if w is not None:
        extra.update(quiet=w.quiet, quiet_for_seconds=w.quiet_for, moved=[m.to_dict() for m in w.moved], producers=w.producer_rows(),
                     fenced_end_offsets={f"{t}[{p}]": o for (t, p), o in sorted(w.ends.items())})
    return Outcome(command, res.verdict, res.exit_code, rows, talked_to, extra, views, fence_notes(res))


def unfence_notes(res: UnfenceResult) -> list[str]:
    """What the operator is told about an unfence: what was taken off, and where it was recorded."""
    st = res.state
    notes = [] if res.verdict == "unfenced" else [_cannot_fence(st)]
    if st.authorizer:
        notes.append(f"removed {len(st.changed)} fence ACL(s): " + (", ".join(st.changed) or "none was there"))
    if res.restored:
        notes.append(f"config fence removed: {config_fence.KEY} of {', '.join(res.restored)} back to the recorded setting")
    if res.recorded:
        notes.append(f"recorded in the ledger {res.ledger}: {res.recorded} topic(s) unfenced")
    return notes


def unfence_outcome(command: str, res: UnfenceResult, talked_to: dict[str, Any]) -> Outcome:
    """The unfence's outcome (its verdict: :class:`UnfenceResult`)."""
    st = res.state
    rows, views = _acl_rows(st, res.wave)
    extra: dict[str, Any] = {"wave": res.wave, "authorizer": st.authorizer, "fenced_topics": sorted(st.fenced),
                             "changed": st.changed, "source_cluster_id": st.cluster_id, "fence": res.mechanisms}
    return Outcome(command, res.verdict, res.exit_code, [{"kind": "fence", **r} for r in rows], talked_to, extra, views,
                   unfence_notes(res))


COND_VIEW = [col("condition", "name"), col("result", lambda c: "ok" if c.ok else "NOT READY", ok=lambda c: c.ok), col("evidence", "evidence")]


def certify(s: MigrationSession, res: GateResult, talked_to: dict[str, Any], certificate: str | None) -> GateResult:
    """The gate's producer certificate, built from its result and written to ``certificate`` (never for bad input:
    nothing is written then); ``res`` carries both (``certificate``, ``locations``) for whoever reports it."""
    sel = topic_selection(s.migration)
    res.certificate = build_certificate(res, talked_to.get("source_cluster_id"), talked_to.get("target_cluster_id"), sel.target_name)
    if certificate and not res.error:
        res.locations = write_certificate(res.certificate, certificate)
    return res


def moved_note(res: GateResult) -> str | None:
    """The partitions written after the fence, named (the first 20), or None when there are none."""
    return "partitions written after the fence: " + res.watch.moved_names(20) if res.watch and res.watch.moved else None


def gate_outcome(res: GateResult, talked_to: dict[str, Any]) -> Outcome:
    """The producer gate's outcome from its certified result (:func:`certify`)."""
    cert = res.certificate
    assert cert is not None, "gate_outcome reports a certified result (certify first)"
    notes = [n for n in (moved_note(res),) if n]
    bad = res.first_failure()
    notes.append(("producers may move: point them at the target, then `msk-migrate cutover confirm --wave "
                  f"{res.wave}`") if res.ready else f"not ready: {bad.name if bad else 'no condition'}")
    if res.locations:
        notes.append("producer certificate: " + ", ".join(res.locations))
    parts = [{"topic": p["topic"], "partition": p["partition"], "fenced_end_offset": p["fenced_end_offset"],
              "target_offset": p["target_offset"]} for p in cert["partitions"]]
    views = [View(f"producer gate: wave {res.wave or 'the whole migration'}", COND_VIEW, res.conditions)]
    views += producer_view(res.watch, "producers of the partitions still written (DescribeProducers)")
    if parts and len(parts) <= 50:
        views.append(View("fenced end offsets and where they landed", [col("topic", "topic"), col("p", "partition", numeric=True),
                          col("fenced end", "fenced_end_offset", numeric=True), col("target offset", "target_offset", numeric=True)], parts))
    verdict, code = ("ready", 0) if res.ready else ("bad-input", 2) if res.error else ("not-ready", 1)
    return Outcome("cutover check --producers", verdict, code,
                   list(res.conditions), talked_to,
                   {"wave": res.wave, "ready": res.ready, "conditions": [c.to_dict() for c in res.conditions],
                    "partitions": parts, "groups": res.groups, "certificate": res.locations, "fenced": res.fenced,
                    "producers": res.watch.producer_rows() if res.watch else [],
                    "moved": [m.to_dict() for m in res.watch.moved] if res.watch else []},
                   views, notes, error=res.error)


def check_producers(s: MigrationSession, topics: list[str], wave: str | None, ledger: GroupsOnWave, *,
                    fenced_ends: dict | None, quiet_seconds: float, timeout: float, report_dir: str | None,
                    certificate: str | None, talked_to: dict[str, Any], source_ep: Any, target_ep: Any,
                    progress: Callable[[str], None] = quiet, proof_mark: str | None = None,
                    max_mark_age_s: float = 1800.0) -> tuple[Outcome, GateResult]:
    res = producer_gate(s, topics, wave=wave, ledger=ledger, fenced_ends=fenced_ends, quiet_seconds=quiet_seconds,
                        timeout=timeout, source_ep=source_ep, target_ep=target_ep, report_dir=report_dir, progress=progress,
                        proof_mark=proof_mark, max_mark_age_s=max_mark_age_s)
    return gate_outcome(certify(s, res, talked_to, certificate), talked_to), res
