"""``cutover run|confirm|abort|abandon-group`` for one wave, reading and writing the ledger.

``run``: checks -> fence -> drain -> snapshot validation -> certificate, each step idempotent, stopping at the
first that fails with the command that resumes. It ends where a person must act (point the producers at the
target) and says so; ``confirm`` then checks that the target receives direct writes on the wave's topics and
the source none, and records "producers-moved" with the producer certificate as evidence. ``abort`` removes
the fence and records "unfenced". ``abandon-group`` records the operator's decision that a group will not move.

Ledger records written (one event per command): topics ``fenced`` (evidence: the fence document with the
fenced end offsets), ``producers-moved`` (evidence: the producer certificate), ``unfenced``; groups
``abandoned`` (detail: the operator's reason). Evidence lives under ``<ledger>/evidence/``. Every ledger
write follows :meth:`~msk_migrate.ledger.Ledger.ensure_latest` taken before any cluster changed, so a stale
writer is refused before the fence is touched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...access.admin import TP
from ...access.offsets import end_offsets, partitions
from ...errors import UsageError
from ...kafka.selection import topic_selection
from ...ledger import Change, Ledger, LedgerView
from ...outcome import Outcome, View, col, quiet
from ...store import document, in_directory
from ..session import MigrationSession
from . import config_fence
from . import fence as fence_mod
from .fence_result import FenceResult, UnfenceResult
from .gate import GroupsOnWave, check_groups, check_replicated, producer_gate, read_certificate
from .operations import certify, fence_notes, moved_note
from .watch import watch
from .wave import Wave


# ---- what the ledger says ---------------------------------------------------------------------------------
def groups_on_wave(view: LedgerView) -> GroupsOnWave:
    out = GroupsOnWave()
    for r in view.of_kind("group"):
        if r.state == "consumers-moved":
            out.moved[r.name] = r.evidence or "(recorded without a location)"
        elif r.state == "abandoned":
            out.abandoned[r.name] = r.detail or f"declared by {r.by} at {r.at}"
    return out


def evidence_place(ledger: Ledger, name: str):
    return in_directory(ledger.location.rstrip("/") + "/evidence", "ledger", name)


def certificate_location(ledger: Ledger, wave: Wave) -> str:
    return str(evidence_place(ledger, f"producer-certificate-{wave.label}.json"))


def fenced_ends_of(ledger: Ledger, view: LedgerView, topics: list[str]) -> dict[TP, int] | None:
    """The fenced end offsets recorded by the last fence of these topics (None: no fence recorded)."""
    out: dict[TP, int] = {}
    for loc in sorted({r.evidence for t in topics if (r := view.get("topic", t)) and r.state == "fenced" and r.evidence}):
        doc = json.loads(document(loc, "ledger", "fence.json").read_bytes("run `msk-migrate cutover fence` again"))
        for key, off in (doc.get("fenced_end_offsets") or {}).items():
            t, p = key.rsplit("[", 1)
            if t in topics:
                out[(t, int(p.rstrip("]")))] = int(off)
    return out or None


# ---- fence / unfence with the ledger ----------------------------------------------------------------------
def _held(view: LedgerView, topics: list[str]) -> dict[str, dict[str, Any]]:
    """topic -> the setting the ledger holds from a config fence (the unfence restores it)."""
    return {t: dict(r.previous_config) for t in topics if (r := view.get("topic", t)) and r.previous_config}


def _choose(s: MigrationSession, st: fence_mod.FenceState, mode: str) -> tuple[bool, bool, str | None]:
    """(ACL fence, config fence, why the config fence is not used beside the ACL) for ``--fence mode``."""
    if mode == "acl":
        return True, False, None
    if mode == "config":
        config_fence.check_allowed(s.migration)
        return False, True, None
    if mode == "acl+config":
        if not st.authorizer:
            raise UsageError("--fence", f"acl+config: the source {st.cluster} has no authorizer, so no ACL can fence it; nothing was changed",
                             "pass --fence config (or auto)")
        config_fence.check_allowed(s.migration)
        return True, True, None
    if not st.authorizer:  # auto without an authorizer: the config fence, unless MirrorMaker 2 would copy it
        why = config_fence.mm2_copies(s.migration)
        return False, why is None, why
    supers = config_fence.super_users_declared(s.source)
    if not supers:
        return True, False, None
    why = config_fence.mm2_copies(s.migration)
    return True, why is None, (f"super users are declared on the source (super.users is set) and bypass the ACL; the config "
                               f"fence is not beside it: {why}") if why else None


def fence_and_record(s: MigrationSession, ledger: Ledger, wave: Wave, quiet_seconds: float,
                     timeout: float, progress: Callable[[str], None], mode: str = "auto") -> FenceResult:
    """The fence of ``--fence mode`` (docs/runbooks/migration.md): the ACL (:mod:`.fence`), the config fence
    (:mod:`.config_fence`) or both, then the watch. The config fence records each topic's previous setting in the
    ledger (state ``fencing``) before the first topic is changed; a fence that holds is recorded ``fenced`` with
    its evidence document."""
    topics = list(wave.topics)
    view = ledger.read()
    ledger.ensure_latest(view)  # a stale ledger is refused before the fence is touched
    st = fence_mod.state(s.source, topics, ("ALTER", "DESCRIBE"), "fence the topics")
    use_acl, use_config, not_config = _choose(s, st, mode)
    cfg = config_fence.ConfigFenceState(st.topics)
    if use_config:
        now = config_fence.settings(s.source, st.topics)
        held = _held(view, st.topics)
        clash = config_fence.held_conflicts(st.topics, held, now)
        if clash:
            t = clash[0]
            raise UsageError("--fence", f"the ledger {ledger.location} holds {config_fence.KEY}={held[t]['value']} "
                             f"({'explicit' if held[t]['explicit'] else 'the default'}) of {t} from an earlier fence, but {t} now "
                             f"has {now[t]['value']}; fencing again would record the wrong setting; nothing was changed",
                             "run `msk-migrate cutover unfence` (restores the recorded setting) before fencing again")
        orphan = [t for t in st.topics if config_fence.is_fence(now[t]) and t not in held]
        if orphan:
            raise UsageError("--fence", f"{orphan[0]} already has {config_fence.KEY}={config_fence.VALUE} and the ledger "
                             f"{ledger.location} holds no previous setting of it; nothing was changed",
                             f"set {orphan[0]}'s {config_fence.KEY} back yourself (kafka-configs.sh --alter --entity-type topics "
                             f"--entity-name {orphan[0]} --delete-config {config_fence.KEY}, or --add-config with its old value)")
        config_fence.validate(s.source, st.topics)  # a principal the source refuses: bad input, before any change
        cfg.open_transactions = config_fence.open_transactions(s.source, st.topics)
        if cfg.open_transactions:
            return FenceResult(st, None, wave.name, cfg, use_acl=False, transaction_open="nothing was changed")
        cfg.previous = {t: held.get(t) or now[t] for t in st.topics}
        todo = [t for t in st.topics if not (view.state_of("topic", t) == "fencing" and t in held)]
        if todo:
            view = ledger.append(view, [Change("topic", t, "fencing", wave=wave.name, previous_config=cfg.previous[t],
                                               detail=f"config fence: {config_fence.KEY} was {cfg.previous[t]['value']} "
                                                      f"({'explicit' if cfg.previous[t]['explicit'] else 'default'})")
                                        for t in todo], "cutover fence")
        progress(f"config fence: {config_fence.KEY}={config_fence.VALUE} on {len(st.topics)} topic(s)")
        cfg.changed = config_fence.put_on(s.source, st.topics)
        cfg.fenced = list(st.topics)
        cfg.open_transactions = config_fence.open_transactions(s.source, st.topics)
        if cfg.open_transactions:  # a transaction opened while the fence went on: its markers would be refused
            config_fence.restore(s.source, cfg.previous)
            ledger.append(ledger.read(), [Change("topic", t, "unfenced", wave=wave.name, previous_config={},
                                                 detail="config fence taken off again: a transaction opened") for t in st.topics],
                          "cutover fence")
            return FenceResult(st, None, wave.name, cfg, use_acl=False,
                               transaction_open="the config fence was taken off again at once")
    if use_acl:
        progress(f"fencing {len(topics)} topic(s) on the source {s.source.bootstrap}")
        st = fence_mod.fence(s.source, topics)
    # writes past the first quiet period say the fence does not hold: known then, not at the timeout
    w = watch(s.source, topics, quiet_seconds, timeout, progress=progress, stop_on_write_after=quiet_seconds)
    res = FenceResult(st, w, wave.name, cfg if use_config else None, not_config, use_acl)
    if res.verdict == "fenced":
        how = " and ".join((["DENY User:* WRITE"] if use_acl and st.authorizer else [])
                           + ([f"{config_fence.KEY}={config_fence.VALUE}"] if use_config else []))
        doc = {"kind": "msk-migrate fence", "wave": wave.name, "topics": st.topics, "source": st.cluster,
               "source_cluster_id": st.cluster_id, "acls": [fence_mod.describe(t) for t in st.fenced],
               "config_fence": {t: {"set": {config_fence.KEY: config_fence.VALUE}, "previous": cfg.previous.get(t)}
                                for t in cfg.fenced},
               "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "quiet_seconds": quiet_seconds,
               "fenced_end_offsets": {f"{t}[{p}]": off for (t, p), off in sorted(w.ends.items())},
               "moved_during_watch": [m.to_dict() for m in w.moved]}
        loc = evidence_place(ledger, f"fence-{wave.label}.json").write(json.dumps(doc, indent=2, sort_keys=True) + "\n",
                                                                         "application/json")
        current = ledger.read()
        ledger.append(current, [Change("topic", t, "fenced", evidence=loc, wave=wave.name, detail=f"{how} on the source")
                                for t in st.topics if current.state_of("topic", t) != "producers-moved"], "cutover fence")
        res.evidence, res.ledger = loc, ledger.location
    return res


def unfence_topics(s: MigrationSession, ledger: Ledger, topics: list[str]) -> tuple[fence_mod.FenceState, list[str]]:
    """Remove the fence's ACLs and give every config-fenced topic back its recorded setting (idempotent).
    A topic carrying the config fence without a recorded previous setting is bad input (nothing changed)."""
    view = ledger.read()
    held = _held(view, topics)
    carrying = config_fence.carriers(s.source, topics)
    orphan = [t for t in carrying if t not in held]
    if orphan:
        raise UsageError("--fence", f"{orphan[0]} carries the config fence ({config_fence.KEY}={config_fence.VALUE}) but the "
                         f"ledger {ledger.location} holds no previous setting of it to restore; nothing was changed",
                         f"set it back yourself: kafka-configs.sh --bootstrap-server {s.source.bootstrap} --alter --entity-type "
                         f"topics --entity-name {orphan[0]} --delete-config {config_fence.KEY} (or --add-config with its old value)")
    if held:
        config_fence.validate(s.source, sorted(held))  # rights first: nothing half-restored
    st = fence_mod.unfence(s.source, topics)
    restored = config_fence.restore(s.source, held)
    return st, sorted(held) if held else restored


def unfence_and_record(s: MigrationSession, ledger: Ledger, wave: Wave, command: str = "cutover unfence") -> UnfenceResult:
    """Take the wave's fence off (:func:`unfence_topics`) and record every topic that was fenced as unfenced."""
    topics = list(wave.topics)
    view = ledger.read()
    ledger.ensure_latest(view)
    st, restored = unfence_topics(s, ledger, topics)
    res = UnfenceResult(st, restored, wave.name)
    view = ledger.read()
    was = [t for t in topics if view.state_of("topic", t) in ("fenced", "fencing") or t in restored]
    if was:
        ledger.append(view, [Change("topic", t, "unfenced", wave=wave.name, previous_config={} if t in restored else None,
                                    detail=f"{command}: the fence was removed") for t in was], command)
        res.recorded, res.ledger = len(was), ledger.location
    return res


# ---- cutover run --------------------------------------------------------------------------------------------
@dataclass
class StepRow:
    step: str
    ok: bool
    seconds: float
    result: str

    def to_dict(self) -> dict:
        return {"step": self.step, "ok": self.ok, "seconds": self.seconds, "result": self.result}


STEP_VIEW = [col("step", "step"), col("seconds", "seconds"), col("result", lambda r: "ok" if r.ok else "STOPPED", ok=lambda r: r.ok),
             col("evidence", "result")]


def run_wave(s: MigrationSession, ledger: Ledger, wave: Wave, *, quiet_seconds: float,
             timeout: float, talked_to: dict[str, Any], certificate: str | None = None,
             progress: Callable[[str], None] = quiet, fence_mode: str = "auto") -> Outcome:
    """checks -> fence -> drain -> snapshot validation -> certificate (see the module docstring)."""
    topics = list(wave.topics)
    view = ledger.read()
    moved = [t for t in topics if view.state_of("topic", t) == "producers-moved"]
    if moved and len(moved) == len(topics):
        return Outcome("cutover run", "producers-moved", 0, [], talked_to, {"wave": wave.name},
                       notes=[f"wave {wave.label}: producers already moved (ledger {ledger.location}); nothing to do"])
    steps: list[StepRow] = []
    cert_loc = certificate or certificate_location(ledger, wave)

    def step(name: str, fn: Callable[[], tuple[bool, str]]) -> bool:
        t0 = time.monotonic()
        progress(name)
        ok, text = fn()
        steps.append(StepRow(name, ok, round(time.monotonic() - t0, 1), text))
        return ok

    def checks() -> tuple[bool, str]:
        c1, c2, _ = check_groups(s.source, topics, groups_on_wave(view))
        return c1.ok and c2.ok, f"{c1.evidence}; {c2.evidence}"

    def fence() -> tuple[bool, str]:
        res = fence_and_record(s, ledger, wave, quiet_seconds, timeout, progress, fence_mode)
        return res.holds, "; ".join(fence_notes(res)[:3])

    def drain() -> tuple[bool, str]:
        current = ledger.read()
        ends = fenced_ends_of(ledger, current, topics)
        if ends is None:  # no authorizer: the watch's end offsets of this run stand for the fenced ones
            ends = end_offsets(s.source, partitions(s.source, topics))
        deadline = time.monotonic() + timeout
        while True:
            c = check_replicated(s, topics, ends)
            if c.ok or time.monotonic() > deadline:
                return c.ok, c.evidence
            time.sleep(2)

    def gate() -> tuple[bool, str]:
        current = ledger.read()
        res = producer_gate(s, topics, wave=wave.name, ledger=groups_on_wave(current), fenced_ends=fenced_ends_of(ledger, current, topics),
                            quiet_seconds=quiet_seconds, timeout=timeout, source_ep=s.source_endpoint, target_ep=s.target_endpoint,
                            report_dir=str(evidence_place(ledger, f"validation-{wave.label}")).removesuffix("/"),
                            progress=progress)
        certify(s, res, talked_to, cert_loc)
        bad, moved = res.first_failure(), moved_note(res)
        return res.ready, (f"certificate {', '.join(res.locations)}" if res.ready else f"{bad.name}: {bad.evidence}" if bad else "not ready") + \
            (f"; {moved}" if moved else "")

    for name, fn in (("checks", checks), ("fence", fence), ("drain", drain), ("snapshot validation and certificate", gate)):
        if not step(name, fn):
            return Outcome("cutover run", "stopped", 1, steps, talked_to, {"wave": wave.name, "stopped_at": name},
                           [View(f"cutover run: wave {wave.label}", STEP_VIEW)],
                           [f"stopped at {name}; fix what it names, then resume: {wave.resume}"])
    return Outcome("cutover run", "awaiting-producers", 0, steps, talked_to, {"wave": wave.name, "certificate": cert_loc},
                   [View(f"cutover run: wave {wave.label}", STEP_VIEW)],
                   [f"the source is fenced and the target holds every record: NOW point the producers of {', '.join(topics)} "
                    "at the target (a person must do this), then run `msk-migrate cutover confirm"
                    + wave.option + "`"])


# ---- cutover confirm ------------------------------------------------------------------------------------------
def confirm_wave(s: MigrationSession, ledger: Ledger, wave: Wave, *, timeout: float,
                 talked_to: dict[str, Any], certificate: str | None = None,
                 progress: Callable[[str], None] = quiet) -> Outcome:
    """The target receives direct writes on every topic of the wave, the source none since the fence; then
    "producers-moved" is recorded with the producer certificate as evidence."""
    topics = list(wave.topics)
    view = ledger.read()
    loc = certificate or certificate_location(ledger, wave)
    fenced = [t for t in topics if view.state_of("topic", t) in ("fenced", "producers-moved")]
    if len(fenced) < len(topics):  # every source can be fenced (ACL, or the config fence without an authorizer)
        missing = [t for t in topics if t not in fenced]
        raise UsageError("--wave", f"wave {wave.label}: {', '.join(missing[:5])} not fenced (ledger {ledger.location}): "
                         "confirm comes after the fence and the producer gate", f"run `{wave.resume}` first")
    try:
        cert = read_certificate(loc, "--certificate", wave.name)
    except UsageError:
        raise UsageError("--wave", f"wave {wave.label} has no producer certificate at {loc}: confirm comes after the fence "
                         "and the producer gate", f"run `{wave.resume}` first") from None
    if cert.get("verdict") != "ready" or set(cert.get("topics") or []) != set(topics):
        raise UsageError("--certificate", f"{loc} is not a ready certificate of these topics", f"run `{wave.resume}` again")
    for role, have in (("source", s.found.source_cluster_id), ("target", s.found.target_cluster_id)):
        named = cert.get(f"{role}_cluster_id")
        if named and have and named != have:  # another environment's certificate of topics with the same names
            raise UsageError("--certificate", f"{loc} is a producer certificate of {role} cluster {named}, not of this "
                             f"flow's {have}", f"pass this flow's certificate (default: its ledger's), or run `{wave.resume}`")
    ledger.ensure_latest(view)
    sel = topic_selection(s.migration)
    parts = {(p["topic"], p["partition"]): p for p in cert["partitions"]}
    tps = sorted(parts)
    deadline = time.monotonic() + timeout
    while True:
        src = end_offsets(s.source, tps)
        tgt = end_offsets(s.target, [(sel.target_name(t), p) for t, p in tps])
        rows = [{"topic": t, "partition": p, "source_end": src[(t, p)], "fenced_end": parts[(t, p)]["source_end_offset"],
                 "target_from": parts[(t, p)]["target_offset"], "target_end": tgt[(sel.target_name(t), p)],
                 "direct_writes": tgt[(sel.target_name(t), p)] - (parts[(t, p)]["target_offset"] or 0),
                 "source_writes": src[(t, p)] - parts[(t, p)]["source_end_offset"]} for t, p in tps]
        idle = sorted({r["topic"] for r in rows} - {r["topic"] for r in rows if r["direct_writes"] > 0})
        leaks = [r for r in rows if r["source_writes"] != 0]
        if leaks or not idle or time.monotonic() > deadline:
            break
        progress(f"waiting for direct writes on the target: {', '.join(idle)}")
        time.sleep(2)
    view_cols = [col("topic", "topic"), col("p", "partition", numeric=True),
                 col("source writes since fence", "source_writes", numeric=True, ok=lambda r: r["source_writes"] == 0),
                 col("target direct writes", "direct_writes", numeric=True, ok=lambda r: r["direct_writes"] > 0)]
    views = [View(f"cutover confirm: wave {wave.label}", view_cols)]
    if leaks:
        return Outcome("cutover confirm", "source-written", 1, rows, talked_to, {"wave": wave.name}, views,
                       ["the source received writes after the fence: " + ", ".join(f"{r['topic']}[{r['partition']}] +{r['source_writes']}"
                                                                                  for r in leaks[:8]) + "; find that producer, then confirm again"])
    if idle:
        return Outcome("cutover confirm", "no-direct-writes", 1, rows, talked_to, {"wave": wave.name}, views,
                       [f"no direct write on the target yet for {', '.join(idle)} within {timeout:.0f} s: point their producers at the "
                        "target, then confirm again"])
    ledger.append(view, [Change("topic", t, "producers-moved", evidence=loc, wave=wave.name,
                                detail="the target receives direct writes, the source none since the fence") for t in topics],
                  "cutover confirm")
    return Outcome("cutover confirm", "producers-moved", 0, rows, talked_to, {"wave": wave.name, "certificate": loc}, views,
                   [f"recorded in the ledger {ledger.location}: producers of {len(topics)} topic(s) moved; evidence {loc}",
                    "the fence stays on the source (no write may land there); `msk-migrate rollback` unfences first"])


# ---- abandon a group ------------------------------------------------------------------------------------------
def abandon_group(s: MigrationSession, ledger: Ledger, group: str, wave: str | None, reason: str, talked_to: dict[str, Any]) -> Outcome:
    view = ledger.read()
    if group not in s.source.groups():
        raise UsageError("--group", f"{group} is not a consumer group of the source {s.source.bootstrap}", "name a group of the source")
    ledger.append(view, [Change("group", group, "abandoned", wave=wave, detail=reason)], "cutover abandon-group")
    return Outcome("cutover abandon-group", "abandoned", 0, [{"group": group, "wave": wave, "reason": reason}], talked_to,
                   {"wave": wave}, notes=[f"recorded in the ledger {ledger.location}: {group} abandoned ({reason}); the producer "
                                          "gate no longer waits for it"])
