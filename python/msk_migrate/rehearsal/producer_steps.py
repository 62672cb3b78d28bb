"""The rehearsal's wave steps: the first wave's producers move on proof (a forgotten producer is fenced and
named), the ledger records every move, and ``status`` closes the rehearsal.

- "fence wave first": the groups' moves are recorded (what ``offsets sync --certificate`` proves); a forgotten
  producer (:mod:`.straggler`) writes to the wave's topic on the source; the producer gate, asked now, names its
  partitions; the fence goes on as an operator principal holding ALTER (the harness admin: MirrorMaker 2's user
  may not change ACLs) and the straggler's writes are refused. On a source without an authorizer (the default
  rehearsal) the config fence (``max.message.bytes=0``, :mod:`..runbook.producers.config_fence`) goes on after
  the operator's fix it asks for: MirrorMaker 2 stops copying ``max.message.bytes`` to the target (the target
  topics exist with their sizes by now); the straggler's writes are refused with MSG_SIZE_TOO_LARGE.
- "producer gate": replication reaches the fenced end offsets, the fenced snapshot is validated, the producer
  certificate is written (``cutover check --producers``).
- "confirm producers moved": after "move producers" wrote on the target, ``cutover confirm`` records it.
"""

from __future__ import annotations

import dataclasses
import time

from ..access.admin import AdminSession
from ..kafka.selection import topic_selection
from ..ledger import Change, Ledger, open_ledger
from ..runbook.producers import fence as fence_mod
from ..runbook.producers.cutover import (
    certificate_location,
    confirm_wave,
    evidence_place,
    fence_and_record,
    fenced_ends_of,
    groups_on_wave,
)
from ..runbook.producers.gate import build_certificate, check_replicated, check_writes, producer_gate, write_certificate
from ..runbook.producers.operations import fence_notes
from ..runbook.producers.wave import Wave
from ..runbook.session import MigrationSession
from .context import RehearsalContext
from .demo import CONSUMER_WAVE, DEMO_GROUPS, PRODUCER_WAVE, wait
from .result import StepFailed
from .straggler import USER, Straggler, straggler_config

#: Seconds the source must stay still before the fence is declared (the rehearsal's --quiet-seconds).
QUIET_SECONDS = 5.0


def ledger(ctx: RehearsalContext) -> Ledger:
    """The rehearsal's ledger: where ``--local`` commands find it (the environment directory)."""
    return open_ledger(str(ctx.env.base_dir / "ledger"), ctx.migration.name)


def operator_session(ctx: RehearsalContext) -> MigrationSession:
    """The migration session acting on the source as the harness admin (a principal holding ALTER)."""
    s = ctx.migration_session()
    return dataclasses.replace(s, source=AdminSession("source", ctx.env.client_config("source")))


def wave_topics(ctx: RehearsalContext) -> list[str]:
    return list(ctx.migration.waves[PRODUCER_WAVE])


def record_groups_moved(ctx: RehearsalContext, book: Ledger) -> None:
    """What `connectors apply` and `offsets sync --certificate` record: every topic replicating (with its identity),
    the moved groups (their certificates) and, per topic, consumers-moved once every group reading it moved."""
    from ..ledger.identity import read_identities, replicating_changes

    topics = [t for ts in ctx.migration.waves.values() for t in ts]
    view = book.read()
    view = book.append(view, replicating_changes(view, read_identities(ctx.migration_session().source, topics),
                                                 {t: _wave_of(ctx, t) for t in topics}), "connectors apply")
    certs = ctx.work_dir / "rehearsal-certificates"
    book.append(view, [Change("group", g, "consumers-moved", evidence=str(certs), wave=_wave_of(ctx, t))
                       for g, (t, _) in DEMO_GROUPS.items() if view.state_of("group", g) != "consumers-moved"]
                + [Change("topic", t, "consumers-moved", evidence=str(certs), wave=_wave_of(ctx, t), detail=f"{g} moved")
                   for g, (t, _) in DEMO_GROUPS.items()], "offsets sync")


def _wave_of(ctx: RehearsalContext, topic: str) -> str | None:
    return next((w for w, ts in ctx.migration.waves.items() if topic in ts), None)


def exclude_fence_setting_from_copy(ctx: RehearsalContext) -> str:
    """What the config fence asks of an operator whose MirrorMaker 2 copies topic settings: ``max.message.bytes``
    out of ``config.properties.exclude``'s copy (Kafka's defaults kept), applied to the running connectors."""
    import re

    from ..connect_api.apply import apply
    from ..connectors.render import render_connectors
    from ..kafka.names import CONFIG_PROPERTIES_EXCLUDE_DEFAULT
    from ..runbook.producers import config_fence

    if config_fence.mm2_copies(ctx.migration) is None:
        return ""
    exclude = ",".join([*sorted(re.escape(k) for k in CONFIG_PROPERTIES_EXCLUDE_DEFAULT), re.escape(config_fence.KEY)])
    ctx.migration = ctx.migration.model_copy(update={"connector_overrides": {**ctx.migration.connector_overrides,
                                                                             "config.properties.exclude": exclude}})
    ctx.session = dataclasses.replace(ctx.migration_session(), migration=ctx.migration)
    src, tgt = ctx.clusters()
    apply(ctx.connect(), render_connectors(src, tgt, ctx.migration), wait=True, timeout=120, progress=ctx.say)
    return f"MirrorMaker 2 no longer copies {config_fence.KEY} (config.properties.exclude); "


def fence_wave(ctx: RehearsalContext) -> str:
    s, book, topics = operator_session(ctx), ledger(ctx), wave_topics(ctx)
    record_groups_moved(ctx, book)
    # Without an authorizer `auto` is the config fence. With one, a super user writes too (the harness admin): the
    # DENY does not bind it, so the rehearsal fences as an operator who knows that does, with both fences.
    authorizer = fence_mod.state(s.source, topics).authorizer
    mode = "acl+config" if authorizer else "auto"
    fix = exclude_fence_setting_from_copy(ctx)  # the config fence is used either way
    s = operator_session(ctx)
    straggler = Straggler(straggler_config(ctx.env, topics), topics).start()
    superuser = Straggler(ctx.env.admin_config("source"), topics).start() if authorizer else None
    try:
        if not straggler.wait_for_writes(60):
            raise StepFailed(f"the forgotten producer could not write to {', '.join(topics)}: {dict(straggler.refused)}")
        if superuser is not None and not superuser.wait_for_writes(60):
            raise StepFailed(f"the super user could not write to {', '.join(topics)}: {dict(superuser.refused)}")
        # The gate asked while it writes: "writes stopped" fails and names its partitions.
        before, w, _ = check_writes(s.source, s.source, topics, None, 3.0, 8.0, ctx.say)
        named = sorted(f"{m.topic}[{m.partition}]" for m in w.moved)
        if before.ok or not named:
            raise StepFailed(f"the gate did not name the forgotten producer's partitions: {before.evidence}")
        res = fence_and_record(s, book, Wave.of(PRODUCER_WAVE, topics), QUIET_SECONDS, 60, ctx.say, mode)
        if res.verdict == "fenced":
            refused = sum(straggler.refused.values())
            if not refused:
                raise StepFailed(f"fenced, but the forgotten producer was not refused: {dict(straggler.delivered)}")
            mech = " and ".join(res.mechanisms)
            what = (f"DENY User:* WRITE on {', '.join(topics)}" if mech == "acl" else
                    f"{fix}config fence max.message.bytes=0 on {', '.join(topics)} (previous setting in the ledger)"
                    if mech == "config" else f"{fix}DENY User:* WRITE and max.message.bytes=0 on {', '.join(topics)}")
            how = (f"fence: {what}; {'User:' + USER if mech != 'config' else 'the forgotten producer'}'s writes refused "
                   f"{refused} time(s) ({', '.join(straggler.refused)}); quiet for {QUIET_SECONDS:.0f} s")
            if superuser is not None:
                superuser.stop()
                if not sum(superuser.refused.values()):
                    raise StepFailed(f"fenced, but the super user's writes were not refused: {dict(superuser.delivered)}")
                how += (f"; a super user (the DENY does not bind it) refused {sum(superuser.refused.values())} time(s) "
                        f"({', '.join(superuser.refused)}) by the config fence")
        elif res.verdict == "cannot-fence":
            still = res.watch.moved if res.watch else []
            straggler.stop()  # the owner of the forgotten producer stops it once the gate named it
            after, w2, _ = check_writes(s.source, s.source, topics, None, QUIET_SECONDS, 60, ctx.say)
            if not after.ok:
                raise StepFailed(f"writes did not stop after the forgotten producer stopped: {after.evidence}")
            how = (f"cannot fence (no authorizer): the watch named {len(still)} partition(s) still written until the producer "
                   f"stopped; then quiet for {w2.quiet_for:.0f} s (detection only, not fenced)")
        else:
            raise StepFailed(f"fence: {res.verdict}: {'; '.join(fence_notes(res))}")
    finally:
        straggler.stop()
        if superuser is not None:
            superuser.stop()
    by_super = sum(superuser.delivered.values()) if superuser is not None else 0
    # every record written before the fence is replicated and validated: the rehearsal's counts include them all
    ctx.straggler_records = ctx.result.waves["straggler_records"] = sum(straggler.delivered.values()) + by_super
    return (f"a forgotten producer wrote {ctx.straggler_records - by_super} record(s) to the source after its team moved"
            + (f" (and a super user {by_super})" if superuser is not None else "") + "; the gate named "
            f"{', '.join(named)}; {how}")


def gate_wave(ctx: RehearsalContext) -> str:
    s, book, topics = operator_session(ctx), ledger(ctx), wave_topics(ctx)
    src, tgt = ctx.clusters()
    view = book.read()
    ends = fenced_ends_of(book, view, topics)
    if ends is None:  # detection only: the ends as they are now stand for the fenced ones
        from ..access.offsets import end_offsets, partitions

        ends = end_offsets(s.source, partitions(s.source, topics))
    t0 = time.monotonic()
    if not wait(lambda: check_replicated(s, topics, ends).ok, 120, 2):
        raise StepFailed(f"replication did not reach the fenced end offsets: {check_replicated(s, topics, ends).evidence}")
    drained = time.monotonic() - t0
    res = producer_gate(s, topics, wave=PRODUCER_WAVE, ledger=groups_on_wave(view), fenced_ends=ends, quiet_seconds=QUIET_SECONDS,
                        timeout=60, source_ep=src, target_ep=tgt,
                        report_dir=str(evidence_place(book, f"validation-{PRODUCER_WAVE}")), progress=ctx.say)
    sel = topic_selection(ctx.migration)
    res.certificate = build_certificate(res, s.source.cluster_id(), s.target.cluster_id(), sel.target_name)
    locations = write_certificate(res.certificate, certificate_location(book, Wave.of(PRODUCER_WAVE, topics)))
    if not res.ready:
        bad = res.first_failure()
        raise StepFailed(f"{bad.name}: {bad.evidence}" if bad else "not ready")
    val = res.validation or {}
    return (f"ready: drained to the fenced end in {drained:.1f} s; {len(res.fenced_ends)} partition(s) at their fenced end on "
            f"the target; snapshot validation {val.get('verdict')} ({val.get('records_compared')} records); "
            f"producer certificate {locations[0]}")


def confirm_moved(ctx: RehearsalContext) -> str:
    s, book, topics = operator_session(ctx), ledger(ctx), wave_topics(ctx)
    o = confirm_wave(s, book, Wave.of(PRODUCER_WAVE, topics), timeout=30, talked_to={}, progress=ctx.say)
    if o.exit_code:
        raise StepFailed(f"confirm: {o.verdict}: {'; '.join(o.notes)}")
    direct = sum(r["direct_writes"] for r in o.rows)
    return f"producers moved: {direct:,} direct write(s) on the target, 0 on the source since the fence; {o.notes[0]}"


def unfence_for_rollback(ctx: RehearsalContext, topics: list[str]) -> list[str]:
    """A rollback's reverse flow writes into the fenced topics: the fence comes off first (exactly its ACLs, and
    each config-fenced topic's recorded setting restored)."""
    from ..runbook.producers.cutover import unfence_topics

    st, restored = unfence_topics(operator_session(ctx), ledger(ctx), topics)
    return st.changed + [f"max.message.bytes of {t} restored" for t in restored]


def rollback_topics_from_ledger(ctx: RehearsalContext) -> list[str]:
    """What `rollback plan|apply` without --topic acts on; the consumers-only wave is refused."""
    from ..errors import UsageError
    from ..runbook.rollback import topics_to_roll_back

    book = ledger(ctx)
    view = book.read()
    second = list(ctx.migration.waves[CONSUMER_WAVE])
    try:
        topics_to_roll_back(view, book.location, second, second[:1])
    except UsageError:
        pass  # refused: its producers never moved
    else:
        raise StepFailed(f"rollback accepted {second[0]}, whose producers never moved")
    return topics_to_roll_back(view, book.location, [t for ts in ctx.migration.waves.values() for t in ts], [])


def record_rolled_back(ctx: RehearsalContext, topics: list[str]) -> None:
    book = ledger(ctx)
    book.append(book.read(), [Change("topic", t, "rolled-back", wave=_wave_of(ctx, t), detail="reverse replication target -> source")
                              for t in topics], "rollback apply")


def record_group_rolled_back(ctx: RehearsalContext, group: str) -> None:
    book = ledger(ctx)
    book.append(book.read(), [Change("group", group, "rolled-back", wave=_wave_of(ctx, DEMO_GROUPS[group][0]),
                                     detail="offsets sync --to source")], "offsets sync")


def status(ctx: RehearsalContext) -> str:
    """`msk-migrate status`: every topic and group of the migration with its wave, its state and its evidence."""
    from ..runbook.estate import estate_rows, summary
    from ..runbook.waves import plan_waves

    view = ledger(ctx).read()
    rows = estate_rows(view, plan_waves(ctx.migration_session().source, ctx.migration), None)
    ctx.result.waves["status"] = [r.to_dict() for r in rows]
    ctx.result.waves["ledger"] = view.location
    ctx.result.waves["wave_table"] = {w: list(ts) for w, ts in ctx.migration.waves.items()}
    unrecorded = [r.name for r in rows if r.state in ("unrecorded", "on-source")]
    if unrecorded:
        raise StepFailed(f"the ledger does not record {', '.join(unrecorded)}")
    return f"{summary(rows)} (ledger {view.location}, version {view.version})"
