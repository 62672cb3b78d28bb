"""What one validation run compares: clusters, topics, window, mode. Validated once, up front."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..config.migration import ClusterEndpoint, check_regexes
from ..errors import UsageError
from ..kafka.names import DEFAULT_TOPICS_EXCLUDE, MM2_TOPIC_PATTERNS

Mode = Literal["auto", "checksum", "full"]
CompactedMode = Literal["records", "latest-per-key"]
IsolationLevel = Literal["read_committed", "read_uncommitted"]
Engine = Literal["auto", "spark", "native"]
Compare = Literal["records", "multiset"]

#: Topics never validated by a regex selection (MM2's own and Kafka's internal topics).
DEFAULT_EXCLUDES: list[str] = list(dict.fromkeys([*DEFAULT_TOPICS_EXCLUDE, *MM2_TOPIC_PATTERNS]))


def parse_timestamp(text: str | int | None, field: str) -> int | None:
    """Epoch milliseconds from an integer (epoch ms) or an ISO-8601 date-time (UTC when no offset)."""
    if text is None or text == "":
        return None
    if isinstance(text, int):
        return text
    s = str(text).strip()
    if re.fullmatch(r"-?\d+", s):
        value = int(s)
        if 0 < value < 10**11:  # looks like seconds
            raise UsageError(field, f"{s} looks like epoch seconds", "give epoch milliseconds or ISO-8601")
        return value
    try:
        parsed = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(field, f"{s!r} is not a timestamp", "use ISO-8601 (2025-01-31T12:00:00Z) or epoch ms") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return int(parsed.timestamp() * 1000)


def iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class PartitionRange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: int | None = Field(None, ge=0, description="First source offset (inclusive); unset = earliest.")
    end: int = Field(ge=0, description="Source offset after the last record compared (exclusive).")

    @model_validator(mode="after")
    def _order(self) -> PartitionRange:
        if self.start is not None and self.start > self.end:
            raise ValueError(f"start {self.start} is after end {self.end}")
        return self


def load_snapshot(path: str | Path) -> dict[str, dict[int, PartitionRange]]:
    """Source offset snapshot: ``{"topic": {"0": END, "1": {"start": S, "end": E}}}`` (Spark's
    endingOffsets shape, optionally with explicit starts). Ends are exclusive."""
    field = "--offsets-snapshot"
    path = Path(path)
    if not path.is_file():
        raise UsageError(field, f"{path} not found", "pass a JSON file of source offsets")
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise UsageError(field, f"{path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(raw, dict) or not raw:
        raise UsageError(field, "expected an object {topic: {partition: end_offset}}", "see docs/validation.md")
    out: dict[str, dict[int, PartitionRange]] = {}
    for topic, parts in raw.items():
        if not isinstance(parts, dict) or not parts:
            raise UsageError(f"{field} {topic}", "expected {partition: end_offset}", "see docs/validation.md")
        out[topic] = {}
        for p, spec in parts.items():
            if not re.fullmatch(r"\d+", str(p)):
                raise UsageError(f"{field} {topic}", f"partition {p!r} is not a number")
            try:
                rng = PartitionRange(end=spec) if isinstance(spec, int) else PartitionRange.model_validate(spec)
            except Exception as exc:
                msg = str(exc).splitlines()[-2].strip() if "\n" in str(exc) else str(exc)
                raise UsageError(f"{field} {topic}[{p}]", msg, "give an end offset or {start, end}") from None
            out[topic][int(p)] = rng
    return out


class SchemaRegistries(BaseModel):
    """Confluent-API base URLs of the two registries (Apicurio: ``http://host:port/apis/ccompat/v7``)."""

    model_config = ConfigDict(extra="forbid")
    source: str
    target: str

    @field_validator("source", "target")
    @classmethod
    def _url(cls, v: str) -> str:
        if not re.match(r"https?://[^/\s]+", v):
            raise ValueError(f"{v!r} is not an http(s) URL (give e.g. http://registry:8081)")
        if re.match(r"https?://[^/]*@", v):
            raise ValueError("the URL carries credentials: drop user:password@ and set "
                             "MSK_MIGRATE_<ROLE>_REGISTRY_USER/_PASSWORD")
        return v.rstrip("/")


class CopyMarks(BaseModel):
    """The copy marks of a flow with ``mark_copies`` (docs/active-active-proof.md): target records carry
    ``msk-migrate.copied-from.<source_alias>`` last, which the comparison removes; source records carrying
    ``copied-from.<target_alias>`` came from the target and are not expected there."""

    model_config = ConfigDict(extra="forbid")
    source_alias: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    target_alias: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")


class ValidationRequest(BaseModel):
    """Inputs of :func:`msk_migrate.validation.run_validation`.

    Window: records whose timestamp is in ``[from_timestamp_ms, until_timestamp_ms)``; ``until``
    defaults to now minus ``grace_seconds`` (so records MM2 has not copied yet are not compared).
    With ``offsets_snapshot`` the source records are exactly the snapshot's offsets instead, and the
    target is compared over the timestamps those records span (per partition).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    source: ClusterEndpoint
    target: ClusterEndpoint
    topics: list[str] = Field(default_factory=list, description="Exact source topic names.")
    topic_regex: str | None = Field(None, description="Source topics matching this regex (full match).")
    exclude_regexes: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    topic_map: dict[str, str] = Field(default_factory=dict, description="Source -> target renames.")
    mode: Mode = "auto"
    from_timestamp_ms: int | None = None
    until_timestamp_ms: int | None = None
    grace_seconds: int = Field(300, ge=0, description="Default until = now - grace.")
    timestamp_slack_seconds: int = Field(
        300,
        ge=0,
        description="Offset bounds are looked up this far outside the window, so records whose timestamps "
        "are out of order by up to this much are still found (then filtered exactly by timestamp).",
    )
    offsets_snapshot: dict[str, dict[int, PartitionRange]] | None = None
    compacted: CompactedMode = Field("records", description="How compacted topics are compared.")
    isolation_level: IsolationLevel = "read_committed"
    sample_size: int = Field(10, ge=0, le=1000, description="Sample records per category and partition.")
    ignore_configs: list[str] = Field(default_factory=list, description="Topic configs left out of parity.")
    allow_duplicates: bool = Field(False, description="Duplicates alone (MM2 is at-least-once) do not fail.")
    kafka_options: dict[str, str] = Field(default_factory=dict, description="Extra Kafka consumer tuning.")
    min_partitions: int | None = Field(None, ge=1, description="Spark minPartitions (split big partitions).")
    environment: str | None = Field(None, description="Environment the clusters were resolved from (the report records it).")
    msk_cluster_arns: dict[str, str] = Field(default_factory=dict, description="source/target -> MSK cluster ARN, when known.")
    engine: Engine = Field(
        "auto",
        description="Who computes the checksum pass: spark (the PySpark job), native (confluent-kafka worker "
        "processes on this machine, same digests; Spark only for full diffs), auto (native when no SparkSession "
        "is given and no Spark-only option is set, i.e. a local `msk-migrate validate`; spark under spark-submit/Glue).",
    )
    metadata_timeout_seconds: float = Field(15.0, gt=0)
    report_dir: str | None = Field(None, description="Directory or s3://bucket/prefix for report.json/.html.")
    schema_registry: SchemaRegistries | None = Field(
        None, description="The registries whose ids the records carry: every id seen in the window is proven to "
        "resolve identically on both (docs/schemas.md, Proof per record).")
    ignore_schemas: bool = Field(
        False, description="Opt out of the schema proof: schema'd topics without registries are 'skipped', not "
        "'schemas-not-checked' (which fails the run).")
    marks: CopyMarks | None = Field(
        None, description="The flow marks its copies: the target's trailing mark is removed before comparing, and "
        "source records that came from the target are left out (docs/active-active-proof.md).")
    compare: Compare = Field(
        "records", description="records: the target holds the source's records in the source's order; multiset: "
        "both sides are fed from both origins (active/active): per partition the same multiset of records, and each "
        "origin's records in the same order on both sides (docs/active-active-proof.md). Needs marks with both aliases.")
    show_keys: bool = Field(
        False, description="Print the record keys of difference samples as they are; by default a sample names its key "
        "by sha256 only (keys can hold personal data, and the report lands in logs and buckets).")

    @field_validator("topic_regex")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a valid regex: {exc}") from None
        return v

    @field_validator("exclude_regexes")
    @classmethod
    def _excl(cls, v: list[str]) -> list[str]:
        return check_regexes(v, "exclude_regexes")

    @model_validator(mode="after")
    def _check(self) -> ValidationRequest:
        if not self.topics and not self.topic_regex and not self.offsets_snapshot:
            raise ValueError("give --topics, --topic-regex or --offsets-snapshot")
        if self.engine == "native" and (self.kafka_options or self.min_partitions):
            raise ValueError("--kafka-option and --min-partitions tune Spark's Kafka source; use --engine spark or auto")
        if self.compare == "multiset":
            if self.marks is None or self.marks.target_alias is None:
                raise ValueError("--compare multiset tells each record's origin by its copy mark: give --marks SRC,TGT "
                                 "(both aliases) or a flow with migration.mark_copies")
            if self.engine == "spark" or self.mode == "full" or self.kafka_options or self.min_partitions:
                raise ValueError("--compare multiset is computed by the native checksum pass, without the full diff "
                                 "(which compares one order per partition): use --engine native/auto and --mode checksum/auto, "
                                 "without --kafka-option/--min-partitions")
        if self.offsets_snapshot and (self.from_timestamp_ms is not None or self.until_timestamp_ms is not None):
            raise ValueError("an offsets snapshot replaces --from-timestamp/--until-timestamp; give one or the other")
        if (
            self.from_timestamp_ms is not None
            and self.until_timestamp_ms is not None
            and self.from_timestamp_ms >= self.until_timestamp_ms
        ):
            raise ValueError("from timestamp must be before until timestamp")
        return self

    def effective_until_ms(self, now_ms: int | None = None) -> int:
        if self.until_timestamp_ms is not None:
            return self.until_timestamp_ms
        now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        return now_ms - self.grace_seconds * 1000

    def target_topic(self, topic: str) -> str:
        return self.topic_map.get(topic, topic)

    def describe(self) -> dict[str, Any]:
        return {
            "source": {"bootstrap_servers": self.source.bootstrap_servers, "auth_mode": self.source.auth.mode},
            "target": {"bootstrap_servers": self.target.bootstrap_servers, "auth_mode": self.target.auth.mode},
        }
