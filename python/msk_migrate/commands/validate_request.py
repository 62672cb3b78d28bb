"""``validate``'s options as one checked :class:`~msk_migrate.validation.request.ValidationRequest`, built once.

Where the clusters come from (exactly one): ``--env``/``--config``/``--local`` (the shared flow resolver,
:func:`.flow.resolve_flow`, as every runbook command), ``--clusters FILE``, or the ``--source-*``/``--target-*``
options. A flow also gives the default topic selection (its migration's regexes and excludes), its renames,
its MSK cluster ARNs, its schema registries and its copy marks. Every refusal is a UsageError naming the option,
raised before any network call; the request then travels as it is (local run, follower) or as one document
(:mod:`msk_migrate.validation.job_request`: EMR Serverless, Glue, ``--job-request``).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import yaml

from ..config.auth import AuthConfig
from ..config.flow import VARIABLES, Flow
from ..config.loader import validate_model
from ..config.migration import ClusterEndpoint
from ..errors import UsageError
from ..validation.request import DEFAULT_EXCLUDES, ValidationRequest, load_snapshot, parse_timestamp
from .flow import resolve_flow


def _endpoint(role: str, kw: dict[str, Any]) -> ClusterEndpoint:
    bootstrap = kw[f"{role}_bootstrap"]
    if not bootstrap:
        raise UsageError(f"--{role}-bootstrap", "required", "pass host:port[,host:port] or --clusters FILE")
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
        # Name the command-line option: bootstrap_servers -> --source-bootstrap, etc.
        field = exc.field.split(".")[-1] if exc.field and exc.field != "config" else "auth"
        field = {"mode": "auth", "bootstrap_servers": "bootstrap"}.get(field, field)
        raise UsageError(f"--{role}-{field.replace('_', '-')}", exc.message, exc.fix) from None


def _clusters_file(path: str | Path) -> tuple[ClusterEndpoint, ClusterEndpoint]:
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


def validate_flow(kw: dict[str, Any]) -> Flow:
    """``--env`` / ``--config`` / ``--local``: the flow of the shared resolver (:func:`.flow.resolve_flow`), whose
    clusters, auth and secrets replace the ``--source-*``/``--target-*`` options; an environment's target
    bootstrap servers come from ``--target-bootstrap`` (or MSK_MIGRATE_TARGET_BOOTSTRAP), the stack output."""
    given = [opt for opt, key in (("--clusters", "clusters"), ("--source-bootstrap", "source_bootstrap"),
                                  ("--source-secret-arn", "source_secret_arn"), ("--target-secret-arn", "target_secret_arn"),
                                  ("--source-ca-secret-arn", "source_ca_secret_arn"),
                                  ("--target-ca-secret-arn", "target_ca_secret_arn")) if kw.get(key)]
    # --local beside --env/--config names the local worker, as for every runbook command; the clusters are the file's
    chosen = "--env" if kw.get("env") else "--config" if kw.get("config") else "--local"
    if given:
        raise UsageError(chosen, f"given together with {', '.join(given)}",
                         f"the clusters, auth and secrets come from {chosen}; drop {given[0]}")
    if chosen == "--local" and kw.get("target_bootstrap"):
        raise UsageError("--target-bootstrap", "the local environment names the target's bootstrap servers", "drop it")
    # the exported variable, as every runbook command's --target-bootstrap takes it: checked against --env's record
    # and region (:func:`msk_migrate.config.flow.check_variables`), a leftover of another environment refused
    exported = None if kw.get("target_bootstrap") else os.environ.get(VARIABLES["target_bootstrap"])
    target_bootstrap = kw.get("target_bootstrap") or exported
    config = Path(kw["config"]) if kw.get("config") else None
    flow = resolve_flow(kw.get("env"), config, bool(kw.get("local")), None, target_bootstrap if kw.get("env") else None,
                        kw.get("local_dir"), {"target_bootstrap"} if exported else set())
    if config and kw.get("target_bootstrap"):
        raise UsageError("--target-bootstrap", "the flow file names the target's bootstrap servers", "drop it")
    flow.require_target("validate")
    return flow


def _copy_marks(kw: dict[str, Any], flow: Flow | None) -> dict[str, str | None] | None:
    """``--copy-marks SRC[,TGT]``, else the flow's own aliases when its migration marks its copies (``mark_copies``)."""
    if kw.get("marks"):
        src, tgt = kw["marks"]
        return {"source_alias": src, "target_alias": tgt}
    if flow is not None and getattr(flow.migration, "mark_copies", False):
        target = flow.require_target("validate")
        return {"source_alias": flow.source.alias, "target_alias": target.alias}
    return None


def _registries(kw: dict[str, Any], flow: Flow | None) -> dict[str, str] | None:
    """The registries whose ids the records carry, by the one resolver
    (:func:`msk_migrate.schemas.registries.resolve_registries`) under validate's option rule: its two registry
    options both or neither, and the flow's own (its file's section, or ``--local``'s registries) consulted only
    without them. None when none is named (the proof per record then reports schema'd topics as not checked,
    docs/schema-proof.md)."""
    from .schemas import registries_from_options

    src, tgt = kw.get("source_registry"), kw.get("target_registry")
    if bool(src) != bool(tgt):
        missing = "--target-registry" if src else "--source-registry"
        raise UsageError(missing, "one registry given without the other", f"give {missing} URL too")
    regs = registries_from_options({"source_url": src, "target_url": tgt}, flow=None if src else flow)
    return regs.urls() if regs is not None else None


def _wave_selection(kw: dict[str, Any], flow: Flow | None, topics: list[str]) -> None:
    """``--wave``: the wave's topics among the migration's (MM2's full-match semantics, as the wave is checked:
    msk_migrate.config.waves), as the topic regex; refused without a flow or beside another topic selection."""
    from ..config.waves import check_wave_name

    if flow is None:
        raise UsageError("--wave", "names a wave of a flow's migration and no flow was given", "add --env NAME, --config FILE or --local")
    for option, key in (("--topic", "topics"), ("--topic-regex", "topic_regex"), ("--offsets-snapshot", "offsets_snapshot")):
        if kw.get(key):
            raise UsageError(f"--wave/{option}", "give one topic selection", f"drop {option}: --wave selects the wave's topics")
    check_wave_name(flow.migration, kw["wave"])
    selection = "|".join(f"(?:{r})" for r in flow.migration.topics)
    wave = "|".join(f"(?:{r})" for r in flow.migration.waves[kw["wave"]])
    kw["topic_regex"] = f"(?=(?:{selection})\\Z)(?:{wave})"
    if not kw.get("exclude_regex"):
        kw["exclude_regex"] = (*DEFAULT_EXCLUDES, *flow.migration.topics_exclude)
    del topics[:]


def _clusters(kw: dict[str, Any]) -> tuple[ClusterEndpoint, ClusterEndpoint, Flow | None]:
    """The two clusters (and the flow, when one gave them): a flow, ``--clusters FILE`` or the per-side options."""
    if kw.get("env") or kw.get("config") or kw.get("local"):
        flow = validate_flow(kw)
        assert flow.target is not None  # validate_flow requires it
        return flow.source, flow.target, flow
    if kw.get("clusters"):
        if kw.get("source_bootstrap") or kw.get("target_bootstrap"):
            raise UsageError("--clusters", "given together with --source/--target-bootstrap", "use one of them")
        return (*_clusters_file(kw["clusters"]), None)
    return _endpoint("source", kw), _endpoint("target", kw), None


def _check_combinations(kw: dict[str, Any], data: dict[str, Any]) -> None:
    """Options that contradict each other: an empty window, Spark tuning without Spark, a snapshot beside a window."""
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
    if kw.get("offsets_snapshot") and (frm is not None or until is not None):
        raise UsageError(
            "--offsets-snapshot", "given together with --from-timestamp/--until-timestamp",
            "use either the snapshot or a time window",
        )


def _compare(kw: dict[str, Any], data: dict[str, Any], marks: dict[str, str | None] | None) -> str:
    """How records are compared. Where copies are marked (the flow's ``mark_copies`` or ``--copy-marks``) a topic may be
    written from both sides, so it is compared as each origin's records, a multiset per partition, without being
    asked: an order comparison there gives the wrong verdict the moment both directions write, so it is refused."""
    asked = kw.get("compare")
    if marks is not None and marks["target_alias"] is not None:
        if asked == "records":
            raise UsageError("--compare records", "copies are marked here (migration.mark_copies or --copy-marks), so a topic "
                             "may hold records of both origins, and one order per partition would call their interleaving "
                             "a difference", "drop --compare: marked copies are compared per origin (multiset)")
        if data["mode"] == "full":
            raise UsageError("--mode full", "marked copies are compared per origin by the checksum pass; the full diff "
                             "compares one order per partition", "use --mode auto or checksum")
        return "multiset"
    if asked == "multiset":
        raise UsageError("--compare multiset", "tells each record's origin by its copy mark, and no marks are known",
                         "give --copy-marks SOURCE_ALIAS,TARGET_ALIAS, or a flow whose migration has mark_copies: true")
    return asked or "records"


def build_request(kw: dict[str, Any]) -> ValidationRequest:
    """The command's options as a validated :class:`ValidationRequest` (UsageError on bad input)."""
    source, target, flow = _clusters(kw)
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
    _check_combinations(kw, data)
    if kw.get("offsets_snapshot"):
        data["offsets_snapshot"] = load_snapshot(kw["offsets_snapshot"])
    if not kw.get("no_report"):
        data["report_dir"] = kw.get("report_dir") or str(
            Path("reports") / f"validation-{dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%SZ')}"
        )
    registries = _registries(kw, flow)
    if registries:
        data["schema_registry"] = registries
    marks = _copy_marks(kw, flow)
    if marks is not None:
        data["marks"] = marks
    data["compare"] = _compare(kw, data, marks)
    data["ignore_schemas"] = bool(kw.get("ignore_schemas"))
    data["show_keys"] = bool(kw.get("show_keys"))
    return ValidationRequest(**data)  # a refusal is a UsageError naming the option (request.OPTIONS)
