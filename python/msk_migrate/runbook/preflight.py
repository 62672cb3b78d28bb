"""Preflight: everything that can be checked before the connectors are applied.

Preflight is a list of small check functions (:data:`SOURCE_CHECKS`, :data:`TARGET_CHECKS`), each adding
``ok``, ``warn``, ``fail`` or ``skip`` rows with a sentence an SRE can act on; add a check by appending a
function. Source checks need only the source cluster, so preflight runs before the stack is deployed
(a created MSK cluster has no bootstrap servers yet): the target checks are then reported as ``skip``
and run after deploy with ``--target-bootstrap``. Unreachable clusters raise (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from ..access.admin import TP, AdminSession
from ..access.offsets import end_offsets, partitions, submit_end_offsets
from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from ..kafka import names
from ..kafka.selection import NameFilter, TopicSelection, group_selection, topic_selection
from ..outcome import Outcome, Progress, View, col, quiet
from .capacity import require_replication_factors  # noqa: F401 - re-exported
from .session import MigrationSession
from .waves import WavePlan, plan_waves

if TYPE_CHECKING:
    from ..topology.plan import FlowRef

#: Another migration preflight compares against: its planner view and its source's endpoint (listed for topics and groups).
OtherFlow = tuple["FlowRef", ClusterEndpoint]


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail | skip
    detail: str


@dataclass
class PreflightReport:
    checks: list[Check] = field(default_factory=list)
    topics: list[dict] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    dropped_topics: list[str] = field(default_factory=list)  #: matched by topics, removed by topics_exclude
    dropped_groups: list[str] = field(default_factory=list)  #: consume selected topics, not checkpointed

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def add(self, name: str, status: str, detail: str) -> None:
        self.checks.append(Check(name, status, detail))

    def to_dict(self) -> dict:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks], "topics": self.topics, "groups": self.groups,
                "dropped_topics": self.dropped_topics, "dropped_groups": self.dropped_groups}


@dataclass
class Preflight:
    """What the checks read: the command's session, the report they fill, the selected topics (filled
    by the first check) and the other migrations into the same target (``--with-env``/``--with-config``).
    ``target`` is None before deploy (the target checks are then skipped)."""

    session: MigrationSession
    report: PreflightReport
    selected: list[str] = field(default_factory=list)
    others: Sequence[OtherFlow] = ()
    #: ``--wave``: the checks look at this wave's topics and the groups that move with it (None: the whole migration)
    wave: str | None = None
    _plan: WavePlan | None = field(default=None, repr=False)
    #: the target's end offsets of the selected topics there, asked with the source's (one round trip for both)
    _target_ends: tuple[list[TP], Callable[[], dict[TP, int]]] | None = field(default=None, repr=False)

    def wave_plan(self) -> WavePlan:
        """The migration's waves over the source, read once per preflight."""
        if self._plan is None:
            self._plan = plan_waves(self.source, self.migration)
        return self._plan

    @property
    def source(self) -> AdminSession:
        return self.session.source

    @property
    def target(self) -> AdminSession | None:
        return self.session.target_session

    @property
    def migration(self) -> MigrationSpec:
        return self.session.migration

    @property
    def worker(self) -> WorkerSpec:
        return self.session.worker

    def endpoint(self, role: str) -> ClusterEndpoint | None:
        return self.session.source_endpoint if role == "source" else self.session.target_endpoint


# ---- source side -----------------------------------------------------------------------------------
def _reached(p: Preflight, role: str, session: AdminSession) -> str:
    ep = p.endpoint(role)
    return f"{session.bootstrap} ({ep.auth.mode})" if ep is not None else str(session.bootstrap)


def check_source_reachable(p: Preflight) -> None:
    p.report.add("source reachable", "ok", _reached(p, "source", p.source))


def check_source_version(p: Preflight) -> None:
    """The source's release from the API versions a broker answers (:mod:`msk_migrate.kafka.releases`), and
    whether the worker's Kafka clients can read it: the row states what ApiVersions showed, nothing more."""
    from ..access.api_versions import ApiVersionsError, api_versions
    from ..kafka.releases import client_advice, release_of

    try:
        release = release_of(api_versions(p.source.conf))
    except ApiVersionsError as exc:
        p.report.add("source broker version", "warn", f"no broker answered ApiVersions ({exc}): the release is "
                     "unknown; Kafka < 0.10.0 closes the connection, and MirrorMaker 2 needs >= 0.10.0")
        return
    status, advice = client_advice(release)
    if not release.consistent:
        status, advice = "warn", f"API versions out of release order (a patched build?): {advice}"
    p.report.add("source broker version", status, f"{release.describe()} by its API versions "
                 f"({release.evidence}); {advice}")


def _per_topic(ends: dict[tuple[str, int], int]) -> dict[str, int]:
    """End offsets summed per topic (one pass, not one per topic)."""
    out: dict[str, int] = {}
    for (t, _), v in ends.items():
        out[t] = out.get(t, 0) + v
    return out


def check_topics_selected(p: Preflight) -> None:
    sel = topic_selection(p.migration)
    p.selected = sel.select(p.source.topics())
    if not p.selected:
        p.report.add("topics selected", "fail", f"no source topic matches topics={p.migration.topics} minus topics_exclude")
        return
    if p.wave is not None:
        mine = set(p.wave_plan().topics_of(p.wave))
        p.selected = [t for t in p.selected if t in mine]
        if not p.selected:  # a wave that holds nothing checks nothing: never a pass
            p.report.add("topics selected", "fail", f"wave {p.wave} holds no topic of the selection on the source "
                         f"(fix migration.waves.{p.wave}, or create its topics first)")
            return
    source_ends = submit_end_offsets(p.source, partitions(p.source, p.selected))
    if p.target is not None:
        ttps = partitions(p.target, _on_target(p, sel))
        p._target_ends = (ttps, submit_end_offsets(p.target, ttps))
    per_topic = _per_topic(source_ends())
    for t in p.selected:
        p.report.topics.append({"topic": t, "target_topic": sel.target_name(t), "partitions": p.source.topics()[t],
                                "records_upper_bound": per_topic.get(t, 0)})
    total = sum(p.source.topics()[t] for t in p.selected)
    p.report.add("topics selected", "ok", f"{len(p.selected)} topic(s), {total} partition(s)"
                 + (f" of wave {p.wave}" if p.wave is not None else ""))


def _bookkeeping(p: Preflight) -> NameFilter:
    """Names that are Kafka's, MM2's or Connect's own (never a business topic): not worth a warning."""
    own = (r"__.*", r"_schemas", r"mm2-.*", *names.MM2_TOPIC_PATTERNS,
           *(re.escape(t) for t in (p.worker.config_storage_topic, p.worker.offset_storage_topic,
                                    p.worker.status_storage_topic)),
           r"connect-(configs|offsets|status)", r".*\.checkpoints\.internal")
    return NameFilter(own)


def check_topics_dropped(p: Preflight) -> None:
    """Topics the ``topics`` regexes match that ``topics_exclude`` removes (e.g. a business topic named
    ``payments.ledger-internal`` matched by the default ``.*[-.]internal``), by name: validation uses the
    same excludes, so nothing else would notice them missing on the target."""
    inc = NameFilter(tuple(p.migration.topics))
    excl = [re.compile(x) for x in p.migration.topics_exclude]
    own = _bookkeeping(p)
    dropped = {}
    for t in sorted(p.source.topics()):
        if inc.matches(t) and not own.matches(t):
            hit = next((x.pattern for x in excl if x.fullmatch(t)), None)
            if hit is not None:
                dropped[t] = hit
    p.report.dropped_topics = sorted(dropped)
    if dropped:
        shown = ", ".join(f"{t} (by exclude {x})" for t, x in list(dropped.items())[:10]) + (" ..." if len(dropped) > 10 else "")
        p.report.add("topics dropped by excludes", "warn",
                     f"{len(dropped)} topic(s) match topics but topics_exclude removes them: {shown} "
                     "(replicate one: list it in topics and drop the exclude that catches it)")
    else:
        p.report.add("topics dropped by excludes", "ok", "no topic matched by topics is removed by topics_exclude "
                     "(Kafka, MM2 and Connect bookkeeping aside)")


def check_groups_dropped(p: Preflight, limit: int = 500) -> None:
    """Groups with committed offsets on a selected topic that the group filter leaves out: their consumers
    would restart on the target from ``auto.offset.reset`` (no translated offsets)."""
    chosen = set(p.report.groups)
    selected = set(p.selected)
    others = [g for g in p.source.groups() if g not in chosen][:limit]
    dropped = {}
    for g, comm in p.source.committed_many(others):  # OffsetFetch requests in flight together
        topics = sorted({t for t, _ in comm if t in selected})
        if topics:
            dropped[g] = topics
    p.report.dropped_groups = sorted(dropped)
    if dropped:
        shown = ", ".join(f"{g} (reads {', '.join(ts[:3])})" for g, ts in list(dropped.items())[:10])
        p.report.add("groups not checkpointed", "warn",
                     f"{len(dropped)} group(s) consume selected topics but groups/groups_exclude leave them out: {shown} "
                     "(their consumers restart from auto.offset.reset on the target; add them to groups)")
    else:
        p.report.add("groups not checkpointed", "ok", "every group that consumes a selected topic is checkpointed")


def check_tasks_max(p: Preflight) -> None:
    total = sum(p.source.topics()[t] for t in p.selected)
    if total and p.migration.tasks_max > total:
        p.report.add("tasks.max", "warn", f"tasks_max={p.migration.tasks_max} > {total} partitions: extra tasks stay idle")
    else:
        p.report.add("tasks.max", "ok", f"tasks_max={p.migration.tasks_max} for {total} partition(s)")


def check_worker_heap(p: Preflight) -> None:
    """The worker's heap (and ECS task memory) against the memory model for the selected partitions
    (runbook/preflight_heap.py, config/worker_sizing.py): a fail names the heap the flow needs."""
    from .preflight_heap import heap_row, placement_of

    total = sum(p.source.topics()[t] for t in p.selected)
    flow = p.session.flow
    where = placement_of(p.worker, flow.env_name if flow is not None else None)
    p.report.add(*heap_row(p.migration, total, p.source.broker_count(), where))


def check_groups(p: Preflight) -> None:
    p.report.groups = group_selection(p.migration).select(p.source.groups())
    if p.wave is not None:
        p.report.groups = p.wave_plan().groups_of(p.wave)
        n = len(p.report.groups)
        p.report.add("consumer groups", "ok" if n else "warn", f"{n} group(s) move with wave {p.wave}" if n else
                     f"no checkpointed group has committed offsets on a topic of wave {p.wave} (a group that never "
                     "committed is not seen: declare it with `cutover abandon` if it is gone)")
        return
    n = len(p.report.groups)
    p.report.add("consumer groups", "ok" if n else "warn",
                 f"{n} group(s) will be checkpointed" if n else "no source group matches groups")


# ---- target side -----------------------------------------------------------------------------------
def check_target_reachable(p: Preflight) -> None:
    assert p.target is not None
    p.report.add("target reachable", "ok", _reached(p, "target", p.target))


def _on_target(p: Preflight, sel: TopicSelection) -> list[str]:
    """The selected topics' names on the target that exist there (its metadata as the session has it)."""
    assert p.target is not None
    tgt_md = p.target.topics()
    return [sel.target_name(t) for t in p.selected if sel.target_name(t) in tgt_md]


def check_target_topics(p: Preflight) -> None:
    assert p.target is not None
    sel = topic_selection(p.migration)
    tgt_md = p.target.topics()
    conflicts, mismatched = [], []
    ttps = partitions(p.target, _on_target(p, sel))
    asked = p._target_ends
    # the round asked beside the source's answers for exactly these partitions (else: ask now)
    tends = _per_topic(asked[1]() if asked is not None and asked[0] == ttps else end_offsets(p.target, ttps))
    for row in p.report.topics:
        name = row["target_topic"]
        row["exists_on_target"] = name in tgt_md
        if name not in tgt_md:
            continue
        row["target_partitions"] = tgt_md[name]
        if tgt_md[name] != row["partitions"]:
            mismatched.append(f"{name} ({row['partitions']} vs {tgt_md[name]})")
        elif tends.get(name, 0) > 0:
            conflicts.append(name)
    if mismatched:
        p.report.add("target partition counts", "fail",
                     "already on target with a different partition count: " + ", ".join(mismatched)
                     + " (delete them on the target or align partitions before replicating)")
    if conflicts:
        p.report.add("target topics empty", "warn",
                     "already hold data on the target (MM2 appends; validation will report extra records): "
                     + ", ".join(conflicts[:10]) + ("..." if len(conflicts) > 10 else ""))
    elif p.selected and not mismatched:
        p.report.add("target topics empty", "ok", "no selected topic holds data on the target yet")


def check_replication_factor(p: Preflight) -> None:
    assert p.target is not None
    brokers = p.target.broker_count()
    rf = max(p.migration.replication_factor, p.migration.internal_replication_factor, p.worker.replication_factor)
    if rf > brokers:
        p.report.add("replication factor", "fail", f"RF {rf} > {brokers} target broker(s): lower replication_factor")
    else:
        p.report.add("replication factor", "ok", f"RF {rf} <= {brokers} target broker(s)")


def check_target_auto_create(p: Preflight) -> None:
    assert p.target is not None
    auto = p.target.broker_config("auto.create.topics.enable")
    if auto == "true":
        p.report.add("target auto.create.topics.enable", "warn",
                     "true: a producer moved too early silently creates topics with default settings")
    elif auto == "false":
        p.report.add("target auto.create.topics.enable", "ok", "false")


def check_source_acls(p: Preflight) -> None:
    """MM2's user holds the source ACLs it needs (runbook/preflight_acls.py); a missing one is named."""
    from .preflight_acls import acl_rows

    for row in acl_rows(p.source, p.source.conf.get("sasl.username"), p.selected):
        p.report.add(*row)


CheckFn = Callable[[Preflight], None]
SOURCE_CHECKS: list[CheckFn] = [check_source_reachable, check_source_version, check_topics_selected,
                                check_topics_dropped, check_tasks_max, check_worker_heap, check_groups, check_groups_dropped,
                                check_source_acls]


def check_waves(p: Preflight) -> None:
    """Each wave: its topics, the groups that move with it, and the groups that read topics of two waves
    (they move with the later one) (runbook/waves.py)."""
    from .waves import check_waves as rows

    rows(p)


SOURCE_CHECKS.append(check_waves)


def check_mm2_limits(p: Preflight) -> None:
    """MM2's own limits (runbook/preflight_mm2.py): record sizes vs the producer's request size,
    replication factor vs min.insync.replicas, partitions per MSK broker type."""
    from .preflight_mm2 import mm2_checks

    assert p.target is not None
    desc = p.target._result("describe cluster failed", p.target.admin.describe_cluster(request_timeout=p.target.timeout))
    ep = p.endpoint("target")
    for row in mm2_checks(p.source, p.target, p.report.topics, p.migration, p.worker,
                          [n.id for n in desc.nodes], ep.msk_broker_type if ep is not None else None):
        p.report.add(*row)


TARGET_CHECKS: list[CheckFn] = [check_target_reachable, check_target_topics, check_replication_factor,
                                check_target_auto_create, check_mm2_limits]


def check_schema_registry(p: Preflight) -> None:
    """The flow's schema registries (``schema_registry``): a Glue target cannot keep the records' ids, said
    before anything moves; a Confluent-compatible pair is named (``schemas copy`` keeps the ids)."""
    from ..schemas.glue import NOTE, is_glue

    flow = p.session.flow
    regs = flow.registry_urls() if flow is not None else None
    if not regs:
        p.report.add("schema registries", "skip", "the flow names no schema_registry (records carrying schema ids are "
                     "proven by validate only against registries: docs/schemas.md)")
        return
    glue = [role for role in ("source", "target") if is_glue(regs[role])]
    if glue:
        p.report.add("schema registries", "fail", f"the {' and '.join(glue)} registry is AWS Glue: {NOTE}")
        return
    p.report.add("schema registries", "ok", f"source {regs['source']}, target {regs['target']}: `msk-migrate schemas copy` "
                 "keeps every id and version; validate proves each record's id on both")


SOURCE_CHECKS.append(check_schema_registry)


#: The condition's name: a consolidation's migrations must not write one name into their shared target.
OTHER_MIGRATIONS = "no collision with other migrations into the target"


def check_other_migrations(p: Preflight) -> None:
    """``--with-env``/``--with-config``: this flow against the other migrations given, on the sources' actual
    topics and groups (:mod:`msk_migrate.topology.plan`): a topic or consumer group both send to the shared
    target, naming both sources. What the configuration alone refuses was refused before any connection
    (commands/topology.py: :func:`~msk_migrate.commands.topology.other_flows`)."""
    if not p.others:
        p.report.add(OTHER_MIGRATIONS, "skip", "no other migration given (--with-env NAME / --with-config FILE for each "
                     "migration into the same target)")
        return
    from ..topology.plan import SourceInventory, flow_ref, plan_topology

    flow = p.session.flow
    if flow is None:
        p.report.add(OTHER_MIGRATIONS, "skip", "the session names no flow to compare")
        return
    me = flow_ref(flow).with_ids(p.session.found.source_cluster_id, p.session.found.target_cluster_id)
    if not me.target.known:
        p.report.add(OTHER_MIGRATIONS, "skip", "this flow's target is not known yet: run preflight again after deploy with "
                     "--target-bootstrap (stack output target_bootstrap_brokers_connect)")
        return
    mine = SourceInventory(frozenset(p.source.topics()), frozenset(p.source.groups()))
    inventories = {me.label: mine}
    refs = []
    for ref, src in p.others:
        if me.source.same(ref.source):
            inventories[ref.label] = mine
            sid = p.session.found.source_cluster_id
        else:
            other = AdminSession.for_endpoint("source", src)
            inventories[ref.label] = SourceInventory(frozenset(other.topics()), frozenset(other.groups()))
            sid = other.cluster_id()
        refs.append(ref.with_ids(sid, None))
    into = [r for r in refs if r.target.same(me.target)]
    if not into:
        p.report.add(OTHER_MIGRATIONS, "ok", f"none of {', '.join(r.label for r in refs)} writes into this flow's target")
        return
    problems = [x for x in plan_topology([me, *refs], inventories).problems if me.label in x.flows]
    if problems:
        p.report.add(OTHER_MIGRATIONS, "fail", "; ".join(x.line for x in problems[:5])
                     + (f"; and {len(problems) - 5} more" if len(problems) > 5 else ""))
    else:
        p.report.add(OTHER_MIGRATIONS, "ok", f"no topic or consumer group of this flow's source is written into the shared "
                     f"target by {', '.join(r.label for r in into)} (compared on the sources' topics and groups)")


SOURCE_CHECKS.append(check_other_migrations)


def run_preflight(s: MigrationSession, others: Sequence[OtherFlow] = (), wave: str | None = None) -> PreflightReport:
    """Every check of :data:`SOURCE_CHECKS`, then of :data:`TARGET_CHECKS` when the session has a target;
    ``others``: the other migrations into the same target (:func:`check_other_migrations`); ``wave``: only that
    wave's topics and groups (checked against the migration by the command)."""
    rep = PreflightReport()
    p = Preflight(s, rep, others=others, wave=wave)
    for check in SOURCE_CHECKS:
        check(p)
    if p.target is None:
        rep.add("target checks", "skip", "no target bootstrap yet (created by the stack): run preflight again after "
                "deploy with --target-bootstrap (stack output target_bootstrap_brokers_connect)")
    else:
        for check in TARGET_CHECKS:
            check(p)
    return rep


_TINT = {"ok": "green", "warn": "yellow", "fail": "red", "skip": "cyan"}


def preflight(s: MigrationSession, progress: Progress = quiet, others: Sequence[OtherFlow] = (),
              wave: str | None = None) -> Outcome:
    """``msk-migrate preflight``: exit 0 every check passed, 1 a check failed, 2 MM2's user lacks a source
    ACL (a fix of the input, granted by the operator, not a state of the clusters: the line names it)."""
    from .preflight_acls import NAME as ACLS_CHECK

    progress("running preflight checks" + (f" of wave {wave}" if wave is not None else ""))
    rep = run_preflight(s, others, wave)
    acl = next((c for c in rep.checks if c.name == ACLS_CHECK and c.status == "fail"), None)
    doc = {**rep.to_dict(), "wave": wave}
    return Outcome("preflight", "ok" if rep.ok else "failed", 0 if rep.ok else 2 if acl else 1, doc["checks"],
                   s.talked_to(), extra=doc, error=f"{ACLS_CHECK}: {acl.detail}" if acl else None,
                   views=[View("preflight", [col("check", "name"), col("status", lambda c: f"[{_TINT[c['status']]}]{c['status']}[/]"),
                                             col("detail", "detail")])])
