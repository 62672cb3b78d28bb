"""The producer gate (``cutover check --producers``) and the producer certificate it writes.

A wave's producers may move to the target only when every condition holds, each with its evidence:

1. groups: every group with committed offsets on the wave's topics on the source has moved (its offset
   certificate is in the ledger) or was declared abandoned by the operator (recorded in the ledger);
2. no consumer on the source: no group has a live member on the source assigned a partition of those topics;
3. writes stopped: the fence (ACLs, or the config fence :mod:`.config_fence`) is on every topic and the end
   offsets stayed at the fenced ones for the quiet period; on a source with neither, detection alone: no write
   for the quiet period (the evidence then says "not fenced"). Partitions that moved are named; commit/abort
   markers written after the fence are no writes (:func:`.watch.data_records`);
4. replicated exactly: MM2 copied every record up to the fenced end offsets (0 behind, counted, not bounded);
5. snapshot validated: a validation of exactly those offsets (``validate --offsets-snapshot``) matches.

Conditions 4 and 5 run only when 1-3 hold (the snapshot is meaningless while someone writes). The
certificate (JSON + HTML, ``digest`` = SHA-256 of the canonical JSON of everything else) records per
partition the fenced end offset and the target offset where it landed, the validation report, and the
groups with their certificates or abandonment.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...access.admin import TP, AdminSession
from ...access.offsets import end_offsets, last_stable_offsets, partitions
from ...errors import UsageError
from ...kafka.selection import topic_selection
from ...outcome import quiet
from ..evidence import Condition  # one gate condition, the consumer gate's and this one's
from ..lag import measure_lag
from ..proof_mark import check_proof_mark, is_proof_mark
from ..session import MigrationSession
from . import config_fence
from . import fence as fence_mod
from .watch import WatchResult, data_records, watch

KIND = "msk-migrate producer certificate"
VERSION = 1
NAMES = ("groups moved or abandoned", "no consumer on the source", "writes stopped", "replicated exactly",
         "snapshot validated")


@dataclass
class GroupsOnWave:
    """What the ledger says of the groups (filled by the caller from the ledger)."""

    moved: dict[str, str] = field(default_factory=dict)  #: group -> its offset certificate's location
    abandoned: dict[str, str] = field(default_factory=dict)  #: group -> the operator's reason


@dataclass
class GateResult:
    wave: str | None
    topics: list[str]
    conditions: list[Condition]
    watch: WatchResult | None = None
    fenced: bool = False  #: the fence's ACLs were on every topic (never true without an authorizer)
    fenced_ends: dict[TP, int] = field(default_factory=dict)  #: source LSO per partition once writes stopped
    source_ends: dict[TP, int] = field(default_factory=dict)  #: source high watermark per partition (every append counts)
    target_ends: dict[TP, int] = field(default_factory=dict)  #: target end offset per (source topic, partition)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    validation: dict[str, Any] | None = None
    certificate: dict[str, Any] | None = None
    locations: list[str] = field(default_factory=list)
    error: str | None = None  #: bad input found on the source (a right the gate's principal lacks): exit 2

    @property
    def ready(self) -> bool:
        return bool(self.conditions) and all(c.ok for c in self.conditions)

    def first_failure(self) -> Condition | None:
        return next((c for c in self.conditions if not c.ok), None)


def wave_groups(source: AdminSession, topics: list[str]) -> dict[str, list[TP]]:
    """Every group on the source with committed offsets on ``topics`` -> those partitions."""
    wanted = set(topics)
    out: dict[str, list[TP]] = {}
    for g, committed in source.committed_many(source.groups()):
        tps = sorted(tp for tp in committed if tp[0] in wanted)
        if tps:
            out[g] = tps
    return out


def active_consumers(source: AdminSession, groups: list[str], topics: list[str]) -> dict[str, list[str]]:
    """Group -> its live members on the source assigned a partition of ``topics`` (``client@host [topic-p]``)."""
    if not groups:
        return {}
    wanted = set(topics)
    futs = source.admin.describe_consumer_groups(list(groups), request_timeout=source.timeout)
    out: dict[str, list[str]] = {}
    for g, fut in futs.items():
        desc = source._result(f"describing group {g} failed", fut)
        for m in desc.members:
            tps = getattr(getattr(m, "assignment", None), "topic_partitions", None) or []
            mine = sorted(f"{tp.topic}-{tp.partition}" for tp in tps if tp.topic in wanted)
            if mine:
                out.setdefault(g, []).append(f"{m.client_id}@{m.host} [{', '.join(mine)}]")
    return out


def check_groups(source: AdminSession, topics: list[str], ledger: GroupsOnWave) -> tuple[Condition, Condition, dict[str, dict[str, Any]]]:
    readers = wave_groups(source, topics)
    groups: dict[str, dict[str, Any]] = {}
    left = []
    for g in sorted(readers):
        if g in ledger.moved:
            groups[g] = {"state": "consumers moved", "certificate": ledger.moved[g]}
        elif g in ledger.abandoned:
            groups[g] = {"state": "abandoned", "reason": ledger.abandoned[g]}
        else:
            groups[g] = {"state": "on the source"}
            left.append(g)
    c1 = Condition(NAMES[0], not left,
                   f"not moved and not abandoned: {', '.join(left)} (move each with `offsets sync --group G --certificate ...`, "
                   "or declare it with `cutover abandon-group --group G`)" if left
                   else f"{len(readers)} group(s) read the wave: " + (", ".join(f"{g} ({v['state']})" for g, v in groups.items()) or "none"))
    active = active_consumers(source, sorted(readers), topics)
    c2 = Condition(NAMES[1], not active,
                   "live on the source: " + "; ".join(f"{g}: {', '.join(m)}" for g, m in active.items()) if active
                   else "no live member of any group is assigned these topics on the source")
    return c1, c2, groups


class RightsMissing(UsageError):
    """The gate's principal may not read the fence (DESCRIBE on the cluster, DescribeConfigs on the topics): bad
    input, raised after the watch so the partitions still written are named first (:attr:`watch`)."""

    def __init__(self, exc: UsageError, w: WatchResult):
        super().__init__(exc.field, exc.message, exc.fix)
        self.watch = w


def check_writes(source: AdminSession, fence_session: AdminSession, topics: list[str], fenced_ends: dict[TP, int] | None,
                 quiet_seconds: float, timeout: float, progress: Callable[[str], None]) -> tuple[Condition, WatchResult, bool]:
    """Condition 3. The watch ends as soon as the answer is known: at the first data record past the fenced end offsets
    (or, unfenced, past the first look), or after the quiet period, or at ``timeout``. A principal that may not read the
    fence raises :class:`RightsMissing` after the watch (the written partitions named first)."""
    missing: UsageError | None = None
    st: fence_mod.FenceState | None = None
    by_config: list[str] = []
    try:
        st = fence_mod.state(fence_session, topics)
        by_config = config_fence.carriers(fence_session, topics)
    except UsageError as exc:
        missing = exc
    w = watch(source, topics, quiet_seconds, timeout, baseline=fenced_ends, progress=progress, stop_on_write=True)
    if missing is not None or st is None:
        raise RightsMissing(missing or UsageError("--wave", "no fence state", "run the fence"), w)
    fenced = set(st.fenced) | set(by_config)
    unfenced = [t for t in topics if t not in fenced]
    complete = not unfenced
    if (st.authorizer or by_config) and unfenced:
        return Condition(NAMES[2], False, f"no fence on {', '.join(unfenced)} (run `msk-migrate cutover fence`); {w.summary()}"), w, False
    if not w.quiet or w.moved:
        who = f"written since the fence: {w.moved_names()}" if w.moved else w.summary()
        return Condition(NAMES[2], False, f"{who}; the producers: see the producer table (or `{w.moved[0].producers}`)"
                         if w.moved else who), w, complete
    how = ("fenced (" + " and ".join(([f"DENY User:* WRITE on {len(st.fenced)} topic(s)"] if st.fenced else [])
                                     + ([f"{config_fence.KEY}={config_fence.VALUE} on {len(by_config)} topic(s)"] if by_config else []))
           + ")") if complete else "NOT fenced (the source has no authorizer): detection only"
    return Condition(NAMES[2], True, f"{how}; {w.summary()}"), w, complete


def check_replicated(s: MigrationSession, topics: list[str], fenced_ends: dict[TP, int]) -> Condition:
    rows = measure_lag(s, topics, 0, None)
    bad = [r for r in rows if not (r.exact and r.behind == 0)]
    moved = [r for r in rows if r.source_lso != fenced_ends.get((r.topic, r.partition), r.source_lso)]
    if moved:  # a commit/abort marker after the fence moves the LSO but is no write (data records count, markers not)
        data = data_records(s.source, {(r.topic, r.partition): (fenced_ends[(r.topic, r.partition)], r.source_lso)
                                       for r in moved if r.source_lso > fenced_ends[(r.topic, r.partition)]})
        moved = [r for r in moved if data.get((r.topic, r.partition), 1) > 0]
    if moved:
        return Condition(NAMES[3], False, f"the source moved past the fenced end: {moved[0].topic}[{moved[0].partition}] "
                         f"LSO {moved[0].source_lso} vs fenced {fenced_ends[(moved[0].topic, moved[0].partition)]}")
    if bad or not rows:
        worst = max(bad, key=lambda r: r.behind) if bad else None
        return Condition(NAMES[3], False, "no partition measured" if worst is None else
                         f"{len(bad)} partition(s) not at the fenced end, e.g. {worst.topic}[{worst.partition}] "
                         f"{'' if worst.exact else '<='}{worst.behind} behind (replicated {worst.replicated}, fenced {worst.source_lso})")
    return Condition(NAMES[3], True, f"{len(rows)} partition(s): every record up to the fenced end offsets replicated, 0 behind (counted)")


def validate_snapshot(s: MigrationSession, source_ep: Any, target_ep: Any, fenced_ends: dict[TP, int], report_dir: str | None,
                      progress: Callable[[str], None]) -> tuple[Condition, dict[str, Any]]:
    """``validate --offsets-snapshot`` of exactly ``fenced_ends`` (the native engine: no Spark at this size)."""
    from ...validation.job import run_validation
    from ...validation.request import PartitionRange, ValidationRequest

    snap: dict[str, dict[int, PartitionRange]] = {}
    for (t, p), end in sorted(fenced_ends.items()):
        snap.setdefault(t, {})[p] = PartitionRange(end=end)
    from .config_fence import KEY as FENCE_KEY

    sel = topic_selection(s.migration)
    # The config fence is the source's own setting while it holds (MirrorMaker 2 does not copy it): not a
    # difference between the copies the gate proves.
    req = ValidationRequest(source=source_ep, target=target_ep, offsets_snapshot=snap, mode="auto", engine="native",
                            topic_map={t: sel.target_name(t) for t in snap if sel.target_name(t) != t}, report_dir=report_dir,
                            ignore_configs=[FENCE_KEY])
    report = run_validation(req, progress=progress)
    data = report.to_dict() if hasattr(report, "to_dict") else {}
    summary = data.get("summary", {})
    out = {"verdict": report.verdict, "locations": list(getattr(report, "locations", []) or []),
           "records_compared": summary.get("source_records") or summary.get("source_count"),
           "run_id": (data.get("run") or {}).get("id")}
    ok = report.verdict == "match"
    return Condition(NAMES[4], ok, f"verdict {report.verdict}, {out['records_compared']} record(s) compared over the fenced "
                     f"snapshot; report {', '.join(out['locations']) or '(not written)'}"), out


def producer_gate(s: MigrationSession, topics: list[str], *, wave: str | None, ledger: GroupsOnWave,
                  fence_session: AdminSession | None = None, fenced_ends: dict[TP, int] | None = None,
                  quiet_seconds: float = 10.0, timeout: float = 60.0, source_ep: Any = None, target_ep: Any = None,
                  report_dir: str | None = None, validate: bool = True,
                  progress: Callable[[str], None] = quiet, proof_mark: str | None = None,
                  max_mark_age_s: float = 1800.0) -> GateResult:
    """Every condition of the producer gate for ``topics`` (see the module docstring). ``proof_mark``: when it
    names a ``validate --follow`` mark, the mark at or past the fenced end offsets is the validation evidence
    (no batch run of the snapshot); the row says which evidence it used."""
    source = s.source
    res = GateResult(wave, sorted(topics), [])
    c1, c2, res.groups = check_groups(source, topics, ledger)
    try:
        c3, res.watch, res.fenced = check_writes(source, fence_session or source, topics, fenced_ends, quiet_seconds, timeout, progress)
    except RightsMissing as exc:  # the partitions still written are named, then the missing right (exit 2)
        res.watch, res.error = exc.watch, str(exc)
        c3 = Condition(NAMES[2], False, (f"written since the fence: {exc.watch.moved_names()}; " if exc.watch.moved else "")
                       + f"the fence cannot be read: {exc.message}")
    res.conditions = [c1, c2, c3]
    if not all(c.ok for c in res.conditions):
        res.conditions += [Condition(n, False, "not checked: an earlier condition failed") for n in NAMES[3:]]
        return res
    tps = partitions(source, topics)
    res.fenced_ends = last_stable_offsets(source, tps)
    res.source_ends = end_offsets(source, tps)
    res.conditions.append(check_replicated(s, topics, res.fenced_ends))
    sel = topic_selection(s.migration)
    t_ends = end_offsets(s.target, [(sel.target_name(t), p) for t, p in tps])
    res.target_ends = {(t, p): t_ends[(sel.target_name(t), p)] for t, p in tps if (sel.target_name(t), p) in t_ends}
    if not res.conditions[-1].ok:
        res.conditions.append(Condition(NAMES[4], False, "not checked: replication has not reached the fenced end"))
        return res
    if proof_mark and is_proof_mark(proof_mark):
        cond = check_proof_mark(proof_mark, res.fenced_ends, "the fenced end offsets", max_mark_age_s,
                                source.cluster_id(), s.target.cluster_id())
        res.conditions.append(Condition(NAMES[4], cond.ok, cond.evidence))
    elif validate and source_ep is not None and target_ep is not None:
        cond, res.validation = validate_snapshot(s, source_ep, target_ep, res.fenced_ends, report_dir, progress)
        res.conditions.append(cond)
    else:
        res.conditions.append(Condition(NAMES[4], False, "no validation run (the gate needs one of the fenced snapshot)"))
    return res


# ---- the certificate ------------------------------------------------------------------------------------
def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def build_certificate(res: GateResult, source_id: str | None, target_id: str | None, sel_target: Callable[[str], str]) -> dict[str, Any]:
    parts = [{"topic": t, "partition": p, "fenced_end_offset": o, "source_end_offset": res.source_ends.get((t, p), o),
              "target_topic": sel_target(t),
              "target_offset": res.target_ends.get((t, p))} for (t, p), o in sorted(res.fenced_ends.items())]
    body = {"kind": KIND, "version": VERSION, "wave": res.wave, "topics": res.topics,
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "source_cluster_id": source_id, "target_cluster_id": target_id,
            "verdict": "ready" if res.ready else "not-ready", "fenced": res.fenced,
            "writes_stopped_by": "fence" if res.fenced else "detection only (no authorizer: not fenced)",
            "quiet_seconds": res.watch.quiet_seconds if res.watch else None,
            "conditions": [c.to_dict() for c in res.conditions], "partitions": parts,
            "validation": res.validation, "groups": res.groups}
    return {**body, "digest": _digest(body)}


def render_html(cert: dict[str, Any]) -> str:
    e = html.escape
    rows = "".join(f"<tr><td>{e(p['topic'])}</td><td>{p['partition']}</td><td>{p['fenced_end_offset']}</td>"
                   f"<td>{e(p['target_topic'])}</td><td>{p['target_offset']}</td></tr>" for p in cert["partitions"])
    conds = "".join(f"<tr><td>{e(c['name'])}</td><td class={'ok' if c['ok'] else 'bad'}>{'ok' if c['ok'] else 'NOT READY'}</td>"
                    f"<td>{e(c['evidence'])}</td></tr>" for c in cert["conditions"])
    groups = "".join(f"<tr><td>{e(g)}</td><td>{e(v['state'])}</td><td>{e(str(v.get('certificate') or v.get('reason') or ''))}</td></tr>"
                     for g, v in cert["groups"].items())
    val = cert.get("validation") or {}
    return ("<!doctype html><meta charset=utf-8><title>producer certificate</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
            "padding:2px 6px}.ok{color:#070}.bad{color:#b00}</style>"
            f"<h1>Producer certificate: wave {e(str(cert['wave']))}: {e(cert['verdict'])}</h1>"
            f"<p>created {e(cert['created_at'])}; source cluster {e(str(cert['source_cluster_id']))}, target cluster "
            f"{e(str(cert['target_cluster_id']))}; writes stopped by {e(cert['writes_stopped_by'])}; digest {e(cert['digest'])}</p>"
            f"<table><caption>conditions</caption><tr><th>condition</th><th>result</th><th>evidence</th></tr>{conds}</table>"
            "<table><caption>partitions</caption><tr><th>topic</th><th>p</th><th>fenced end offset</th><th>target topic</th>"
            f"<th>target offset (where it landed)</th></tr>{rows}</table>"
            f"<table><caption>groups</caption><tr><th>group</th><th>state</th><th>evidence</th></tr>{groups}</table>"
            f"<p>validation: {e(str(val.get('verdict')))}, {e(str(val.get('records_compared')))} record(s); "
            f"{e(', '.join(val.get('locations') or []))}</p>\n")


def write_certificate(cert: dict[str, Any], location: str, field: str = "--certificate") -> list[str]:
    """The certificate as JSON and HTML at ``location`` (a directory, a .json path or s3://)."""
    from ...store import document

    name = f"producer-certificate-{cert['wave'] or 'migration'}.json"
    place = document(location, field, name)
    return [place.write(json.dumps(cert, indent=2, sort_keys=True) + "\n", "application/json"),
            place.with_suffix(".html").write(render_html(cert), "text/html")]


def read_certificate(location: str, field: str = "--certificate", wave: str | None = None) -> dict[str, Any]:
    """A producer certificate, checked: its kind and its digest (an edited certificate is refused)."""
    from ...errors import UsageError
    from ...store import document

    place = document(location, field, f"producer-certificate-{wave or 'migration'}.json")
    try:
        cert = json.loads(place.read_bytes("pass the certificate written by `cutover check --producers`"))
    except ValueError:
        raise UsageError(field, f"{place} is not JSON", "pass the certificate written by `cutover check --producers`") from None
    if not isinstance(cert, dict) or cert.get("kind") != KIND:
        raise UsageError(field, f"{place} is not a producer certificate", "pass the certificate written by `cutover check --producers`")
    body = {k: v for k, v in cert.items() if k != "digest"}
    if _digest(body) != cert.get("digest"):
        raise UsageError(field, f"{place} was edited after it was written (digest differs)", "run `cutover check --producers` again")
    return cert
