"""How several migration flows relate, and what would make them overwrite each other: a pure planner.

API: :func:`plan_topology` ``(flows, inventories=None) -> TopologyPlan``. ``flows`` are :class:`FlowRef`
(:func:`flow_ref` builds one from a :class:`~msk_migrate.config.flow.Flow`); ``inventories`` are the
source clusters' topics and groups as a command listed them (:class:`SourceInventory`, by flow label), or
None offline. Nothing here opens a connection or reads a file: the caller lists the clusters and passes
what it found, as Kafka's MirrorCheckpointTask takes its stores (the decisions small, the data handed in).

Relations (one :class:`Relation` per pair of flows that share a cluster):

- ``consolidation``: both flows write into one target cluster;
- ``fan-out``: both flows read one source cluster;
- ``active/active``: A -> B and B -> A over overlapping topics (``reverse pair`` without overlap);
- ``forwarding``: A -> B then B -> C, the second flow taking topics the first writes.

Problems (:class:`Problem`), each naming the flows, the field to change and the fix:

- consolidation: a target topic name both flows write (after each flow's ``topic_renames``); a consumer
  group both checkpoint onto the target; a shared connector name prefix (``migration.name``), Connect
  ``group.id`` or Connect topic; MM2 internal topics both would use (Kafka's names on both, or one source
  alias, whose ``<alias>.heartbeats`` both write); a rename rule mapping topics of two flows (or a renamed
  and a copied topic of one flow) to one target name;
- fan-out: a target that is the flow's own source;
- loop: a topic both flows of an A <-> B pair select, unless both set ``migration.mark_copies`` and call each
  cluster by one alias (a marked flow S -> T skips what is marked as copied from T's alias: docs/active-active.md);
  the same for a ring of three or more flows a topic travels round (A -> B -> C -> A).

Invariants: cluster identity prefers cluster ids (when both are known), then MSK cluster ARNs, then the
bootstrap servers as given (lower-cased, sorted; one shared broker makes one cluster). A problem found
from the configuration alone is ``stage="config"`` (found before any network call); one found only on the
clusters' actual topics or groups is ``stage="cluster"``. Every problem is a refusal, exit 2, whichever stage
found it: its fix is always a setting of the flows (``Problem.field``), never a change to the clusters. Only a
question offline cannot decide is exit 1 (a verdict on what was not compared is no pass). Offline, only exact
names are compared; a regex selection's overlap cannot be decided and is said so (:attr:`TopologyPlan.undecided`),
never reported as clean.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from typing import Any, Literal

from ..config.flow import Flow
from ..config.migration import MigrationSpec, WorkerSpec
from ..kafka import names
from ..kafka.selection import NameFilter, TopicSelection, group_selection, topic_selection

Stage = Literal["config", "cluster"]
#: A regex that can match one name only: letters, digits, '_', '-', and '.' escaped or not (an unescaped
#: '.' also matches the literal dot, so the name itself is certainly selected).
_LITERAL = re.compile(r"(?:[A-Za-z0-9_-]|\\[.\-_]|\.)+")


def literal_name(pattern: str) -> str | None:
    """The topic or group name ``pattern`` spells (``orders\\.created`` -> ``orders.created``), or None for a regex."""
    if not _LITERAL.fullmatch(pattern):
        return None
    return re.sub(r"\\(.)", r"\1", pattern)


@dataclass(frozen=True)
class ClusterRef:
    """One cluster as the flows name it: bootstrap servers (normalised), and its id and MSK ARN when known."""

    bootstrap: tuple[str, ...]
    cluster_id: str | None = None
    arn: str | None = None

    @classmethod
    def of(cls, bootstrap: str | None, cluster_id: str | None = None, arn: str | None = None) -> ClusterRef:
        servers = sorted({s.strip().lower() for s in (bootstrap or "").split(",") if s.strip()})
        return cls(tuple(servers), cluster_id, arn)

    @property
    def known(self) -> bool:
        return bool(self.bootstrap or self.cluster_id or self.arn)

    def same(self, other: ClusterRef) -> bool:
        """One cluster: equal ids when both are known, else equal ARNs, else a shared bootstrap server."""
        if self.cluster_id and other.cluster_id:
            return self.cluster_id == other.cluster_id
        if self.arn and other.arn:
            return self.arn == other.arn
        return bool(set(self.bootstrap) & set(other.bootstrap))

    def describe(self) -> str:
        where = ",".join(self.bootstrap) or (self.arn or "?")
        return f"{where} (cluster id {self.cluster_id})" if self.cluster_id else where


@dataclass(frozen=True)
class FlowRef:
    """What the planner reads of one flow: its label (``--env`` name or flow file), both clusters and aliases,
    the migration and the worker."""

    label: str
    source: ClusterRef
    target: ClusterRef
    source_alias: str
    target_alias: str
    migration: MigrationSpec
    worker: WorkerSpec

    @property
    def topics(self) -> TopicSelection:
        return topic_selection(self.migration)

    @property
    def groups(self) -> NameFilter:
        return group_selection(self.migration)

    @property
    def marks_copies(self) -> bool:
        return self.migration.mark_copies

    def with_ids(self, source_id: str | None, target_id: str | None) -> FlowRef:
        """This flow with the cluster ids a command found (None keeps what was known)."""
        return replace(self, source=replace(self.source, cluster_id=source_id or self.source.cluster_id),
                       target=replace(self.target, cluster_id=target_id or self.target.cluster_id))


def flow_label(flow: Flow) -> str:
    """How a flow is named in rows and lines: its environment, else its file."""
    return flow.env_name or flow.origin.removeprefix("flow file ")


def flow_ref(flow: Flow, label: str | None = None, target_bootstrap: str | None = None) -> FlowRef:
    """The planner's view of ``flow``; ``target_bootstrap`` stands in for a target the flow does not name
    (an environment's recorded target)."""
    target = flow.target.bootstrap_servers if flow.target is not None else target_bootstrap
    return FlowRef(label or flow_label(flow), ClusterRef.of(flow.source.bootstrap_servers, arn=flow.msk_cluster_arns.get("source")),
                   ClusterRef.of(target, arn=flow.msk_cluster_arns.get("target")), flow.source.alias,
                   flow.target.alias if flow.target is not None else "target", flow.migration, flow.worker)


@dataclass(frozen=True)
class SourceInventory:
    """A source cluster's topics and consumer groups as listed (by the command, not here)."""

    topics: frozenset[str]
    groups: frozenset[str]


@dataclass(frozen=True)
class Relation:
    """How flows relate: a pair (``kind``: consolidation | fan-out | active/active | reverse pair | forwarding |
    parallel), or a ring of three or more flows a topic travels round with its copies marked (``ring``)."""

    kind: str
    flows: tuple[str, ...]
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"row": "relation", "kind": self.kind, "flows": list(self.flows), "detail": self.detail}


@dataclass(frozen=True)
class Problem:
    """What would make two flows (or one) overwrite or loop: ``field`` is the configuration field to change,
    ``subject`` the topic, group or name at stake, ``line`` the one sentence naming both and the fix."""

    kind: str
    flows: tuple[str, ...]
    field: str
    subject: str
    detail: str
    fix: str
    stage: Stage

    @property
    def line(self) -> str:
        return f"{self.field}: {self.detail} ({self.fix})"

    def to_dict(self) -> dict[str, Any]:
        return {"row": "problem", **{k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()},
                "line": self.line}


@dataclass(frozen=True)
class Undecided:
    """A question the planner could not answer offline (a regex selection's overlap with another flow's)."""

    flows: tuple[str, str]
    what: str

    def to_dict(self) -> dict[str, Any]:
        return {"row": "undecided", "flows": list(self.flows), "what": self.what}


@dataclass
class TopologyPlan:
    """Every relation, problem and undecided question of a set of flows (see the module docstring)."""

    flows: list[FlowRef]
    relations: list[Relation] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    offline: bool = True

    @property
    def bad_input(self) -> list[Problem]:
        """Every problem: each is fixed by a setting of the flows (its ``field``), whichever stage found it."""
        return list(self.problems)

    @property
    def exit_code(self) -> int:
        """2 a problem (offline or on the clusters), 1 a question left undecided offline, 0 clean."""
        return 2 if self.problems else 1 if self.undecided else 0

    def add(self, problem: Problem) -> None:
        """Keep one problem per (kind, flows, subject): the config stage wins over the cluster stage."""
        key = (problem.kind, frozenset(problem.flows), problem.subject)
        for i, p in enumerate(self.problems):
            if (p.kind, frozenset(p.flows), p.subject) == key:
                if p.stage == "cluster" and problem.stage == "config":
                    self.problems[i] = problem
                return
        self.problems.append(problem)


# ---- which names a flow writes onto its target ------------------------------------------------------
def literal_topics(f: FlowRef) -> set[str]:
    """Source topics the flow certainly selects from its configuration alone: exact names of ``topics``
    and rename sources, that its excludes leave in."""
    sel = f.topics
    named = {n for n in (literal_name(p) for p in f.migration.topics) if n is not None} | set(f.migration.topic_renames)
    return {n for n in named if sel.matches(n)}


def literal_groups(f: FlowRef) -> set[str]:
    sel = f.groups
    return {n for n in (literal_name(p) for p in f.migration.groups) if n is not None and sel.matches(n)}


def _all_literal(patterns: Iterable[str]) -> bool:
    return all(literal_name(p) is not None for p in patterns)


def target_topics(f: FlowRef, inventory: SourceInventory | None) -> dict[str, str]:
    """Target topic name -> the source topic the flow writes into it: of the listed topics when known, else
    of the exact names only."""
    sel = f.topics
    sources = sel.select(inventory.topics) if inventory is not None else sorted(literal_topics(f))
    return {sel.target_name(t): t for t in sources}


def selected_groups(f: FlowRef, inventory: SourceInventory | None) -> set[str]:
    return set(f.groups.select(inventory.groups)) if inventory is not None else literal_groups(f)


def _mm2_topics(f: FlowRef) -> set[str]:
    """MM2's topics of this flow on its target, but ``heartbeats``, which every flow into a cluster writes by design."""
    return set(names.flow_internal_topics(f.source_alias, f.target_alias, f.migration.internal_namespace)) - {names.HEARTBEATS_TOPIC}


_CONNECT_TOPIC_FIELDS = ("config_storage_topic", "offset_storage_topic", "status_storage_topic")


def _connect_topics(w: WorkerSpec) -> set[str]:
    return {getattr(w, k) for k in _CONNECT_TOPIC_FIELDS}


# ---- the rules ---------------------------------------------------------------------------------------
def check_fan_out_to_itself(plan: TopologyPlan, f: FlowRef, stage: Stage) -> None:
    if f.target.known and f.source.same(f.target):
        plan.add(Problem("fan-out to itself", (f.label,), "target.bootstrap_servers", f.target.describe(),
                         f"flow {f.label}'s target {f.target.describe()} is its own source {f.source.describe()}",
                         "give the MSK cluster's bootstrap servers as target.bootstrap_servers", stage))


def check_renames_within(plan: TopologyPlan, f: FlowRef, inventory: SourceInventory | None) -> None:
    """A rename onto a name the same flow also copies as is: two source topics into one target topic."""
    sel = f.topics
    copied = (set(sel.select(inventory.topics)) if inventory is not None else literal_topics(f)) - set(f.migration.topic_renames)
    stage: Stage = "cluster" if inventory is not None else "config"
    for old, new in sorted(f.migration.topic_renames.items()):
        if new in copied and sel.matches(old):
            st: Stage = "config" if new in literal_topics(f) else stage
            plan.add(Problem("rename onto a copied topic", (f.label,), "migration.topic_renames", new,
                             f"flow {f.label} renames {old} to {new} and also copies its own topic {new}: both land in {new}",
                             f"exclude {new} (migration.topics_exclude) or rename it too", st))


def check_consolidation(plan: TopologyPlan, a: FlowRef, b: FlowRef, inv: Mapping[str, SourceInventory] | None) -> None:
    """Two flows into one target: names both write there, and the MM2/Connect resources both would use."""
    ia, ib = (inv.get(a.label), inv.get(b.label)) if inv is not None else (None, None)
    srcs = f"sources {a.source.describe()} ({a.label}) and {b.source.describe()} ({b.label})"
    pair = (a.label, b.label)
    # target topic names: the exact names from configuration (bad input), then the listed topics
    la, lb = target_topics(a, None), target_topics(b, None)
    for name in sorted(set(la) & set(lb)):
        _topic_problem(plan, a, b, name, la[name], lb[name], srcs, "config")
    if ia is not None and ib is not None:
        ta, tb = target_topics(a, ia), target_topics(b, ib)
        for name in sorted(set(ta) & set(tb)):
            _topic_problem(plan, a, b, name, ta[name], tb[name], srcs, "cluster")
    else:
        for x, y in ((a, b), (b, a)):
            if not _all_literal(x.migration.topics):
                plan.undecided.append(Undecided(pair, f"topics of {x.label} are regexes ({', '.join(x.migration.topics)}): "
                                                      f"whether they overlap {y.label}'s on the shared target needs the sources' topic lists"))
                break
    # consumer groups both checkpoint onto the target
    ga, gb = selected_groups(a, None), selected_groups(b, None)
    for g in sorted(ga & gb):
        _group_problem(plan, a, b, g, srcs, "config")
    if ia is not None and ib is not None:
        for g in sorted(selected_groups(a, ia) & selected_groups(b, ib)):
            _group_problem(plan, a, b, g, srcs, "cluster")
    elif not (_all_literal(a.migration.groups) and _all_literal(b.migration.groups)):
        plan.undecided.append(Undecided(pair, "groups are regexes: whether both flows checkpoint a group of one name "
                                              "needs the sources' group lists"))
    # what MM2 and Connect keep on the target
    shared = "they would overwrite each other's connectors, offsets or bookkeeping on the target"
    if a.migration.name == b.migration.name:
        plan.add(Problem("shared connector names", pair, "migration.name", a.migration.name,
                         f"flows {a.label} and {b.label} into one target both name their connectors {a.migration.name}-*: {shared}",
                         "give each migration its own migration.name", "config"))
    if a.worker.group_id == b.worker.group_id:
        plan.add(Problem("shared Connect group", pair, "worker.group_id", a.worker.group_id,
                         f"flows {a.label} and {b.label} into one target both use Connect group.id {a.worker.group_id}: {shared}",
                         "give each migration its own worker.group_id", "config"))
    for t in sorted(_connect_topics(a.worker) & _connect_topics(b.worker)):
        fld = next(f"worker.{k}" for k in _CONNECT_TOPIC_FIELDS if getattr(b.worker, k) == t)
        plan.add(Problem("shared Connect topic", pair, fld, t,
                         f"flows {a.label} and {b.label} into one target both use Connect topic {t}: {shared}",
                         "give each migration's worker its own config/offset/status storage topics", "config"))
    parallel = a.source.same(b.source)
    for t in sorted(_mm2_topics(a) & _mm2_topics(b)):
        if parallel and t.endswith(f"{names.SEPARATOR}{names.HEARTBEATS_TOPIC}"):
            continue  # two migrations of one source copy the same heartbeats: a heartbeat twice, nobody's data
        both_default = a.migration.internal_topic_names == b.migration.internal_topic_names == "kafka-default"
        fld, fix = (("migration.internal_topic_names", "set internal_topic_names: per-migration on one of them (and distinct "
                     "migration.name)") if both_default and not t.endswith(f"{names.SEPARATOR}{names.HEARTBEATS_TOPIC}")
                    else ("source.alias", "give each source its own source.alias"))
        plan.add(Problem("shared MM2 topic", pair, fld, t,
                         f"flows {a.label} and {b.label} into one target would both write MM2's {t} ({srcs}): {shared}",
                         fix, "config"))


def _topic_problem(plan: TopologyPlan, a: FlowRef, b: FlowRef, name: str, sa: str, sb: str, srcs: str, stage: Stage) -> None:
    renamed = sa != name or sb != name
    kind = "rename collision" if renamed else "topic collision"
    what = f"{sa} of {a.label} and {sb} of {b.label} both land in target topic {name}" if renamed else \
        f"topic {name} comes from both {srcs}: their records would interleave in one target topic"
    fix = ("map one with a different migration.topic_renames target" if renamed else
           f"exclude {name} in one flow (migration.topics_exclude) or map it with migration.topic_renames")
    plan.add(Problem(kind, (a.label, b.label), "migration.topic_renames" if renamed else "migration.topics", name,
                     what, fix, stage))


def _group_problem(plan: TopologyPlan, a: FlowRef, b: FlowRef, group: str, srcs: str, stage: Stage) -> None:
    plan.add(Problem("group collision", (a.label, b.label), "migration.groups", group,
                     f"consumer group {group} is checkpointed from both {srcs}: their offsets would overwrite each other on the target",
                     f"leave it out of one flow (migration.groups_exclude: [{re.escape(group)}])", stage))


def _looping(a: FlowRef, b: FlowRef, inv: Mapping[str, SourceInventory] | None) -> tuple[list[str], Stage]:
    """Target names a writes onto b's source that b selects to copy back: exact names first, then listed topics."""
    literal = sorted(t for t in target_topics(a, None) if b.topics.matches(t))
    if literal:
        return literal, "config"
    ia = inv.get(a.label) if inv is not None else None
    if ia is None:
        return [], "config"
    return sorted(t for t in target_topics(a, ia) if b.topics.matches(t)), "cluster"


def check_pair(plan: TopologyPlan, a: FlowRef, b: FlowRef, inv: Mapping[str, SourceInventory] | None) -> None:
    """The relation(s) of one pair of flows and the problems they bring."""
    pair = (a.label, b.label)
    same_target, same_source = a.target.same(b.target), a.source.same(b.source)
    reverse = a.source.same(b.target) and a.target.same(b.source)
    if same_target and same_source:
        plan.relations.append(Relation("parallel", pair, f"both flows copy {a.source.describe()} -> {a.target.describe()}"))
    elif same_target:
        plan.relations.append(Relation("consolidation", pair, f"{a.source.describe()} and {b.source.describe()} -> {a.target.describe()}"))
    elif same_source:
        plan.relations.append(Relation("fan-out", pair, f"{a.source.describe()} -> {a.target.describe()} and {b.target.describe()}"))
    if same_target:
        check_consolidation(plan, a, b, inv)
    if reverse:
        ab, st1 = _looping(a, b, inv)
        ba, st2 = _looping(b, a, inv)
        topics = sorted(set(ab) | set(ba))
        if topics:
            marked = a.marks_copies and b.marks_copies
            plan.relations.append(Relation("active/active", pair, f"{len(topics)} topic(s) flow both ways"
                                           + (" (copies marked: loop-free)" if marked else "")))
            if marked and (a.source_alias, a.target_alias) != (b.target_alias, b.source_alias):
                # a marked flow S -> T skips records marked as copied from T's alias: both flows must call each
                # cluster by one alias, or each would copy back what the other marked
                plan.add(Problem("loop", pair, "source.alias", topics[0],
                                 f"flows {a.label} ({a.source_alias} -> {a.target_alias}) and {b.label} ({b.source_alias} -> "
                                 f"{b.target_alias}) mark their copies but name the two clusters differently: each would "
                                 "copy back what the other marked",
                                 "give each cluster one alias in both flows (source.alias of one = target.alias of the other)",
                                 "config"))
            if not marked:
                stage: Stage = "config" if (st1 == "config" and ab) or (st2 == "config" and ba) else "cluster"
                unmarked = [f.label for f in (a, b) if not f.marks_copies]
                plan.add(Problem("loop", pair, "migration.mark_copies", topics[0],
                                 f"topic {topics[0]}{f' (and {len(topics) - 1} more)' if len(topics) > 1 else ''} flows both ways "
                                 f"between flows {a.label} and {b.label}, and {', '.join(unmarked)} does not mark its copies: "
                                 "every record would be copied back for ever",
                                 "set migration.mark_copies: true on both flows (docs/active-active.md), or exclude the "
                                 "topic from one direction", stage))
        else:
            plan.relations.append(Relation("reverse pair", pair, "the flows run opposite ways over disjoint topics"))
            if inv is None and not (_all_literal(a.migration.topics) and _all_literal(b.migration.topics)):
                plan.undecided.append(Undecided(pair, "topics are regexes: whether a topic flows both ways needs the "
                                                      "sources' topic lists"))
    for x, y in ((a, b), (b, a)):
        if x.target.same(y.source) and not reverse:
            plan.relations.append(Relation("forwarding", (x.label, y.label),
                                           f"{x.source.describe()} -> {x.target.describe()} -> {y.target.describe()}"))


def _cycles(flows: Sequence[FlowRef], inv: Mapping[str, SourceInventory] | None) -> list[tuple[list[FlowRef], str, Stage]]:
    """Rings of three or more flows a topic travels round and back to where it started (A -> B -> C -> A): the
    flows in order, the topic, and whether the configuration alone shows it. Each flow downstream takes the
    topic when its selection matches the name the upstream flow writes (it need not exist there yet: the upstream
    flow creates it). Pairs are :func:`check_pair`'s."""
    found: dict[frozenset[str], tuple[list[FlowRef], str, Stage]] = {}
    for start in flows:
        literal = target_topics(start, None)
        listed = target_topics(start, inv.get(start.label)) if inv is not None and start.label in inv else {}
        for name, origin in sorted({**listed, **literal}.items()):
            stage: Stage = "config" if name in literal else "cluster"
            stack: list[tuple[ClusterRef, str, list[FlowRef]]] = [(start.target, name, [start])]
            while stack:
                where, topic, path = stack.pop()
                for g in flows:
                    if g in path or not g.source.same(where) or not g.topics.matches(topic):
                        continue
                    nxt = g.topics.target_name(topic)
                    if g.target.same(start.source) and nxt == origin:
                        if len(path) >= 2:
                            found.setdefault(frozenset(f.label for f in (*path, g)), ([*path, g], origin, stage))
                    elif len(path) + 1 < len(flows):
                        stack.append((g.target, nxt, [*path, g]))
    return list(found.values())


def _cluster_rings(flows: Sequence[FlowRef]) -> list[list[FlowRef]]:
    """Rings of three or more flows by their clusters alone (each flow's target the next one's source), once each."""
    out: dict[frozenset[str], list[FlowRef]] = {}
    for start in flows:
        stack: list[list[FlowRef]] = [[start]]
        while stack:
            path = stack.pop()
            for g in flows:
                if g in path or not g.source.same(path[-1].target):
                    continue
                if g.target.same(start.source):
                    if len(path) >= 2:
                        out.setdefault(frozenset(f.label for f in (*path, g)), [*path, g])
                elif len(path) + 1 < len(flows):
                    stack.append([*path, g])
    return list(out.values())


def check_rings(plan: TopologyPlan, flows: Sequence[FlowRef], inv: Mapping[str, SourceInventory] | None) -> None:
    """A ring of flows round which a topic travels loops unless every flow marks its copies and each cluster has
    one alias in all of them (a marked flow skips what is marked as copied from its own target). Offline, a ring
    of clusters whose flows select topics by regex is a question left open."""
    if inv is None:
        for ring in _cluster_rings(flows):
            if not all(_all_literal(f.migration.topics) for f in ring):
                around = [f.label for f in ring]
                plan.undecided.append(Undecided((around[0], around[-1]), f"the flows {' -> '.join(around)} form a ring of "
                                                "clusters and select topics by regex: whether a topic travels round it "
                                                "needs the sources' topic lists"))
    for ring, topic, stage in _cycles(flows, inv):
        labels = tuple(f.label for f in ring)
        path = " -> ".join(labels)
        unmarked = [f.label for f in ring if not f.marks_copies]
        clusters: list[tuple[ClusterRef, set[str]]] = []
        for f in ring:
            for ref, alias in ((f.source, f.source_alias), (f.target, f.target_alias)):
                entry = next((c for c in clusters if c[0].same(ref)), None)
                if entry is None:
                    clusters.append((ref, {alias}))
                else:
                    entry[1].add(alias)
        split = next((sorted(aliases) for _, aliases in clusters if len(aliases) > 1), None)
        if unmarked:
            plan.add(Problem("loop", labels, "migration.mark_copies", topic,
                             f"topic {topic} travels round the flows {path} and back, and {', '.join(unmarked)} does not "
                             "mark its copies: every record would go round for ever",
                             "set migration.mark_copies: true on every flow of the ring (docs/active-active.md), or "
                             "exclude the topic from one of them", stage))
        elif split:
            plan.add(Problem("loop", labels, "source.alias", topic,
                             f"the flows {path} mark their copies but call one cluster {' and '.join(split)}: a record "
                             "would come back unrecognised", "give each cluster one alias in every flow", "config"))
        else:
            plan.relations.append(Relation("ring", labels, f"topic {topic} travels {path} (copies marked: loop-free)"))


def plan_topology(flows: Sequence[FlowRef], inventories: Mapping[str, SourceInventory] | None = None) -> TopologyPlan:
    """Every relation and problem of ``flows`` (labels unique); ``inventories`` None = offline (exact names only)."""
    plan = TopologyPlan(list(flows), offline=inventories is None)
    for f in flows:
        check_fan_out_to_itself(plan, f, "config")
        check_renames_within(plan, f, inventories.get(f.label) if inventories is not None else None)
    for a, b in combinations(flows, 2):
        check_pair(plan, a, b, inventories)
    check_rings(plan, flows, inventories)
    return plan


def kept_on_shared_target(me: FlowRef, others: Sequence[FlowRef]) -> dict[str, str]:
    """MM2 topics ``me``'s cleanup would delete that another flow into the same target also writes (``heartbeats``
    always; ``<alias>.heartbeats`` or the internal topics when shared): topic -> the connector of the other
    migration that writes it, the shape of ``runbook.cleanup.leftovers``'s ``shared`` (listed as kept, never deleted)."""
    mine = set(names.flow_internal_topics(me.source_alias, me.target_alias, me.migration.internal_namespace))
    out: dict[str, str] = {}
    for o in others:
        if o.label == me.label or not o.target.same(me.target):
            continue
        conn = o.migration.connector_names()
        for t in sorted(mine & set(names.flow_internal_topics(o.source_alias, o.target_alias, o.migration.internal_namespace))):
            out.setdefault(t, conn["heartbeat"] if t.endswith(names.HEARTBEATS_TOPIC) else conn["checkpoint"])
    return out
