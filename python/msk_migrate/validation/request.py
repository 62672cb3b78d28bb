"""What one validation run compares: clusters, topics, window, mode. Validated once, up front.

Standard library only, and valid Python 3.9 (EMR 7.9's system Python): the Spark job's driver reads this
request on a stock EMR Serverless or Glue image that holds nothing but pyspark. Every value is
checked in ``__post_init__``; a refusal is a :class:`RequestError` (a :class:`~msk_migrate.errors.UsageError`
naming the ``msk-migrate validate`` option that sets the field, and a ValueError).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
import time
from pathlib import Path
from typing import Any, Literal, get_args

from ..bucket_layout import ALIAS
from ..errors import UsageError
from ..kafka.names import DEFAULT_TOPICS_EXCLUDE, MM2_TOPIC_PATTERNS
from ..kafka.selection import check_mm2_regexes
from .endpoint import Endpoint

Mode = Literal["auto", "checksum", "full"]
CompactedMode = Literal["records", "latest-per-key"]
IsolationLevel = Literal["read_committed", "read_uncommitted"]
Engine = Literal["auto", "spark", "native"]
Compare = Literal["records", "multiset"]

#: Topics never validated by a regex selection (MM2's own and Kafka's internal topics).
DEFAULT_EXCLUDES: list[str] = list(dict.fromkeys([*DEFAULT_TOPICS_EXCLUDE, *MM2_TOPIC_PATTERNS]))


#: Request field -> the ``msk-migrate validate`` option that sets it (default ``--<field-with-dashes>``).
OPTIONS: dict[str, str] = {
    "from_timestamp_ms": "--from-timestamp", "until_timestamp_ms": "--until-timestamp",
    "topic_regex": "--topic-regex", "exclude_regexes": "--exclude-regex", "sample_size": "--sample-size",
    "grace_seconds": "--grace-seconds", "min_partitions": "--min-partitions",
    "schema_registry": "--source-registry/--target-registry", "metadata_timeout_seconds": "--metadata-timeout",
    "ignore_configs": "--ignore-config", "kafka_options": "--kafka-option", "report_dir": "--validation-report",
    "marks": "--copy-marks", "topics": "--topic", "environment": "--env",
}


def option(key: str) -> str:
    """The command-line option of a request field (or of a nested one: ``marks.source_alias`` -> ``--copy-marks``)."""
    top = key.split(".")[0]
    return OPTIONS.get(top, "--" + top.replace("_", "-"))


class RequestError(UsageError, ValueError):
    """A refused request value. ``field`` names the command-line option (``--sample-size``), ``key`` the request's
    own field (``sample_size``, ``marks.source_alias``: a request document names its place by it). A ValueError
    too, as the request's errors always were."""

    def __init__(self, key: str, message: str, fix: str | None = None, field: str | None = None):
        super().__init__(field if field is not None else option(key), message, fix)
        self.key = key


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
        parsed = parsed.replace(tzinfo=dt.timezone.utc)  # noqa: UP017 - datetime.UTC is 3.11+; the Spark job runs on 3.9
    return int(parsed.timestamp() * 1000)


def iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")  # noqa: UP017



def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fields_of(cls: type, data: Any, key: str, field: str | None = None) -> dict[str, Any]:
    """``data`` as keyword arguments of the dataclass ``cls``: an object, no unknown key, no required one missing."""
    if not isinstance(data, dict):
        raise RequestError(key, f"expected an object, not {type(data).__name__}", field=field)
    names = [f.name for f in dataclasses.fields(cls)]
    for name in data:
        if name not in names:
            raise RequestError(f"{key}.{name}", f"unknown field {name!r}", f"drop it; the fields are {', '.join(names)}", field=field)
    for f in dataclasses.fields(cls):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING and f.name not in data:
            raise RequestError(f"{key}.{f.name}", f"{f.name} is required", field=field)
    return dict(data)


@dataclasses.dataclass(frozen=True)
class PartitionRange:
    """Source offsets of one partition: ``end`` (exclusive) the offset after the last record compared, ``start``
    the first (inclusive; unset = earliest)."""

    end: int
    start: int | None = None

    def __post_init__(self) -> None:
        if not _is_int(self.end) or self.end < 0:
            raise RequestError("offsets_snapshot", f"end must be an offset >= 0, not {self.end!r}")
        if self.start is not None and (not _is_int(self.start) or self.start < 0):
            raise RequestError("offsets_snapshot", f"start must be an offset >= 0, not {self.start!r}")
        if self.start is not None and self.start > self.end:
            raise RequestError("offsets_snapshot", f"start {self.start} is after end {self.end}")

    @classmethod
    def of(cls, spec: Any) -> PartitionRange:
        """From an end offset, ``{"start": S, "end": E}`` (start optional) or a PartitionRange."""
        if isinstance(spec, cls):
            return spec
        if _is_int(spec):
            return cls(end=spec)
        if isinstance(spec, dict):
            return cls.from_dict(spec)
        raise RequestError("offsets_snapshot", f"expected an end offset or {{start, end}}, not {spec!r}")

    @classmethod
    def from_dict(cls, data: Any) -> PartitionRange:
        return cls(**_fields_of(cls, data, "offsets_snapshot", field="--offsets-snapshot"))

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end}


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
                rng = PartitionRange.of(spec)
            except UsageError as exc:
                raise UsageError(f"{field} {topic}[{p}]", exc.message, "give an end offset or {start, end}") from None
            out[topic][int(p)] = rng
    return out


def _snapshot(value: Any) -> dict[str, dict[int, PartitionRange]] | None:
    """An offsets snapshot as given (partitions as numbers or numeric strings, ranges as offsets, objects or
    PartitionRange), normalised to ``{topic: {partition: PartitionRange}}``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RequestError("offsets_snapshot", f"expected {{topic: {{partition: range}}}}, not {type(value).__name__}")
    out: dict[str, dict[int, PartitionRange]] = {}
    for topic, parts in value.items():
        if not isinstance(topic, str) or not isinstance(parts, dict):
            raise RequestError(f"offsets_snapshot.{topic}", "expected {partition: range}", field=f"--offsets-snapshot {topic}")
        out[topic] = {}
        for p, spec in parts.items():
            if not (_is_int(p) or (isinstance(p, str) and re.fullmatch(r"\d+", p))):
                raise RequestError(f"offsets_snapshot.{topic}", f"partition {p!r} is not a number", field=f"--offsets-snapshot {topic}")
            try:
                out[topic][int(p)] = PartitionRange.of(spec)
            except UsageError as exc:
                raise RequestError(f"offsets_snapshot.{topic}.{p}", exc.message, "give an end offset or {start, end}",
                                   field=f"--offsets-snapshot {topic}[{p}]") from None
    return out


@dataclasses.dataclass(frozen=True)
class SchemaRegistries:
    """Confluent-API base URLs of the two registries (Apicurio: ``http://host:port/apis/ccompat/v7``)."""

    source: str
    target: str

    def __post_init__(self) -> None:
        for side in ("source", "target"):
            v = getattr(self, side)
            key, field = f"schema_registry.{side}", f"--{side}-registry"
            if not isinstance(v, str) or not re.match(r"https?://[^/\s]+", v):
                raise RequestError(key, f"{v!r} is not an http(s) URL (give e.g. http://registry:8081)", field=field)
            if re.match(r"https?://[^/]*@", v):
                raise RequestError(key, "the URL carries credentials: drop user:password@ and set "
                                   "MSK_MIGRATE_<ROLE>_REGISTRY_USER/_PASSWORD", field=field)
            object.__setattr__(self, side, v.rstrip("/"))

    @classmethod
    def from_dict(cls, data: Any) -> SchemaRegistries:
        return cls(**_fields_of(cls, data, "schema_registry"))


_ALIAS = ALIAS


@dataclasses.dataclass(frozen=True)
class CopyMarks:
    """The copy marks of a flow with ``mark_copies`` (docs/active-active-proof.md): target records carry
    ``msk-migrate.copied-from.<source_alias>`` last, which the comparison removes; source records carrying
    ``copied-from.<target_alias>`` came from the target and are not expected there."""

    source_alias: str
    target_alias: str | None = None

    def __post_init__(self) -> None:
        for name in ("source_alias", "target_alias"):
            v = getattr(self, name)
            if (v is not None or name == "source_alias") and not (isinstance(v, str) and _ALIAS.match(v)):
                raise RequestError(f"marks.{name}", f"{name} {v!r} is not an MM2 cluster alias ([A-Za-z0-9_-]{{1,64}})")

    @classmethod
    def from_dict(cls, data: Any) -> CopyMarks:
        return cls(**_fields_of(cls, data, "marks"))


def _endpoint(role: str, value: Any) -> Endpoint:
    """A side of the request as an :class:`Endpoint`: given as one, as its dict, or as a pydantic ClusterEndpoint."""
    if not isinstance(value, (Endpoint, dict)) and not hasattr(value, "model_dump"):
        raise RequestError(role, f"expected a cluster endpoint, not {type(value).__name__}", field=role)
    try:
        return Endpoint.of(value)
    except UsageError as exc:
        where = f"{role}.{exc.field}"
        raise RequestError(where, exc.message, exc.fix, field=where) from None


def _choice(key: str, value: Any, kind: Any) -> None:
    allowed = get_args(kind)
    if value not in allowed:
        raise RequestError(key, f"{value!r} is not one of {', '.join(allowed)}")


def _int(key: str, value: Any, low: int | None = None, high: int | None = None, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not _is_int(value) or (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low} and {high}" if low is not None and high is not None else f">= {low}" if low is not None else ""
        raise RequestError(key, f"expected an integer {bounds}, not {value!r}".replace("  ", " "))


def _str_list(key: str, value: Any) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise RequestError(key, f"expected a list of strings, not {value!r}")
    return list(value)


def _str_map(key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise RequestError(key, f"expected an object of strings, not {value!r}")
    return dict(value)


@dataclasses.dataclass(frozen=True)
class ValidationRequest:
    """Inputs of :func:`msk_migrate.validation.run_validation`.

    Window: records whose timestamp is in ``[from_timestamp_ms, until_timestamp_ms)``; ``until``
    defaults to now minus ``grace_seconds`` (so records MM2 has not copied yet are not compared).
    With ``offsets_snapshot`` the source records are exactly the snapshot's offsets instead, and the
    target is compared over the timestamps those records span (per partition).

    ``source``/``target`` may be given as :class:`~.endpoint.Endpoint`, its dict, or a pydantic
    ``ClusterEndpoint``; the request holds an Endpoint. :meth:`to_dict`/:meth:`from_dict` are its JSON form.
    """

    source: Endpoint
    target: Endpoint
    #: Exact source topic names.
    topics: list[str] = dataclasses.field(default_factory=list)
    #: Source topics matching this regex (full match).
    topic_regex: str | None = None
    exclude_regexes: list[str] = dataclasses.field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    #: Source -> target renames.
    topic_map: dict[str, str] = dataclasses.field(default_factory=dict)
    mode: Mode = "auto"
    from_timestamp_ms: int | None = None
    until_timestamp_ms: int | None = None
    #: Default until = now - grace.
    grace_seconds: int = 300
    #: Offset bounds are looked up this far outside the window, so records whose timestamps are out of order
    #: by up to this much are still found (then filtered exactly by timestamp).
    timestamp_slack_seconds: int = 300
    offsets_snapshot: dict[str, dict[int, PartitionRange]] | None = None
    #: How compacted topics are compared.
    compacted: CompactedMode = "records"
    isolation_level: IsolationLevel = "read_committed"
    #: Sample records per category and partition (0..1000).
    sample_size: int = 10
    #: Topic configs left out of parity.
    ignore_configs: list[str] = dataclasses.field(default_factory=list)
    #: Duplicates alone (MM2 is at-least-once) do not fail.
    allow_duplicates: bool = False
    #: Extra Kafka consumer tuning.
    kafka_options: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Spark minPartitions (split big partitions); >= 1.
    min_partitions: int | None = None
    #: Environment the clusters were resolved from (the report records it).
    environment: str | None = None
    #: source/target -> MSK cluster ARN, when known.
    msk_cluster_arns: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Who computes the checksum pass: spark (the PySpark job), native (confluent-kafka worker processes on this
    #: machine, same digests; Spark only for full diffs), auto (native when no SparkSession is given and no
    #: Spark-only option is set, i.e. a local `msk-migrate validate`; spark under spark-submit/Glue).
    engine: Engine = "auto"
    #: Seconds to wait for a cluster (> 0).
    metadata_timeout_seconds: float = 15.0
    #: Directory or s3://bucket/prefix for report.json/.html.
    report_dir: str | None = None
    #: The registries whose ids the records carry: every id seen in the window is proven to resolve identically
    #: on both (docs/schemas.md, Proof per record).
    schema_registry: SchemaRegistries | None = None
    #: Opt out of the schema proof: schema'd topics without registries are 'skipped', not 'schemas-not-checked'
    #: (which fails the run).
    ignore_schemas: bool = False
    #: The flow marks its copies: the target's trailing mark is removed before comparing, and source records
    #: that came from the target are left out (docs/active-active-proof.md).
    marks: CopyMarks | None = None
    #: records: the target holds the source's records in the source's order; multiset: both sides are fed from
    #: both origins (active/active): per partition the same multiset of records, and each origin's records in the
    #: same order on both sides (docs/active-active-proof.md). Needs marks with both aliases.
    compare: Compare = "records"
    #: Print the record keys of difference samples as they are; by default a sample names its key by sha256 only
    #: (keys can hold personal data, and the report lands in logs and buckets).
    show_keys: bool = False

    def __post_init__(self) -> None:
        put = self._put
        put("source", _endpoint("source", self.source))
        put("target", _endpoint("target", self.target))
        put("topics", _str_list("topics", self.topics))
        if self.topic_regex is not None:
            if not isinstance(self.topic_regex, str):
                raise RequestError("topic_regex", f"expected a regex, not {self.topic_regex!r}")
            try:
                re.compile(self.topic_regex)
            except re.error as exc:
                raise RequestError("topic_regex", f"not a valid regex: {exc}") from None
        try:
            put("exclude_regexes", check_mm2_regexes(_str_list("exclude_regexes", self.exclude_regexes), "exclude_regexes"))
        except RequestError:
            raise
        except ValueError as exc:
            raise RequestError("exclude_regexes", str(exc)) from None
        put("topic_map", _str_map("topic_map", self.topic_map))
        _choice("mode", self.mode, Mode)
        _int("from_timestamp_ms", self.from_timestamp_ms, optional=True)
        _int("until_timestamp_ms", self.until_timestamp_ms, optional=True)
        _int("grace_seconds", self.grace_seconds, low=0)
        _int("timestamp_slack_seconds", self.timestamp_slack_seconds, low=0)
        put("offsets_snapshot", _snapshot(self.offsets_snapshot))
        _choice("compacted", self.compacted, CompactedMode)
        _choice("isolation_level", self.isolation_level, IsolationLevel)
        _int("sample_size", self.sample_size, low=0, high=1000)
        put("ignore_configs", _str_list("ignore_configs", self.ignore_configs))
        put("kafka_options", _str_map("kafka_options", self.kafka_options))
        _int("min_partitions", self.min_partitions, low=1, optional=True)
        for key in ("environment", "report_dir"):
            if getattr(self, key) is not None and not isinstance(getattr(self, key), str):
                raise RequestError(key, f"expected a string, not {getattr(self, key)!r}")
        put("msk_cluster_arns", _str_map("msk_cluster_arns", self.msk_cluster_arns))
        _choice("engine", self.engine, Engine)
        timeout = self.metadata_timeout_seconds
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
            raise RequestError("metadata_timeout_seconds", f"expected seconds > 0, not {timeout!r}")
        put("metadata_timeout_seconds", float(timeout))
        if self.schema_registry is not None and not isinstance(self.schema_registry, SchemaRegistries):
            put("schema_registry", SchemaRegistries.from_dict(self.schema_registry))
        if self.marks is not None and not isinstance(self.marks, CopyMarks):
            put("marks", CopyMarks.from_dict(self.marks))
        _choice("compare", self.compare, Compare)
        for key in ("allow_duplicates", "ignore_schemas", "show_keys"):
            if not isinstance(getattr(self, key), bool):
                raise RequestError(key, f"expected true or false, not {getattr(self, key)!r}")
        self._check()

    def _put(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)  # a frozen dataclass normalising its own fields

    def _check(self) -> None:
        """The rules between fields (each value alone is checked by then)."""
        if not self.topics and not self.topic_regex and not self.offsets_snapshot:
            raise RequestError("topics", "give --topic, --topic-regex or --offsets-snapshot", "name the source topics to compare",
                               field="--topic")
        if self.engine == "native" and (self.kafka_options or self.min_partitions):
            raise RequestError("engine", "--kafka-option and --min-partitions tune Spark's Kafka source; use --engine spark or auto",
                               field="--engine native")
        if self.compare == "multiset":
            if self.marks is None or self.marks.target_alias is None:
                raise RequestError("compare", "--compare multiset tells each record's origin by its copy mark: give --copy-marks SRC,TGT "
                                   "(both aliases) or a flow with migration.mark_copies", field="--compare multiset")
            if self.mode == "full":
                raise RequestError("compare", "--compare multiset is computed by the checksum pass, without the full diff "
                                   "(which compares one order per partition): use --mode checksum or auto",
                                   field="--compare multiset")
        if self.offsets_snapshot and (self.from_timestamp_ms is not None or self.until_timestamp_ms is not None):
            raise RequestError("offsets_snapshot", "an offsets snapshot replaces --from-timestamp/--until-timestamp; give one or the other")
        if (
            self.from_timestamp_ms is not None
            and self.until_timestamp_ms is not None
            and self.from_timestamp_ms >= self.until_timestamp_ms
        ):
            raise RequestError("from_timestamp_ms", "from timestamp must be before until timestamp",
                               "give a --from-timestamp earlier than --until-timestamp (until is exclusive)",
                               field="--from-timestamp/--until-timestamp")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, the endpoints and nested values as objects, snapshot partitions as strings."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Endpoint):
                value = value.to_dict()
            elif f.name == "offsets_snapshot" and value is not None:
                value = {t: {str(p): r.to_dict() for p, r in parts.items()} for t, parts in value.items()}
            elif isinstance(value, (SchemaRegistries, CopyMarks)):
                value = dataclasses.asdict(value)
            elif isinstance(value, (list, dict)):
                value = type(value)(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Any) -> ValidationRequest:
        """:meth:`to_dict`'s shape back to a request; an unknown or missing key is refused by name."""
        if not isinstance(data, dict):
            raise RequestError("request", f"expected an object, not {type(data).__name__}", field="request")
        names = [f.name for f in dataclasses.fields(cls)]
        for key in data:
            if key not in names:
                raise RequestError(str(key), f"unknown field {key!r}", "drop it: a request written by this msk-migrate has none",
                                   field=str(key))
        for key in ("source", "target"):
            if key not in data:
                raise RequestError(key, f"{key} is required", field=key)
        return cls(**data)

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

