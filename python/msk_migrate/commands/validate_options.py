"""``validate``'s options, declared once: the shared value types of :mod:`.options` (``--env``, the files, the
bootstrap lists, secret ARNs, topics, written locations), the registry URLs of :mod:`.schemas`, and the value
types only ``validate`` takes (topic regexes and maps, timestamps, consumer tuning, copy marks, the follower's
mark and metrics address). Each value is checked where click parses it (:class:`~msk_migrate.clivalues.Checked`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import click

from ..clivalues import Aliased, Checked, check_key_value, check_regex, check_write_location
from ..kafka.legal import check_topic_name, check_topic_regex
from ..validation.request import DEFAULT_EXCLUDES, parse_timestamp
from .options import BOOTSTRAP, ENV, READ_FILE, SECRET_ARN, TOPICS, WRITE_FILE, WRITE_LOCATION
from .schemas import SOURCE_URL, TARGET_URL

AUTH_MODES = ["plaintext", "iam", "scram", "mtls"]
#: Where ``--follow`` keeps its mark unless ``--mark`` says.
DEFAULT_MARK = "reports/proof-mark.json"
#: Consumer settings that carry credentials or the connection's security: the cluster options set those.
_SECURITY_PREFIXES = ("security.", "sasl.", "ssl.")


def _topic_map(value: str) -> str:
    for name in check_key_value(value):
        check_topic_name(name)
    return value


def _kafka_option(value: str) -> str:
    key, _ = check_key_value(value)
    if key.removeprefix("kafka.").startswith(_SECURITY_PREFIXES):
        raise ValueError(f"{key} is a security setting")
    return value


def _config_name(value: str) -> str:
    if not re.fullmatch(r"[a-z0-9]+(?:[._-][a-z0-9]+)*", value):
        raise ValueError(f"{value!r} is not a topic config name (e.g. retention.ms)")
    return value


def _marks_value(value: str) -> tuple[str, str | None]:
    parts = value.split(",")
    if len(parts) > 2 or not all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", p) for p in parts):
        raise ValueError(f"{value!r} is not SOURCE_ALIAS or SOURCE_ALIAS,TARGET_ALIAS (letters, digits, _ and -)")
    if len(parts) == 2 and parts[0] == parts[1]:
        raise ValueError(f"the source and target aliases are both {parts[0]!r}")
    return parts[0], (parts[1] if len(parts) == 2 else None)


def _bind_address(value: str) -> str:
    import ipaddress

    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        raise ValueError(f"{value.strip()!r} is not an IP address") from None


def _wave_name(v: str) -> str:
    from ..config.waves import WAVE_NAME

    if not WAVE_NAME.match(v):
        raise ValueError(f"{v!r} is not a wave name ([A-Za-z0-9_-]{{1,64}})")
    return v


#: ``--env``: the shared check (:data:`.options.ENV`), with the fix ``validate`` has always printed.
_ENV = Checked("env", ENV.check, "pass --env NAME of infra/environments/NAME.yaml or the YAML's path", "NAME|PATH")
_BIND = Checked("metrics-bind", _bind_address, "give the address to listen on, e.g. 127.0.0.1 (default) or 0.0.0.0 in a task", "ADDR")
_WAVE = Checked("wave", _wave_name, "pass a wave of migration.waves", "NAME")
_TOPIC_REGEX = Checked("regex", check_topic_regex, "give a regular expression over topic names, e.g. 'orders\\..*|payments'")
_REGEX = Checked("regex", check_regex, "give a Python regular expression")
_TOPIC_MAP = Checked("topic-map", _topic_map, "write --topic-map SOURCE_TOPIC=TARGET_TOPIC")
_TIMESTAMP = Checked("timestamp", lambda v: parse_timestamp(v, "timestamp"), "use ISO-8601 (2025-01-31T12:00:00Z) or epoch ms")
_KAFKA_OPTION = Checked("kafka-option", _kafka_option, "write KEY=VALUE of consumer tuning; security comes from the cluster options")
_CONFIG_NAME = Checked("config", _config_name, "name a topic config such as retention.ms")
_MARKS = Checked("copy-marks", _marks_value, "write --copy-marks SOURCE_ALIAS[,TARGET_ALIAS]: the MM2 aliases of the flow's clusters",
                 "SRC[,TGT]")
_MARK_LOCATION = Checked("mark", check_write_location, "give a writable path (.json or a directory) or s3://BUCKET/PREFIX")


def _side_options(role: str) -> list[Callable[[Any], Any]]:
    return [
        click.option(f"--{role}-bootstrap", f"--{role}-bootstrap-servers", f"{role}_bootstrap", cls=Aliased,
                     hidden_aliases=[f"--{role}-bootstrap-servers"], metavar="HOST:PORT[,...]", type=BOOTSTRAP,
                     help=f"{role.capitalize()} cluster bootstrap servers."),
        click.option(f"--{role}-auth", f"{role}_auth", type=click.Choice(AUTH_MODES), default="plaintext",
                     show_default=True, help=f"How to authenticate to the {role} cluster."),
        click.option(f"--{role}-secret-arn", f"{role}_secret_arn", metavar="ARN", type=SECRET_ARN,
                     help=f"Secrets Manager secret with the SCRAM credentials or mTLS cert+key (else env "
                          f"MM2_{role.upper()}_SASL_USERNAME/_PASSWORD or _TLS_CERTIFICATE_CHAIN/_TLS_PRIVATE_KEY)."),
        click.option(f"--{role}-ca-secret-arn", f"{role}_ca_secret_arn", metavar="ARN", type=SECRET_ARN,
                     help=f"Secrets Manager secret with a private CA bundle (else env MM2_{role.upper()}_TLS_CA; "
                          "unset = the default trust store)."),
        click.option(f"--{role}-scram-mechanism", f"{role}_scram_mechanism",
                     type=click.Choice(["SCRAM-SHA-512", "SCRAM-SHA-256"]), default="SCRAM-SHA-512", show_default=True),
        click.option(f"--{role}-scram-tls/--{role}-scram-no-tls", f"{role}_scram_tls", default=True, show_default=True,
                     help="SASL_SSL (default) or SASL_PLAINTEXT for legacy SCRAM listeners."),
    ]


#: Where the clusters come from: a flow (``--env``/``--config``/``--local``), ``--clusters FILE`` or each side's options.
_CLUSTER_OPTIONS = [
    click.option("--env", "env", type=_ENV, help="Environment name (infra/environments/NAME.yaml) or its path: clusters, auth and "
                  "secrets from it (target bootstrap: --target-bootstrap, the stack output)."),
    click.option("--config", "config", type=READ_FILE,
                 help="Flow file (source, target, migration sections) instead of the --source-*/--target-* options."),
    click.option("--local", "local", is_flag=True,
                 help="The local rehearsal environment's clusters and flow (`msk-migrate local up`), like every runbook command."),
    *_side_options("source"),
    *_side_options("target"),
    click.option("--clusters", type=READ_FILE, help="YAML with source: and target: "
                 "(bootstrap_servers, auth: {mode, secret_arn, ...}) instead of the --source-*/--target-* options."),
]

#: What is compared, and how.
_SELECTION_OPTIONS = [
    click.option("--topic", "--topics", "topics", cls=Aliased, hidden_aliases=["--topics"], multiple=True, metavar="T1[,T2...]",
                 type=TOPICS, help="Source topics to validate (repeatable, comma-separated)."),
    click.option("--wave", "wave", metavar="NAME", type=_WAVE,
                 help="Only this wave's topics (migration.waves of --env/--config/--local; also with --follow)."),
    click.option("--topic-regex", metavar="REGEX", type=_TOPIC_REGEX, help="Validate every source topic matching REGEX (full match)."),
    click.option("--exclude-regex", multiple=True, metavar="REGEX", type=_REGEX,
                 help=f"Topics never selected by --topic-regex (repeatable; default: {', '.join(DEFAULT_EXCLUDES)})."),
    click.option("--topic-map", multiple=True, metavar="SRC=TGT", type=_TOPIC_MAP, help="Target topic name of a renamed source topic."),
    click.option("--mode", type=click.Choice(["auto", "checksum", "full"]), default="auto", show_default=True,
                 help="checksum: counts + fingerprints; full: exact diff; auto: full diff only where checksums differ."),
    click.option("--from-timestamp", metavar="TS", type=_TIMESTAMP, help="Window start (ISO-8601 or epoch ms); default: the beginning."),
    click.option("--until-timestamp", metavar="TS", type=_TIMESTAMP, help="Window end, exclusive; default: now minus --grace-seconds."),
    click.option("--grace-seconds", type=click.IntRange(min=0), default=300, show_default=True,
                 help="Default window end is this long ago (records MM2 may not have copied yet are left out)."),
    click.option("--timestamp-slack-seconds", type=click.IntRange(min=0), default=300, show_default=True,
                 help="Offsets are looked up this far outside the window (tolerated timestamp disorder)."),
    click.option("--offsets-snapshot", type=READ_FILE, metavar="FILE",
                 help='JSON {"topic": {"0": end_offset}} of source offsets to compare instead of a time window.'),
    click.option("--compacted", type=click.Choice(["records", "latest-per-key"]), default="records", show_default=True,
                 help="Compacted topics: compare every record, or the latest value per key."),
    click.option("--isolation-level", type=click.Choice(["read_committed", "read_uncommitted"]),
                 default="read_committed", show_default=True),
    click.option("--allow-duplicates", is_flag=True, help="Duplicates alone (MM2 is at-least-once) do not fail the verdict."),
    click.option("--ignore-config", multiple=True, metavar="NAME", type=_CONFIG_NAME, help="Topic config left out of the parity check."),
    click.option("--sample-size", type=click.IntRange(0, 1000), default=10, show_default=True, help="Sample records per category and partition."),
    click.option("--kafka-option", multiple=True, metavar="KEY=VALUE", type=_KAFKA_OPTION, help="Extra Kafka consumer tuning (not security)."),
    click.option("--min-partitions", type=click.IntRange(min=1), help="Spark minPartitions: split large Kafka partitions across tasks."),
    click.option("--engine", type=click.Choice(["auto", "spark", "native"]), default="auto", show_default=True,
                 help="Checksum pass: native = confluent-kafka processes on this machine (no JVM start; Spark only "
                 "for full diffs), spark = the PySpark job; auto = native for a local run, spark under spark-submit/Glue."),
    click.option("--metadata-timeout", type=click.FloatRange(min=0, min_open=True), default=15.0, show_default=True,
                 help="Seconds to wait for a cluster."),
]

#: Where the job runs and where its results go.
_RUN_OPTIONS = [
    click.option("--on", "on", type=click.Choice(["local", "emr-serverless", "glue"]), default="local", show_default=True,
                 help="Where the job runs: here, or as a job run of --env's EMR Serverless application (provisioned by "
                      "migration-<env>) or of its Glue 5.0 job (validation.glue: true); the report comes back to "
                      "--validation-report."),
    click.option("--job-request", "job_request", metavar="FILE", type=WRITE_FILE,
                 help="Check everything, write the request the Spark job runs (spark_entry.py's --request document) to FILE "
                      "and run nothing: for a spark-submit by hand (docs/validation.md)."),
    click.option("--validation-report", "--report-dir", "report_dir", cls=Aliased, hidden_aliases=["--report-dir"],
                 metavar="DIR|s3://BUCKET/PREFIX", type=WRITE_LOCATION,
                 help="Where report.json and report.html go (default: reports/validation-<UTC time>/); "
                      "`cutover check --validation-report` reads them there."),
    click.option("--no-report", is_flag=True, help="Write no report files (console/JSON output only)."),
    click.option("--verbose", is_flag=True, help="Show Kafka client (librdkafka) and Spark log lines on stderr."),
    click.option("--source-registry", "source_registry", type=SOURCE_URL, default=None,
                 help="Source schema registry's Confluent API (e.g. http://registry:8081): every record's schema id is proven "
                      "to resolve to the identical schema on both registries (default: the flow's schema_registry section, "
                      "or --local's registries)."),
    click.option("--target-registry", "target_registry", type=TARGET_URL, default=None,
                 help="Target schema registry's Confluent API (with --source-registry)."),
    click.option("--show-keys", "show_keys", is_flag=True,
                 help="Print the keys of difference samples as they are (default: their sha256 only; keys can hold personal "
                      "data and the report lands in logs and buckets)."),
    click.option("--ignore-schemas", "ignore_schemas", is_flag=True,
                 help="Do not prove schema ids: topics of schema'd records are 'skipped' instead of 'schemas-not-checked'."),
    click.option("--copy-marks", "--marks", "marks", cls=Aliased, hidden_aliases=["--marks"], type=_MARKS, default=None,
                 help="The flow marks its copies (migration.mark_copies; default: on when the flow says so): remove the "
                      "trailing msk-migrate.copied-from.SRC header of each target record before comparing (a record "
                      "without it fails as 'mark missing/wrong'), and leave out source records copied from TGT "
                      "(docs/active-active-proof.md)."),
    click.option("--compare", "compare", type=click.Choice(["records", "multiset"]), default=None,
                 help="records: the target holds the source's records in its order (the default where copies are not "
                      "marked). multiset: per partition the same records, each origin's in the same order; the comparison "
                      "wherever copies are marked (--copy-marks SRC,TGT or a flow with mark_copies), chosen without asking, "
                      "and records is refused there (docs/active-active-proof.md)."),
]

#: ``--follow`` and the options that only it takes (:mod:`.validate_follow`).
FOLLOW_KEYS = ("follow", "mark", "interval", "metrics_port", "metrics_bind", "once")
_FOLLOW_OPTIONS = [
    click.option("--follow", "follow", is_flag=True,
                 help="Follow replication: compare only the records past a persisted verified-up-to mark per partition, "
                      "advance it, repeat every --interval (docs/follow.md)."),
    click.option("--mark", "mark", metavar="PATH|s3://BUCKET/PREFIX", type=_MARK_LOCATION, default=None,
                 help=f"--follow: where the mark is kept (default: {DEFAULT_MARK}); a restart resumes from it."),
    click.option("--interval", "interval", type=click.FloatRange(min=0.1), default=None,
                 help="--follow: seconds between passes (default: 10)."),
    click.option("--metrics-port", "metrics_port", type=click.IntRange(0, 65535), default=None,
                 help="--follow: serve proof-lag metrics for Prometheus on 127.0.0.1:PORT/metrics (0: any free port)."),
    click.option("--metrics-bind", "metrics_bind", type=_BIND, default=None,
                 help="--follow: the address the metrics endpoint listens on (default 127.0.0.1; the stack's follower "
                 "service: 0.0.0.0 inside its task, reachable from the Prometheus security group only)."),
    click.option("--once", "once", is_flag=True, help="--follow: one pass, persist the mark and exit (0 proven, 1 not)."),
]


def validate_options(f: Any) -> Any:
    """Every option of ``validate``, in ``--help``'s order."""
    for option in reversed([*_CLUSTER_OPTIONS, *_SELECTION_OPTIONS, *_RUN_OPTIONS, *_FOLLOW_OPTIONS]):
        f = option(f)
    return f
