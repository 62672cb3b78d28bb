"""The validation report: one structure, three renderings (JSON with a documented schema — see
report.schema.json and docs/validation.md —, a self-contained HTML page, a rich console table),
written to a local directory or an S3 prefix."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import store
from .request import iso

if TYPE_CHECKING:
    from .schema_proof import SchemaRow

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("report.schema.json")
REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
#: The option a report destination comes from; every error about it names this.
DEST_FIELD = "--validation-report"

#: Partition statuses that do not fail the verdict.
OK_STATUSES = {"match", "duplicates"}
#: A topic, partition or run that holds records but compared none: not a pass (exit 1), not a mismatch.
NO_EVIDENCE = "no-evidence"
#: A topic whose records carry schema ids that were not proven (no registries given, no opt-out): not a
#: pass (exit 1), not a mismatch of the records (docs/schemas.md, Proof per record).
SCHEMAS_NOT_CHECKED = "schemas-not-checked"
#: Topic statuses and verdicts that are not a mismatch (but only "match" passes).
NOT_MISMATCH = ("match", NO_EVIDENCE, SCHEMAS_NOT_CHECKED)
#: Verdicts and their exit codes: a verdict never passes on nothing compared, nor on ids not proven.
VERDICT_EXIT = {"match": 0, "mismatch": 1, NO_EVIDENCE: 1, SCHEMAS_NOT_CHECKED: 1}


@dataclass
class SideDigest:
    count: int
    min_timestamp: int | None
    max_timestamp: int | None
    fingerprint: str
    order_fingerprint: str
    start_offset: int | None
    end_offset: int | None
    null_keys: int
    tombstones: int
    #: copy marks (docs/active-active-proof.md): stripped, missing_or_wrong, origin_target; None when not counted
    copy_marks: dict[str, int] | None = None

    @classmethod
    def of(cls, d: Any, rng: tuple[int, int] | None) -> SideDigest:
        return cls(
            d.count, d.min_ts, d.max_ts, d.fingerprint, d.order_fingerprint,
            rng[0] if rng else None, rng[1] if rng else None, d.null_keys, d.tombstones,
            getattr(d, "marks", None),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "min_timestamp": self.min_timestamp,
            "max_timestamp": self.max_timestamp,
            "min_time": iso(self.min_timestamp),
            "max_time": iso(self.max_timestamp),
            "fingerprint": self.fingerprint,
            "order_fingerprint": self.order_fingerprint,
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "null_keys": self.null_keys,
            "tombstones": self.tombstones,
            **({"copy_marks": dict(self.copy_marks)} if self.copy_marks is not None else {}),
        }


@dataclass
class PartitionResult:
    partition: int
    source: SideDigest | None = None
    target: SideDigest | None = None
    status: str = "match"  #: match | mismatch | duplicates | missing_on_target | extra_on_target | no-evidence
    method: str = "checksum"  #: checksum | full
    missing: int | None = None  #: None = not computed (checksum mode, mismatching partition)
    unexpected: int | None = None
    duplicates: int | None = None
    changed: int | None = None
    reordered: int | None = None  #: out-of-order points; None = not computed or not checked
    changes: dict[str, int] = field(default_factory=dict)
    differences: list[str] = field(default_factory=list)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: the source log when planned: [log_start, log_end) offsets and its newest record's timestamp
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    newest_timestamp: int | None = None

    @property
    def records_in_log(self) -> bool:
        """The source partition held records when the run was planned (offsets between start and end)."""
        return (self.log_end_offset or 0) > (self.log_start_offset or 0)

    @property
    def compared(self) -> int:
        return self.source.count if self.source else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "status": self.status,
            "method": self.method,
            "source_count": self.source.count if self.source else None,
            "target_count": self.target.count if self.target else None,
            "source_log": {"start_offset": self.log_start_offset, "end_offset": self.log_end_offset,
                           "has_records": self.records_in_log, "newest_timestamp": self.newest_timestamp,
                           "newest_time": iso(self.newest_timestamp)},
            "missing": self.missing,
            "unexpected": self.unexpected,
            "duplicates": self.duplicates,
            "changed": self.changed,
            "reordered": self.reordered,
            "changes": dict(sorted(self.changes.items())),
            "differences": self.differences,
            "source": self.source.to_dict() if self.source else None,
            "target": self.target.to_dict() if self.target else None,
            "samples": {k: v for k, v in self.samples.items() if v},
        }


def _total(values: list[int | None]) -> int | None:
    if any(v is None for v in values):
        return None
    return sum(values)  # type: ignore[arg-type]


@dataclass
class TopicResult:
    topic: str
    target_topic: str
    source_partitions: int
    target_partitions: int | None
    compare: str = "records"
    timestamps_in_fingerprint: bool = True
    timestamp_type: dict[str, str | None] = field(default_factory=dict)
    cleanup_policy: str | None = None
    config_differences: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    partitions: list[PartitionResult] = field(default_factory=list)
    status: str = "match"
    #: The proof of the schema ids its records carry (None: not read, e.g. by the Spark engine).
    schemas: SchemaRow | None = None

    def finish(self) -> None:
        """missing_on_target > mismatch (records, metadata or a schema id) > no-evidence (a partition with
        records compared none) > schemas-not-checked > match."""
        if self.schemas is not None:
            self.problems.extend(self.schemas.problems())
        if self.target_partitions is None:
            self.status = "missing_on_target"
        elif (
            self.target_partitions != self.source_partitions
            or self.config_differences
            or any(p.status not in OK_STATUSES | {NO_EVIDENCE} for p in self.partitions)
            or (self.schemas is not None and self.schemas.status == "mismatch")
        ):
            self.status = "mismatch"
        elif any(p.status == NO_EVIDENCE for p in self.partitions):
            self.status = NO_EVIDENCE
            n = sum(1 for p in self.partitions if p.status == NO_EVIDENCE)
            self.problems.append(f"{n} partition(s) hold records but none was compared: "
                                 + next(p.differences[0] for p in self.partitions if p.status == NO_EVIDENCE))
        elif self.schemas is not None and self.schemas.status == "not-checked":
            self.status = SCHEMAS_NOT_CHECKED
        else:
            self.status = "match"

    def _sum(self, attr: str) -> int | None:
        return _total([getattr(p, attr) for p in self.partitions])

    def counts(self) -> dict[str, int | None]:
        return {
            "source_count": sum(p.source.count for p in self.partitions if p.source),
            "target_count": sum(p.target.count for p in self.partitions if p.target),
            "missing": self._sum("missing"),
            "unexpected": self._sum("unexpected"),
            "duplicates": self._sum("duplicates"),
            "changed": self._sum("changed"),
            "reordered": self._sum("reordered"),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "target_topic": self.target_topic,
            "status": self.status,
            "problems": self.problems,
            **self.counts(),
            "partitions_mismatched": sum(1 for p in self.partitions if p.status not in OK_STATUSES | {NO_EVIDENCE}),
            "partitions_without_evidence": sum(1 for p in self.partitions if p.status == NO_EVIDENCE),
            "compare": self.compare,
            "timestamps_in_fingerprint": self.timestamps_in_fingerprint,
            "metadata": {
                "source_partitions": self.source_partitions,
                "target_partitions": self.target_partitions,
                "partition_count_match": self.source_partitions == self.target_partitions,
                "timestamp_type": self.timestamp_type,
                "cleanup_policy": self.cleanup_policy,
                "config_differences": self.config_differences,
            },
            "schemas": self.schemas.to_dict() if self.schemas is not None else None,
            "partitions": [p.to_dict() for p in self.partitions],
        }


@dataclass
class Report:
    """``clusters``: per side ``bootstrap_servers``, ``auth_mode``, ``cluster_id`` (and ``msk_cluster_arn``
    when known); ``environment``: the environment the clusters were resolved from (None: given directly)."""

    run: dict[str, Any]
    window: dict[str, Any]
    clusters: dict[str, Any]
    topics: list[TopicResult]
    warnings: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    environment: str | None = None
    #: The schema registries the ids were resolved on (source, target: Confluent-API URLs), or None.
    schema_registry: dict[str, str] | None = None

    @property
    def verdict(self) -> str:
        """"mismatch" when a topic differs (records, metadata or a schema id); else "no-evidence" when a
        topic or partition holds records but compared none, or the run compared no record at all; else
        "schemas-not-checked" when a topic's records carry schema ids no registry proved; else "match"."""
        if any(t.status not in NOT_MISMATCH for t in self.topics):
            return "mismatch"
        if any(t.status == NO_EVIDENCE for t in self.topics) or self.records_compared() == 0:
            return NO_EVIDENCE
        if any(t.status == SCHEMAS_NOT_CHECKED for t in self.topics):
            return SCHEMAS_NOT_CHECKED
        return "match"

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT[self.verdict]

    def records_compared(self) -> int:
        return sum(p.compared for t in self.topics for p in t.partitions)

    def verdict_reason(self) -> str:
        """One sentence: why the verdict is what it is (the evidence, or the lack of it)."""
        s = self.summary()
        if self.verdict == "mismatch":
            why = f"{s['topics_mismatched']} topic(s) differ, {s['partitions_mismatched']} partition(s)"
            bad = [f"{t.topic}: " + ", ".join(str(p.schema_id) for p in t.schemas.failing[:5])
                   for t in self.topics if t.schemas is not None and t.schemas.status == "mismatch" and t.schemas.failing]
            if bad:
                why += "; schema id(s) not resolving identically on both registries: " + "; ".join(bad)
            untold = [p for t in self.topics if t.schemas is not None for p in t.schemas.strategy_problems]
            if untold:  # a subject name strategy that cannot be told (schema_proof.SchemaRow.strategy_problems)
                why += f"; {untold[0]}" + (f" (and {len(untold) - 1} more)" if len(untold) > 1 else "")
            return why
        if self.verdict == SCHEMAS_NOT_CHECKED:
            unproven = next(t for t in self.topics if t.status == SCHEMAS_NOT_CHECKED)
            why = unproven.schemas.reason if unproven.schemas is not None and unproven.schemas.reason else "schemas not checked"
            return f"{s['topics_schemas_not_checked']} topic(s) with schema ids not proven; {unproven.topic}: {why}"
        if self.verdict == NO_EVIDENCE:
            if not self.topics:
                return "no topic was selected"
            if self.records_compared() == 0 and not any(p.records_in_log for t in self.topics for p in t.partitions):
                return "no record compared: the selected topics hold no record"
            first = next((pr for t in self.topics for pr in t.problems if "none was compared" in pr), None)
            if first is None:
                first = next((f"{t.topic}[{p.partition}]: {p.differences[0]}" for t in self.topics for p in t.partitions
                              if p.differences), "")
            return f"{self.records_compared():,} record(s) compared; " + first
        return f"{s['topics']} topic(s), {s['source_records']:,} source record(s) compared in {s['partitions']} partition(s)"

    def topic(self, name: str) -> TopicResult:
        return next(t for t in self.topics if t.topic == name)

    def summary(self) -> dict[str, Any]:
        counts = [t.counts() for t in self.topics]

        def tot(key: str) -> int | None:
            return _total([c[key] for c in counts])

        parts = [p for t in self.topics for p in t.partitions]
        return {
            "topics": len(self.topics),
            "topics_matching": sum(1 for t in self.topics if t.status == "match"),
            "topics_mismatched": sum(1 for t in self.topics if t.status not in NOT_MISMATCH),
            "topics_without_evidence": sum(1 for t in self.topics if t.status == NO_EVIDENCE),
            "topics_schemas_not_checked": sum(1 for t in self.topics if t.status == SCHEMAS_NOT_CHECKED),
            "topics_schema_mismatched": sum(1 for t in self.topics if t.schemas is not None and t.schemas.status == "mismatch"),
            "schema_ids_seen": len({i for t in self.topics if t.schemas is not None for i in t.schemas.tally.ids}),
            "partitions": len(parts),
            "partitions_mismatched": sum(1 for p in parts if p.status not in OK_STATUSES | {NO_EVIDENCE}),
            "partitions_without_evidence": sum(1 for p in parts if p.status == NO_EVIDENCE),
            "partitions_with_records": sum(1 for p in parts if p.records_in_log),
            "source_records": tot("source_count"),
            "target_records": tot("target_count"),
            "missing": tot("missing"),
            "unexpected": tot("unexpected"),
            "duplicates": tot("duplicates"),
            "changed": tot("changed"),
            "reordered": tot("reordered"),
            "warnings": len(self.warnings),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason(),
            "exit_code": self.exit_code,
            "summary": self.summary(),
            "run": self.run,
            "window": self.window,
            "environment": self.environment,
            "source": {"cluster_id": None, "msk_cluster_arn": None, **self.clusters["source"]},
            "target": {"cluster_id": None, "msk_cluster_arn": None, **self.clusters["target"]},
            "schema_registry": self.schema_registry,
            "topics_covered": [t.topic for t in self.topics],
            "warnings": self.warnings,
            "topics": [t.to_dict() for t in self.topics],
        }

    def talked_to(self) -> dict[str, Any]:
        """The clusters this run read (bootstrap servers and cluster ids), as every command's JSON says it."""
        d = self.to_dict()
        out = {"environment": self.environment,
               **{role: d[role]["bootstrap_servers"] for role in ("source", "target")},
               **{f"{role}_cluster_id": d[role]["cluster_id"] for role in ("source", "target")}}
        if self.schema_registry:
            out.update({f"{role}_schema_registry": self.schema_registry[role] for role in ("source", "target")})
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    def to_html(self) -> str:
        from .html_report import render_html

        return render_html(self.to_dict())

    def write(self, dest: str, s3: Any = None) -> list[str]:
        """Write report.json and report.html under ``dest`` (directory or s3://bucket/prefix); returns where they
        went. ``s3``: the S3 client (boto3's by default)."""
        report = store.in_directory(dest, DEST_FIELD, REPORT_JSON)
        return [report.write(self.to_json(), "application/json", s3),
                report.sibling(REPORT_HTML).write(self.to_html(), "text/html; charset=utf-8", s3)]


def check_destination(dest: str, s3: Any = None) -> None:
    """Fail (exit 2, nothing written) when the report cannot be written to ``dest``."""
    store.in_directory(dest, DEST_FIELD, REPORT_JSON).check_writable(s3)


def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text())


def report_clusters(req: Any, cluster_ids: dict[str, str | None]) -> dict[str, Any]:
    """The clusters a run read, as the report records them: bootstrap servers, auth mode, cluster id
    (DescribeCluster) and the MSK cluster ARN when the run knew it (``cutover check`` compares them)."""
    out = req.describe()
    for role in ("source", "target"):
        out[role]["cluster_id"] = cluster_ids.get(role)
        out[role]["msk_cluster_arn"] = (req.msk_cluster_arns or {}).get(role)
    return out


def key_digest(sample: dict[str, Any]) -> dict[str, Any]:
    """``sample`` with its key replaced by the sha256 of the key bytes it showed (utf8 text or base64), so a
    report names a key without holding it: compare with ``sha256(key)`` of a key you know. A sample whose key
    was truncated hashes the bytes it kept (``key_truncated`` stays). Null keys stay null."""
    key, encoding = sample.get("key"), sample.get("key_encoding")
    if key is None or encoding not in ("utf8", "base64"):
        return sample
    raw = base64.b64decode(key) if encoding == "base64" else str(key).encode("utf-8")
    return {**sample, "key": hashlib.sha256(raw).hexdigest(), "key_encoding": "sha256"}


def hide_keys(topics: list[TopicResult]) -> None:
    """Every difference sample of ``topics`` names its key by sha256 (``validate`` without ``--show-keys``)."""
    for t in topics:
        for p in t.partitions:
            p.samples = {cat: [key_digest(x) for x in items] for cat, items in p.samples.items()}
