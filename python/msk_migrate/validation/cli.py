"""``msk-migrate validate``: prove the target holds the same records as the source.

Exit 0 = everything matches, 1 = a mismatch (see the report), 2 = bad input or an unreachable
cluster (one line on stderr naming the field and the fix; nothing written).
The same command runs under spark-submit / Glue through ``spark_entry.py`` (with the job's
SparkSession instead of a local one).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import partial
from pathlib import Path
from typing import Any

import click
import yaml

from .. import cliutil
from ..cliutil import emit_json, human, output_option
from ..clivalues import (
    Aliased,
    Checked,
    check_host_ports,
    check_key_value,
    check_readable_file,
    check_regex,
    check_writable,
    check_write_location,
)
from ..config.auth import AuthConfig
from ..config.identifiers import check_env_name, check_secret_arn
from ..config.loader import validate_model
from ..config.migration import ClusterEndpoint
from ..errors import UsageError
from ..kafka.legal import check_topic_list, check_topic_name, check_topic_regex
from ..outcome import json_document, quiet
from .request import DEFAULT_EXCLUDES, ValidationRequest, load_snapshot, parse_timestamp

AUTH_MODES = ["plaintext", "iam", "scram", "mtls"]
_WRITE_FILE = Checked("file", lambda v: check_writable(v, "file"), "give a path in a writable directory", "FILE")


# ---- option values, checked where click parses them (clivalues.Checked: one line naming the option) ----
def _environment(value: str) -> str:
    from ..config.environment_files import environment_path

    if value.endswith((".yaml", ".yml")) or "/" in value:
        check_readable_file(value)
    else:
        environment_path(check_env_name(value))
    return value


def _topic_map(value: str) -> str:
    for name in check_key_value(value):
        check_topic_name(name)
    return value


#: Consumer settings that carry credentials or the connection's security: the cluster options set those.
_SECURITY_PREFIXES = ("security.", "sasl.", "ssl.")


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


_ENV = Checked("env", _environment, "pass --env NAME of infra/environments/NAME.yaml or the YAML's path", "NAME|PATH")
_FILE = Checked("file", lambda v: str(check_readable_file(v)), "give the path of an existing, readable file", "FILE")
_BOOTSTRAP = Checked("bootstrap", check_host_ports, "give host:port[,host:port...]")
_SECRET_ARN = Checked("secret-arn", lambda v: check_secret_arn(v, "secret"), "pass arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME")
def _bind_address(value: str) -> str:
    import ipaddress

    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        raise ValueError(f"{value.strip()!r} is not an IP address") from None


_BIND = Checked("metrics-bind", _bind_address, "give the address to listen on, e.g. 127.0.0.1 (default) or 0.0.0.0 in a task", "ADDR")
_TOPICS = Checked("topics", lambda v: check_topic_list(v) and v, "name topics as Kafka allows, comma-separated: T1,T2")


def _wave_name(v: str) -> str:
    from ..config.waves import WAVE_NAME

    if not WAVE_NAME.match(v):
        raise ValueError(f"{v!r} is not a wave name ([A-Za-z0-9_-]{{1,64}})")
    return v


_WAVE = Checked("wave", _wave_name, "pass a wave of migration.waves", "NAME")
_TOPIC_REGEX = Checked("regex", check_topic_regex, "give a regular expression over topic names, e.g. 'orders\\..*|payments'")
_REGEX = Checked("regex", check_regex, "give a Python regular expression")
_TOPIC_MAP = Checked("topic-map", _topic_map, "write --topic-map SOURCE_TOPIC=TARGET_TOPIC")
_TIMESTAMP = Checked("timestamp", lambda v: parse_timestamp(v, "timestamp"), "use ISO-8601 (2025-01-31T12:00:00Z) or epoch ms")
_KAFKA_OPTION = Checked("kafka-option", _kafka_option, "write KEY=VALUE of consumer tuning; security comes from the cluster options")
_CONFIG_NAME = Checked("config", _config_name, "name a topic config such as retention.ms")
_WRITE_LOCATION = Checked("location", check_write_location, "give a writable directory or s3://BUCKET/PREFIX")
_DEFAULT_MARK = "reports/proof-mark.json"
_MARKS = Checked("marks", _marks_value, "write --marks SOURCE_ALIAS[,TARGET_ALIAS]: the MM2 aliases of the flow's clusters",
                 "SRC[,TGT]")
_MARK_LOCATION = Checked("mark", check_write_location, "give a writable path (.json or a directory) or s3://BUCKET/PREFIX")


def _side_options(role: str):
    def deco(f):
        opts = [
            click.option(f"--{role}-bootstrap-servers", f"{role}_bootstrap", metavar="HOST:PORT[,...]", type=_BOOTSTRAP,
                         help=f"{role.capitalize()} cluster bootstrap servers."),
            click.option(f"--{role}-auth", f"{role}_auth", type=click.Choice(AUTH_MODES), default="plaintext",
                         show_default=True, help=f"How to authenticate to the {role} cluster."),
            click.option(f"--{role}-secret-arn", f"{role}_secret_arn", metavar="ARN", type=_SECRET_ARN,
                         help=f"Secrets Manager secret with the SCRAM credentials or mTLS cert+key (else env "
                              f"MM2_{role.upper()}_SASL_USERNAME/_PASSWORD or _TLS_CERTIFICATE_CHAIN/_TLS_PRIVATE_KEY)."),
            click.option(f"--{role}-ca-secret-arn", f"{role}_ca_secret_arn", metavar="ARN", type=_SECRET_ARN,
                         help=f"Secrets Manager secret with a private CA bundle (else env MM2_{role.upper()}_TLS_CA; "
                              "unset = the default trust store)."),
            click.option(f"--{role}-scram-mechanism", f"{role}_scram_mechanism",
                         type=click.Choice(["SCRAM-SHA-512", "SCRAM-SHA-256"]), default="SCRAM-SHA-512", show_default=True),
            click.option(f"--{role}-scram-tls/--{role}-scram-no-tls", f"{role}_scram_tls", default=True, show_default=True,
                         help="SASL_SSL (default) or SASL_PLAINTEXT for legacy SCRAM listeners."),
        ]
        for o in reversed(opts):
            f = o(f)
        return f

    return deco


def _endpoint(role: str, kw: dict[str, Any]) -> ClusterEndpoint:
    bootstrap = kw[f"{role}_bootstrap"]
    if not bootstrap:
        raise UsageError(f"--{role}-bootstrap-servers", "required", "pass host:port[,host:port] or --clusters FILE")
    data = {
        "mode": kw[f"{role}_auth"],
        "scram_mechanism": kw[f"{role}_scram_mechanism"],
        "tls": kw[f"{role}_scram_tls"],
        "secret_arn": kw[f"{role}_secret_arn"],
        "ca_secret_arn": kw[f"{role}_ca_secret_arn"],
    }
    try:
        if data["mode"] in ("scram", "mtls") and not data["secret_arn"]:
            data["secrets_from"] = "env"  # secrets from the MM2_<ROLE>_* variables only
        auth = validate_model(AuthConfig, data)
        return validate_model(ClusterEndpoint, {"alias": role, "bootstrap_servers": bootstrap, "auth": auth})
    except UsageError as exc:
        # Name the command-line option: bootstrap_servers -> --source-bootstrap-servers, etc.
        field = exc.field.split(".")[-1] if exc.field and exc.field != "config" else "auth"
        if field == "mode":
            field = "auth"
        raise UsageError(f"--{role}-{field.replace('_', '-')}", exc.message, exc.fix) from None


def _clusters_file(path: str) -> tuple[ClusterEndpoint, ClusterEndpoint]:
    p = Path(path)
    if not p.is_file():
        raise UsageError("--clusters", f"{path} not found", "pass a YAML file with source: and target:")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        raise UsageError("--clusters", f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    out = []
    for role in ("source", "target"):
        if role not in data:
            raise UsageError(f"--clusters {p.name}: {role}", "required field is missing", "add it")
        side = dict(data[role] or {})
        side.setdefault("alias", role)
        out.append(validate_model(ClusterEndpoint, side, prefix=f"{p.name}: {role}."))
    return out[0], out[1]


def _pairs(values: tuple[str, ...], field: str) -> dict[str, str]:
    out = {}
    for v in values:
        k, sep, val = v.partition("=")
        if not sep or not k:
            raise UsageError(field, f"{v!r} is not KEY=VALUE", f"write {field} key=value")
        out[k.strip()] = val.strip()
    return out


#: ``click.Context.meta`` key of the function that resolves ``--local``'s flow: the local rehearsal
#: environment's flow is the command line's (commands/flow.py, above this floor), which puts it there.
LOCAL_FLOW = "msk_migrate.local_flow"


def _local_flow() -> Any:
    ctx = click.get_current_context(silent=True)
    resolve = ctx.meta.get(LOCAL_FLOW) if ctx is not None else None
    if resolve is None:
        raise UsageError("--local", "the local rehearsal environment is known to `msk-migrate validate` only",
                         "run `msk-migrate validate --local`, or pass --env/--config")
    return resolve()


def _flow_clusters(kw: dict[str, Any]) -> tuple[ClusterEndpoint, ClusterEndpoint, Any]:
    """``--env`` / ``--config`` / ``--local``: clusters, auth and secrets from the environment YAML or flow file, like
    every other command (config/flow.py, read_flow); the target's bootstrap servers of an environment come from
    ``--target-bootstrap-servers`` (or MSK_MIGRATE_TARGET_BOOTSTRAP), the stack output. The flow's
    migration is returned too (its topic regexes are the default selection)."""
    import os

    from ..config.flow import read_flow

    given = [opt for opt, key in (("--clusters", "clusters"), ("--source-bootstrap-servers", "source_bootstrap"),
                                  ("--source-secret-arn", "source_secret_arn"), ("--target-secret-arn", "target_secret_arn"),
                                  ("--source-ca-secret-arn", "source_ca_secret_arn"),
                                  ("--target-ca-secret-arn", "target_ca_secret_arn")) if kw.get(key)]
    chosen = "--env" if kw.get("env") else "--config" if kw.get("config") else "--local"
    if given:
        raise UsageError(chosen, f"given together with {', '.join(given)}",
                         f"the clusters, auth and secrets come from {chosen}; drop {given[0]}")
    target_bootstrap = kw.get("target_bootstrap") or os.environ.get("MSK_MIGRATE_TARGET_BOOTSTRAP")
    if chosen == "--local" and kw.get("target_bootstrap"):
        raise UsageError("--target-bootstrap-servers", "the local environment names the target's bootstrap servers", "drop it")
    flow = _local_flow() if chosen == "--local" else read_flow(kw.get("env"), Path(kw["config"]) if kw.get("config") else None,
                                                                 target_bootstrap if kw.get("env") else None)
    if flow is None:
        raise UsageError("--env", "no migration given", "pass --env NAME or --config FILE")
    if kw.get("config") and kw.get("target_bootstrap"):
        raise UsageError("--target-bootstrap-servers", "the flow file names the target's bootstrap servers", "drop it")
    target = flow.require_target("validate")
    return flow.source, target, flow


def _copy_marks(kw: dict[str, Any], flow: Any) -> dict[str, str | None] | None:
    """``--marks SRC[,TGT]``, else the flow's own aliases when its migration marks its copies (``mark_copies``)."""
    if kw.get("marks"):
        src, tgt = kw["marks"]
        return {"source_alias": src, "target_alias": tgt}
    if flow is not None and getattr(flow.migration, "mark_copies", False):
        target = flow.require_target("validate")
        return {"source_alias": flow.source.alias, "target_alias": target.alias}
    return None


def _registry_url(value: str) -> str:
    from ..schemas.client import check_registry_url

    return check_registry_url(value)


#: A registry's Confluent-API URL, checked where click parses it (the refusal names the option given).
REGISTRY_URL = Checked("url", _registry_url, metavar="URL")


def _registries(kw: dict[str, Any]) -> dict[str, str] | None:
    """The registries whose ids the records carry: ``--source-registry``/``--target-registry`` (both), else the
    ``schema_registry`` section of ``--env``/``--config``, else ``--local``'s registries; None when none is named
    (the proof per record then reports schema'd topics as not checked, docs/schema-proof.md)."""
    src, tgt = kw.get("source_registry"), kw.get("target_registry")
    if src or tgt:
        if not (src and tgt):
            missing = "--target-registry" if src else "--source-registry"
            raise UsageError(missing, "one registry given without the other", f"give {missing} URL too")
        return {"source": src, "target": tgt}
    if kw.get("env") or kw.get("config"):
        from ..config.schema_registry import optional_registry_section

        section = optional_registry_section(kw.get("env"), Path(kw["config"]) if kw.get("config") else None)
        return {"source": section.source, "target": section.target} if section else None
    if kw.get("local"):
        import os

        from ..local.state import StateFile
        from ..paths import LOCAL_DIR

        state = StateFile(Path(os.environ.get("MSK_MIGRATE_LOCAL_ENV_DIR") or LOCAL_DIR / "env"))
        found = state.load().registries if state.exists() else {}
        return {"source": found["source"].url, "target": found["target"].url} if found else None
    return None


def _wave_selection(kw: dict[str, Any], flow: Any, topics: list[str]) -> None:
    """``--wave``: the wave's topics among the migration's (MM2's full-match semantics, as the wave is checked:
    msk_migrate.config.waves), as the topic regex; refused without a flow or beside another topic selection."""
    from ..config.waves import check_wave_name

    if flow is None:
        raise UsageError("--wave", "names a wave of a flow's migration and no flow was given", "add --env NAME, --config FILE or --local")
    for option, key in (("--topics", "topics"), ("--topic-regex", "topic_regex"), ("--offsets-snapshot", "offsets_snapshot")):
        if kw.get(key):
            raise UsageError(f"--wave/{option}", "give one topic selection", f"drop {option}: --wave selects the wave's topics")
    check_wave_name(flow.migration, kw["wave"])
    selection = "|".join(f"(?:{r})" for r in flow.migration.topics)
    wave = "|".join(f"(?:{r})" for r in flow.migration.waves[kw["wave"]])
    kw["topic_regex"] = f"(?=(?:{selection})\\Z)(?:{wave})"
    if not kw.get("exclude_regex"):
        kw["exclude_regex"] = (*DEFAULT_EXCLUDES, *flow.migration.topics_exclude)
    del topics[:]


def build_request(kw: dict[str, Any]) -> ValidationRequest:
    """The CLI's options as a validated :class:`ValidationRequest` (UsageError on bad input)."""
    flow = None
    chosen = [opt for opt, key in (("--env", "env"), ("--config", "config"), ("--local", "local")) if kw.get(key)]
    if len(chosen) > 1:
        raise UsageError("/".join(chosen), "give one source of the clusters", "use --env NAME for an environment")
    if chosen:
        source, target, flow = _flow_clusters(kw)
    elif kw.get("clusters"):
        if kw.get("source_bootstrap") or kw.get("target_bootstrap"):
            raise UsageError("--clusters", "given together with --source/--target-bootstrap-servers", "use one of them")
        source, target = _clusters_file(kw["clusters"])
    else:
        source, target = _endpoint("source", kw), _endpoint("target", kw)
    topics = [t.strip() for item in kw.get("topics") or () for t in item.split(",") if t.strip()]
    if kw.get("wave"):
        _wave_selection(kw, flow, topics)
    if flow is not None and not topics and not kw.get("topic_regex") and not kw.get("offsets_snapshot"):
        # The flow's replicated topics are the default selection (its excludes too, unless given).
        kw["topic_regex"] = "|".join(f"(?:{r})" for r in flow.migration.topics)
        if not kw.get("exclude_regex"):
            kw["exclude_regex"] = (*DEFAULT_EXCLUDES, *flow.migration.topics_exclude)
    data: dict[str, Any] = {
        "source": source,
        "target": target,
        "topics": topics,
        "topic_regex": kw.get("topic_regex"),
        # a flow's renames are followed (the target topic of a renamed source topic); --topic-map adds or overrides
        "topic_map": {**(dict(flow.migration.topic_renames) if flow is not None else {}),
                      **_pairs(kw.get("topic_map") or (), "--topic-map")},
        "mode": kw.get("mode") or "auto",
        "from_timestamp_ms": parse_timestamp(kw.get("from_timestamp"), "--from-timestamp"),
        "until_timestamp_ms": parse_timestamp(kw.get("until_timestamp"), "--until-timestamp"),
        "grace_seconds": kw.get("grace_seconds", 300),
        "timestamp_slack_seconds": kw.get("timestamp_slack_seconds", 300),
        "compacted": kw.get("compacted") or "records",
        "isolation_level": kw.get("isolation_level") or "read_committed",
        "sample_size": kw.get("sample_size", 10),
        "ignore_configs": list(kw.get("ignore_config") or ()),
        "allow_duplicates": bool(kw.get("allow_duplicates")),
        "kafka_options": _pairs(kw.get("kafka_option") or (), "--kafka-option"),
        "min_partitions": kw.get("min_partitions"),
        "engine": kw.get("engine") or "auto",
        "metadata_timeout_seconds": kw.get("metadata_timeout", 15.0),
    }
    if kw.get("exclude_regex"):
        data["exclude_regexes"] = list(kw["exclude_regex"])
    if flow is not None and flow.msk_cluster_arns:
        data["msk_cluster_arns"] = dict(flow.msk_cluster_arns)  # the report names them beside the cluster ids
    frm, until = data["from_timestamp_ms"], data["until_timestamp_ms"]
    if frm is not None and until is not None and frm >= until:
        raise UsageError(
            "--from-timestamp/--until-timestamp",
            f"the window [{kw['from_timestamp']}, {kw['until_timestamp']}) is empty: from is not before until",
            "give a --from-timestamp earlier than --until-timestamp (until is exclusive)",
        )
    if data["engine"] == "native" and (data["kafka_options"] or data["min_partitions"]):
        raise UsageError(
            "--engine native", "--kafka-option and --min-partitions tune Spark's Kafka source, which it does not use",
            "drop them, or use --engine spark",
        )
    if kw.get("offsets_snapshot"):
        if frm is not None or until is not None:
            raise UsageError(
                "--offsets-snapshot", "given together with --from-timestamp/--until-timestamp",
                "use either the snapshot or a time window",
            )
        data["offsets_snapshot"] = load_snapshot(kw["offsets_snapshot"])
    if not kw.get("no_report"):
        data["report_dir"] = kw.get("report_dir") or str(
            Path("reports") / f"validation-{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}"
        )
    registries = _registries(kw)
    if registries:
        data["schema_registry"] = registries
    marks = _copy_marks(kw, flow)
    if marks is not None:
        data["marks"] = marks
    data["compare"] = kw.get("compare") or "records"
    if data["compare"] == "multiset":
        if marks is None or marks["target_alias"] is None:
            raise UsageError("--compare multiset", "tells each record's origin by its copy mark, and no marks are known",
                             "give --marks SOURCE_ALIAS,TARGET_ALIAS, or a flow whose migration has mark_copies: true")
        spark_only = [f for f, on in (("--engine spark", data["engine"] == "spark"), ("--mode full", data["mode"] == "full"),
                                      ("--kafka-option", bool(data["kafka_options"])),
                                      ("--min-partitions", bool(data["min_partitions"]))) if on]
        if spark_only:
            raise UsageError("--compare multiset", f"is computed by the native checksum pass; {spark_only[0]} needs Spark's "
                             "pass or its full diff (one order per partition)", f"drop {spark_only[0]}")
    data["ignore_schemas"] = bool(kw.get("ignore_schemas"))
    data["show_keys"] = bool(kw.get("show_keys"))
    return ValidationRequest(**data)  # a refusal is a UsageError naming the option (request.OPTIONS)


@click.command("validate")
@click.option("--env", "env", type=_ENV, help="Environment name (infra/environments/NAME.yaml) or its path: clusters, auth and "
              "secrets from it (target bootstrap: --target-bootstrap-servers, the stack output).")
@click.option("--config", "config", type=_FILE,
              help="Flow file (source, target, migration sections) instead of the --source-*/--target-* options.")
@click.option("--local", "local", is_flag=True,
              help="The local rehearsal environment's clusters and flow (`msk-migrate local up`), like every runbook command.")
@_side_options("source")
@_side_options("target")
@click.option("--clusters", type=_FILE, help="YAML with source: and target: "
              "(bootstrap_servers, auth: {mode, secret_arn, ...}) instead of the --source-*/--target-* options.")
@click.option("--topics", multiple=True, metavar="T1,T2", type=_TOPICS, help="Source topics to validate (repeatable, comma-separated).")
@click.option("--wave", "wave", metavar="NAME", type=_WAVE,
              help="Only this wave's topics (migration.waves of --env/--config/--local; also with --follow).")
@click.option("--topic-regex", metavar="REGEX", type=_TOPIC_REGEX, help="Validate every source topic matching REGEX (full match).")
@click.option("--exclude-regex", multiple=True, metavar="REGEX", type=_REGEX,
              help=f"Topics never selected by --topic-regex (repeatable; default: {', '.join(DEFAULT_EXCLUDES)}).")
@click.option("--topic-map", multiple=True, metavar="SRC=TGT", type=_TOPIC_MAP, help="Target topic name of a renamed source topic.")
@click.option("--mode", type=click.Choice(["auto", "checksum", "full"]), default="auto", show_default=True,
              help="checksum: counts + fingerprints; full: exact diff; auto: full diff only where checksums differ.")
@click.option("--from-timestamp", metavar="TS", type=_TIMESTAMP, help="Window start (ISO-8601 or epoch ms); default: the beginning.")
@click.option("--until-timestamp", metavar="TS", type=_TIMESTAMP, help="Window end, exclusive; default: now minus --grace-seconds.")
@click.option("--grace-seconds", type=click.IntRange(min=0), default=300, show_default=True,
              help="Default window end is this long ago (records MM2 may not have copied yet are left out).")
@click.option("--timestamp-slack-seconds", type=click.IntRange(min=0), default=300, show_default=True,
              help="Offsets are looked up this far outside the window (tolerated timestamp disorder).")
@click.option("--offsets-snapshot", type=_FILE, metavar="FILE",
              help='JSON {"topic": {"0": end_offset}} of source offsets to compare instead of a time window.')
@click.option("--compacted", type=click.Choice(["records", "latest-per-key"]), default="records", show_default=True,
              help="Compacted topics: compare every record, or the latest value per key.")
@click.option("--isolation-level", type=click.Choice(["read_committed", "read_uncommitted"]),
              default="read_committed", show_default=True)
@click.option("--allow-duplicates", is_flag=True, help="Duplicates alone (MM2 is at-least-once) do not fail the verdict.")
@click.option("--ignore-config", multiple=True, metavar="NAME", type=_CONFIG_NAME, help="Topic config left out of the parity check.")
@click.option("--sample-size", type=click.IntRange(0, 1000), default=10, show_default=True, help="Sample records per category and partition.")
@click.option("--kafka-option", multiple=True, metavar="KEY=VALUE", type=_KAFKA_OPTION, help="Extra Kafka consumer tuning (not security).")
@click.option("--min-partitions", type=click.IntRange(min=1), help="Spark minPartitions: split large Kafka partitions across tasks.")
@click.option("--engine", type=click.Choice(["auto", "spark", "native"]), default="auto", show_default=True,
              help="Checksum pass: native = confluent-kafka processes on this machine (no JVM start; Spark only "
              "for full diffs), spark = the PySpark job; auto = native for a local run, spark under spark-submit/Glue.")
@click.option("--metadata-timeout", type=click.FloatRange(min=0, min_open=True), default=15.0, show_default=True, help="Seconds to wait for a cluster.")
@click.option("--on", "on", type=click.Choice(["local", "emr-serverless", "glue"]), default="local", show_default=True,
              help="Where the job runs: here, or as a job run of --env's EMR Serverless application (provisioned by "
                   "migration-<env>) or of its Glue 5.0 job (validation.glue: true); the report comes back to "
                   "--validation-report.")
@click.option("--job-request", "job_request", metavar="FILE", type=_WRITE_FILE,
              help="Check everything, write the request the Spark job runs (spark_entry.py's --request document) to FILE "
                   "and run nothing: for a spark-submit by hand (docs/validation.md).")
@click.option("--validation-report", "--report-dir", "report_dir", cls=Aliased, hidden_aliases=["--report-dir"],
              metavar="DIR|s3://BUCKET/PREFIX", type=_WRITE_LOCATION,
              help="Where report.json and report.html go (default: reports/validation-<UTC time>/); "
                   "`cutover check --validation-report` reads them there.")
@click.option("--no-report", is_flag=True, help="Write no report files (console/JSON output only).")
@click.option("--verbose", is_flag=True, help="Show Kafka client (librdkafka) and Spark log lines on stderr.")
@click.option("--source-registry", "source_registry", type=REGISTRY_URL, default=None,
              help="Source schema registry's Confluent API (e.g. http://registry:8081): every record's schema id is proven "
                   "to resolve to the identical schema on both registries (default: the flow's schema_registry section, "
                   "or --local's registries).")
@click.option("--target-registry", "target_registry", type=REGISTRY_URL, default=None,
              help="Target schema registry's Confluent API (with --source-registry).")
@click.option("--show-keys", "show_keys", is_flag=True,
              help="Print the keys of difference samples as they are (default: their sha256 only; keys can hold personal "
                   "data and the report lands in logs and buckets).")
@click.option("--ignore-schemas", "ignore_schemas", is_flag=True,
              help="Do not prove schema ids: topics of schema'd records are 'skipped' instead of 'schemas-not-checked'.")
@click.option("--marks", "marks", type=_MARKS, default=None,
              help="The flow marks its copies (migration.mark_copies; default: on when the flow says so): remove the "
                   "trailing msk-migrate.copied-from.SRC header of each target record before comparing (a record "
                   "without it fails as 'mark missing/wrong'), and leave out source records copied from TGT "
                   "(docs/active-active-proof.md).")
@click.option("--compare", "compare", type=click.Choice(["records", "multiset"]), default=None,
              help="records (default): the target holds the source's records in its order. multiset: active/active, "
                   "both sides fed from both origins: per partition the same records, each origin's in the same order "
                   "(needs --marks SRC,TGT or a flow with mark_copies; docs/active-active-proof.md).")
@click.option("--follow", "follow", is_flag=True,
              help="Follow replication: compare only the records past a persisted verified-up-to mark per partition, "
                   "advance it, repeat every --interval (docs/follow.md).")
@click.option("--mark", "mark", metavar="PATH|s3://BUCKET/PREFIX", type=_MARK_LOCATION, default=None,
              help=f"--follow: where the mark is kept (default: {_DEFAULT_MARK}); a restart resumes from it.")
@click.option("--interval", "interval", type=click.FloatRange(min=0.1), default=None,
              help="--follow: seconds between passes (default: 10).")
@click.option("--metrics-port", "metrics_port", type=click.IntRange(0, 65535), default=None,
              help="--follow: serve proof-lag metrics for Prometheus on 127.0.0.1:PORT/metrics (0: any free port).")
@click.option("--metrics-bind", "metrics_bind", type=_BIND, default=None,
              help="--follow: the address the metrics endpoint listens on (default 127.0.0.1; the stack's follower "
              "service: 0.0.0.0 inside its task, reachable from the Prometheus security group only).")
@click.option("--once", "once", is_flag=True, help="--follow: one pass, persist the mark and exit (0 proven, 1 not).")
@output_option
@click.pass_context
def validate(ctx: click.Context, output: str, **kw: Any) -> None:
    """Prove the target holds the same records as the source (PySpark).

    Exit 0: everything matches; 1: a mismatch; 2: bad input or an unreachable cluster.
    """
    spark = (ctx.obj or {}).get("spark") if isinstance(ctx.obj, dict) else None
    verbose = kw.pop("verbose", False)
    follow_opts = {k: kw.pop(k) for k in ("follow", "mark", "interval", "metrics_port", "metrics_bind", "once")}
    if follow_opts["follow"] or any(v not in (None, False) for v in follow_opts.values()):
        _follow(kw, follow_opts, output, verbose)
        return
    on = kw.pop("on", "local")
    job_request = kw.pop("job_request", None)
    if job_request is not None:
        if on != "local":
            raise UsageError("--job-request", f"writes the request for a Spark job started by hand, not with --on {on}", "drop one of them")
        _write_job_request(job_request, build_request(kw), output)
        return
    if on == "emr-serverless":
        from .emr_run import environment, validate_on_emr_serverless

        cfg = environment(kw)
        code = validate_on_emr_serverless(cfg, build_request(kw), output)
        if code:
            sys.exit(code)
        return
    if on == "glue":
        from .glue_run import environment as glue_environment
        from .glue_run import validate_on_glue

        cfg = glue_environment(kw)
        code = validate_on_glue(cfg, build_request(kw), output)
        if code:
            sys.exit(code)
        return
    request = build_request(kw)
    from .console import print_report, spark_progress
    from .job import run_validation

    con = human(output)
    show = con.is_terminal or output == "text"
    with (_client_logs_to_stderr(spark) if verbose else nullcontext()), \
            (spark_progress(con) if show else nullcontext(quiet)) as say:
        report = run_validation(request, spark=spark, progress=say)
    if output == "json":
        doc = report.to_dict()
        emit_json({**doc, "locations": report.locations,
                   **json_document(report.talked_to(), doc.get("topics", []), str(doc.get("verdict")), report.exit_code)})
    else:
        print_report(report, con)
    if report.exit_code:
        sys.exit(report.exit_code)


def _write_job_request(path: Path, request: ValidationRequest, output: str) -> None:
    """``--job-request FILE``: the checked request as the job's one document; nothing runs."""
    from .job_request import document

    doc = document(request)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    talked_to = {role: getattr(request, role).bootstrap_servers for role in ("source", "target")}
    if output == "json":
        emit_json({"job_request": str(path), **json_document(talked_to, [], "written", 0)})
    else:
        human(output).print(f"job request for {talked_to['source']} -> {talked_to['target']} written to {path} "
                            "(spark_entry.py --request \"$(cat FILE)\")")


#: Options of a batch window that mean nothing to the follower (it compares every record past its mark).
_BATCH_ONLY = (("from_timestamp", "--from-timestamp"), ("until_timestamp", "--until-timestamp"),
               ("offsets_snapshot", "--offsets-snapshot"), ("no_report", "--no-report"), ("report_dir", "--validation-report"),
               ("show_keys", "--show-keys"), ("marks", "--marks"), ("compare", "--compare"))


def _follow(kw: dict[str, Any], opts: dict[str, Any], output: str, verbose: bool) -> None:
    """``validate --follow``: the follower's options checked before any network call, then its run
    (:func:`.follow.run.follow`), printed by the one renderer."""
    given = [flag for key, flag in (("mark", "--mark"), ("interval", "--interval"), ("metrics_port", "--metrics-port"),
                                    ("metrics_bind", "--metrics-bind"), ("once", "--once")) if opts[key] not in (None, False)]
    if not opts["follow"]:
        raise UsageError(given[0], "applies to --follow only", f"add --follow, or drop {given[0]}")
    on = kw.pop("on", "local")
    for key, flag in _BATCH_ONLY:
        if kw.get(key) not in (None, False, ()):
            raise UsageError(flag, "is a batch option: the follower compares every record past its mark",
                             f"drop {flag}, or drop --follow")
    if kw.get("compacted") == "latest-per-key":
        raise UsageError("--compacted", "latest-per-key is compared by the batch validator only",
                         "drop --follow, or follow with --compacted records")
    chained = kw.get("engine") == "spark"  # the follower's logic as one Spark batch run on the mark (follow/chain_run.py)
    if on != "local" and not chained:
        raise UsageError("--on", f"a job run on {on} is the follower's chained Spark run",
                         "add --engine spark, or drop --on to follow here (or as the stack's follower service)")
    if chained and not opts["once"] and on == "local":
        raise UsageError("--engine spark", "the Spark follower is one chained batch run per start, not a long-running process",
                         "add --once and start it on a schedule (each run starts from the mark the last one wrote)")
    if chained and (opts["metrics_port"] is not None or opts["metrics_bind"] is not None):
        flag = "--metrics-port" if opts["metrics_port"] is not None else "--metrics-bind"
        raise UsageError(flag, "a chained Spark run serves no metrics endpoint (the follower service does)",
                         f"drop {flag}, or follow with --engine native")
    if chained and kw.get("allow_duplicates"):
        raise UsageError("--allow-duplicates", "the chained Spark run compares every record in order (no duplicates pass-over)",
                         "drop --allow-duplicates, or follow with --engine native")
    cfg = None
    if on != "local":
        from .emr_run import environment
        from .remote_follow import HOMES, mark_location

        cfg = environment(kw, f"--on {on}", HOMES[on][0] + (" job" if on == "glue" else " application"))
        opts["mark"] = mark_location(cfg, opts["mark"])
    kw["no_report"] = True
    request = build_request(kw)
    if request.marks is not None:  # its digests would compare every copy with its mark: a mismatch on every record
        raise UsageError("--follow", "the flow marks its copies (migration.mark_copies) and the follower does not account "
                         "for copy marks", "validate in batch (drop --follow): it removes exactly the mark")
    if cfg is not None:
        _follow_on(on, cfg, request, opts, output)
        return
    migration, ledger = "validate", None
    if kw.get("env") or kw.get("config") or kw.get("local"):
        flow = _flow_clusters(kw)[2]
        migration, ledger = flow.migration.name, flow.ledger_location
    from ..render import render
    from .follow.fences import fenced_ends
    from .follow.follower import FollowOptions
    from .follow.progress import follow_progress
    from .follow.run import follow

    fo = FollowOptions(mark=opts["mark"] or _DEFAULT_MARK, migration=migration,
                       interval=opts["interval"] if opts["interval"] is not None else 10.0, once=bool(opts["once"]),
                       metrics_port=opts["metrics_port"], metrics_bind=opts["metrics_bind"] or "127.0.0.1", verbose=verbose,
                       fences=partial(fenced_ends, ledger, migration) if ledger else None)
    con = human(output)
    show = con.is_terminal or output == "text"
    with (_client_logs_to_stderr(None) if verbose else nullcontext()), \
            (follow_progress(con) if show else nullcontext(quiet)) as say:
        if chained:
            from .follow.chain_run import follow_chained

            outcome = follow_chained(request, fo, None, say)
        else:
            outcome = follow(request, fo, say)
    render(outcome, output)


def _follow_on(on: str, cfg: Any, request: Any, opts: dict[str, Any], output: str) -> None:
    """``--follow --engine spark --on <home>``: chained runs as job runs of the stack (:mod:`.remote_follow`)."""
    from ..render import render
    from .remote_follow import HOMES, follow_on

    con = human(output)
    with con.status(HOMES[on][0]) as status:
        def say(message: str) -> None:
            status.update(message)
            con.print(message)

        outcome = follow_on(on, cfg, request, opts["mark"], once=bool(opts["once"]),
                            interval=opts["interval"] if opts["interval"] is not None else 10.0, say=say)
    render(outcome, output)


@contextmanager
def _client_logs_to_stderr(spark: Any) -> Iterator[None]:
    """--verbose: librdkafka's lines (the one client logger of access.admin) on stderr for this run only."""
    import logging

    from . import spark_local
    from .kafka_meta import client_logger

    spark_local.VERBOSE = True  # a local session started later logs Spark's WARN lines to stderr
    log = client_logger()
    handler = logging.StreamHandler(sys.stderr)
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.DEBUG)
    if spark is not None:
        spark.sparkContext.setLogLevel("WARN")
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


def run_cli(argv: list[str], spark: Any = None) -> int:
    """Run ``validate`` with ``argv`` behind the one error boundary (:func:`cliutil.run_cli`); returns
    the exit code (0/1/2) instead of exiting: one-line ``error: ...`` on stderr, like ``msk-migrate``."""
    return cliutil.run_cli(validate, argv, "msk-migrate validate", obj={"spark": spark})


def main() -> None:
    sys.exit(run_cli(sys.argv[1:]))


if __name__ == "__main__":
    main()
