"""``cutover fence|unfence|run|confirm|abort|abandon-group`` and ``cutover check --producers``: moving a wave's
producers (:mod:`msk_migrate.runbook.producers`). Registered on the ``cutover`` group by :func:`register`.

Every command resolves its flow, refuses an unknown wave and an unreadable ledger before any cluster is
changed, states the clusters it talks to, and hands one Outcome to the renderer: exit 0 done / ready,
1 not yet (the reason and the command that resumes), 2 bad input (one line, nothing changed; with ``--output json``
also one JSON document).

Every command acts on the source as the exported operator principal when there is one
(``MSK_MIGRATE_SOURCE_SASL_USERNAME``/``_SASL_PASSWORD``, or ``_TLS_CERTIFICATE_CHAIN``/``_TLS_PRIVATE_KEY`` on an mTLS
source; any flow kind: --env, --config, --local), else as the flow's own source principal; each help says so with
the rights the command needs.
"""

from __future__ import annotations

from typing import Any

import click

from ..cliutil import output_option
from ..errors import UsageError
from ..render import progress, render
from .flow import announce, flow_from_kwargs, flow_options
from .options import GROUP, WRITE_LOCATION
from .waves import check_wave, wave_option

QUIET = click.option("--quiet-seconds", default=10.0, show_default=True, type=click.FloatRange(min=1, max=3600),
                     help="Seconds the wave's source end offsets must stay still before the fence (or detection) is declared.")
TIMEOUT = click.option("--timeout", default=300.0, show_default=True, type=click.FloatRange(min=1, max=86400),
                       help="Seconds a step may wait (quiet period, replication reaching the fenced end, direct writes); the "
                            "gate's watch ends sooner at the first write past the fenced end offsets (the answer is then known).")
FENCE = click.option("--fence", "fence_mode", default="auto", show_default=True,
                     type=click.Choice(["auto", "acl", "config", "acl+config"]),
                     help="How the source is fenced: acl = a DENY User:* WRITE ACL per topic (needs an authorizer; super users "
                          "bypass it); config = max.message.bytes=0 per topic (every broker refuses every produce, super users "
                          "included; the previous setting is recorded in the ledger and restored by the unfence; needs "
                          "AlterConfigs on the topics; refused while a transaction is open or where MirrorMaker 2 copies "
                          "max.message.bytes to the target); acl+config = both; auto = the ACL where an authorizer answers, "
                          "plus the config fence where super.users is set, the config fence where none answers.")
CERTIFICATE = click.option("--certificate", "certificate", type=WRITE_LOCATION,
                           help="Where the producer certificate is written/read (default: the ledger's evidence/ directory).")


def _open(kw: dict[str, Any], output: str, wave: str | None, worker: str = "no"):
    """(session, the wave's topics, the ledger, talked_to): the wave and the ledger checked before any change."""
    from ..config.waves import wave_topics
    from ..ledger import ledger_for
    from ..runbook.session import open_session

    flow = flow_from_kwargs(kw)
    check_wave(flow, wave)
    ledger = ledger_for(flow)
    ledger.read()  # a ledger that does not parse is refused here (exit 2), before any cluster is asked
    announce(flow, output)
    s = open_session(flow, worker=worker)  # type: ignore[arg-type]
    topics = wave_topics(s.migration, s.source.topics(refresh=True), wave)
    if not topics:
        raise UsageError("--wave", f"no topic of {'wave ' + wave if wave else 'the migration'} exists on the source {s.source.bootstrap}",
                         "check migration.topics / migration.waves against the source's topics")
    from ..runbook.producers.wave import Wave

    return s, Wave.of(wave, topics), ledger, s.talked_to()


@click.command("fence")
@flow_options
@wave_option
@QUIET
@TIMEOUT
@FENCE
@output_option
def fence_cmd(wave, quiet_seconds, timeout, fence_mode, output, **kw) -> None:
    """Stop writes to the wave's topics on the source (--fence): a DENY WRITE ACL per topic for User:* (the source
    principal needs ALTER and DESCRIBE on the cluster) and/or max.message.bytes=0 per topic (needs AlterConfigs
    and DescribeConfigs on the topics), then watch the end offsets until they stayed still for --quiet-seconds
    (at most --timeout). Partitions still written are named with their producers (DescribeProducers: ids, epochs,
    last timestamp; needs READ on the topics, a JVM and kafka-clients, and a 2.8+ source).

    Rights: ALTER and DESCRIBE on the source cluster (acl), AlterConfigs and DescribeConfigs on the topics (config),
    READ on the topics (the watch). \b
    Acts on the source as the exported operator principal (MSK_MIGRATE_SOURCE_SASL_USERNAME/_SASL_PASSWORD or
    _TLS_CERTIFICATE_CHAIN/_TLS_PRIVATE_KEY; any flow kind) when set, else as the flow's own.
    Exit 0 fenced, 1 writes seen / cannot fence / a transaction open, 2 bad input (nothing changed)."""
    from ..runbook.producers.cutover import fence_and_record
    from ..runbook.producers.operations import fence_outcome

    s, w, ledger, talked = _open(kw, output, wave)
    with progress(output, "fencing") as say:
        res = fence_and_record(s, ledger, w, quiet_seconds, timeout, say, fence_mode)
    render(fence_outcome("cutover fence", res, talked), output)


@click.command("unfence")
@flow_options
@wave_option
@output_option
def unfence_cmd(wave, output, **kw) -> None:
    """Remove exactly the fence's ACLs of the wave's topics (no other ACL is touched) and give every config-fenced
    topic back the max.message.bytes the ledger recorded before the fence (the override deleted when it was the
    default).

    Rights: ALTER and DESCRIBE on the source cluster (acl), AlterConfigs and DescribeConfigs on the topics (config).
    Acts as the exported operator principal (MSK_MIGRATE_SOURCE_SASL_USERNAME/_SASL_PASSWORD; any flow kind) when set."""
    from ..runbook.producers.cutover import unfence_and_record
    from ..runbook.producers.operations import unfence_outcome

    s, w, ledger, talked = _open(kw, output, wave)
    render(unfence_outcome("cutover unfence", unfence_and_record(s, ledger, w), talked), output)


@click.command("abort")
@flow_options
@wave_option
@output_option
def abort_cmd(wave, output, **kw) -> None:
    """Give up moving the wave's producers: remove the fence and record it. Rights: as `cutover unfence` (ALTER and
    DESCRIBE on the source cluster; AlterConfigs on config-fenced topics), as the exported operator principal when set."""
    from ..runbook.producers.cutover import unfence_and_record
    from ..runbook.producers.operations import unfence_outcome

    s, w, ledger, talked = _open(kw, output, wave)
    render(unfence_outcome("cutover abort", unfence_and_record(s, ledger, w, command="cutover abort"), talked), output)


@click.command("run")
@flow_options
@wave_option
@QUIET
@TIMEOUT
@FENCE
@CERTIFICATE
@output_option
def run_cmd(wave, quiet_seconds, timeout, fence_mode, certificate, output, **kw) -> None:
    """Move the wave's producers up to the point a person acts: checks -> fence -> drain -> snapshot
    validation -> producer certificate, stopping at the first failing step with the command that resumes.
    --timeout bounds each step that waits (the fence's quiet period, the drain, the gate's watch).

    Rights: those of `cutover fence` and `cutover check --producers` (DESCRIBE and ALTER on the source cluster,
    DescribeConfigs/AlterConfigs and READ on the topics, DESCRIBE on the groups), as the exported operator principal
    (MSK_MIGRATE_SOURCE_SASL_USERNAME/_SASL_PASSWORD; any flow kind) when set.
    Exit 0 when the producers may be pointed at the target (then `cutover confirm`), 1 stopped, 2 bad input."""
    from ..runbook.producers.cutover import run_wave

    s, w, ledger, talked = _open(kw, output, wave, worker="yes")
    with progress(output, "cutover run") as say:
        render(run_wave(s, ledger, w, quiet_seconds=quiet_seconds, timeout=timeout, talked_to=talked,
                        certificate=certificate, progress=say, fence_mode=fence_mode), output)


@click.command("confirm")
@flow_options
@wave_option
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(min=1, max=86400),
              help="Seconds to wait for direct writes on the target.")
@CERTIFICATE
@output_option
def confirm_cmd(wave, timeout, certificate, output, **kw) -> None:
    """Check that the target receives direct writes on the wave's topics and the source none since the fence,
    then record "producers moved" (waits at most --timeout). Before the fence and the producer gate: exit 2.

    Rights: READ on the wave's topics on both clusters (end offsets), as the exported operator principal when set."""
    from ..runbook.producers.cutover import confirm_wave

    s, w, ledger, talked = _open(kw, output, wave)
    with progress(output, "confirming") as say:
        render(confirm_wave(s, ledger, w, timeout=timeout, talked_to=talked, certificate=certificate, progress=say), output)


@click.command("abandon-group")
@flow_options
@wave_option
@click.option("--group", required=True, type=GROUP, help="The consumer group that will not move.")
@click.option("--reason", required=True, help="Why (recorded in the ledger with who declared it).")
@output_option
def abandon_cmd(wave, group, reason, output, **kw) -> None:
    """Declare that GROUP will not move to the target (recorded): the producer gate stops waiting for it.
    Rights: DESCRIBE on the source's topics (to list the wave)."""
    from ..runbook.producers.cutover import abandon_group

    s, _w, ledger, talked = _open(kw, output, wave)
    render(abandon_group(s, ledger, group, wave, reason, talked), output)


def check_producers_cmd(wave: str | None, quiet_seconds: float, timeout: float, certificate: str | None, output: str,
                        kw: dict[str, Any], proof_mark: str | None = None, max_mark_age_s: float = 1800.0) -> None:
    """``cutover check --producers``: the producer gate (called by the check command). ``proof_mark``: a
    ``validate --follow`` mark (``--validation-report``) at or past the fenced end offsets stands for the
    validation of the fenced snapshot; anything else there leaves the gate to validate the snapshot itself."""
    from ..runbook.producers.cutover import certificate_location, evidence_place, fenced_ends_of, groups_on_wave
    from ..runbook.producers.operations import check_producers

    s, w, ledger, talked = _open(kw, output, wave, worker="yes")
    view = ledger.read()
    with progress(output, "producer gate") as say:
        o, _ = check_producers(s, list(w.topics), w.name, groups_on_wave(view), fenced_ends=fenced_ends_of(ledger, view, list(w.topics)),
                               quiet_seconds=quiet_seconds, timeout=timeout,
                               report_dir=str(evidence_place(ledger, f"validation-{w.label}")),
                               certificate=certificate or certificate_location(ledger, w), talked_to=talked,
                               source_ep=s.source_endpoint, target_ep=s.target_endpoint, progress=say,
                               proof_mark=proof_mark, max_mark_age_s=max_mark_age_s)
    render(o, output)


def register(cutover: click.Group) -> None:
    for cmd in (fence_cmd, unfence_cmd, run_cmd, confirm_cmd, abort_cmd, abandon_cmd):
        cutover.add_command(cmd)


def rollback_topics(s: Any, asked: list[str], wave: str | None, applying: bool) -> tuple[list[str], Any]:
    """Rollback reads the ledger: the topics it acts on (``--topic`` or, without it, every topic of ``--wave``
    whose producers moved; a topic that never moved is refused), and for ``apply`` the fence removed first (the
    reverse flow writes into those topics; a DENY would refuse it). Returns the topics and the function that
    records them rolled back once the apply succeeded."""
    from ..config.waves import wave_topics
    from ..ledger import Change, ledger_for
    from ..runbook.producers.cutover import unfence_topics
    from ..runbook.rollback import topics_to_roll_back

    if s.flow is not None:
        check_wave(s.flow, wave)
    ledger = ledger_for(s.flow)
    view = ledger.read()
    candidates = wave_topics(s.migration, s.source.topics(), wave) if (wave or not asked) else []
    topics = topics_to_roll_back(view, ledger.location, candidates, asked)
    if applying:
        ledger.ensure_latest(view)
        unfence_topics(s, ledger, topics)

    def record() -> None:
        current = ledger.read()
        ledger.append(current, [Change("topic", t, "rolled-back", wave=wave, detail="reverse replication target -> source",
                                       previous_config={} if (r := current.get("topic", t)) and r.previous_config else None)
                                for t in topics], "rollback apply")

    return topics, record
