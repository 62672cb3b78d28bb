"""Runbook commands: preflight, lag, offsets verify|sync, cutover check, rollback plan|apply, cleanup, rehearse.

Every command reads ONE flow (``--env``, ``--config`` or ``--local``; see :mod:`.context`), states which
clusters and worker it talks to, and exits 0 (ok / in sync / ready), 1 (not yet) or 2 (bad input,
unreachable: one line, nothing changed).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.table import Table

from ..aws.preflight_task import in_vpc_options
from ..cliutil import emit_json, emit_json_stream, human, json_document, output_option
from ..config.flow import Flow
from ..errors import UsageError
from ..kafka.names import SOURCE_CONNECTOR_CLASS, checkpoints_topic, connector_namespace, offset_syncs_topic
from ..tables import colour, table
from .flow import announce, flow_from_kwargs, flow_options, talked_to
from .local import shape_options  # the rehearsal takes `local up`'s shape options


def _sessions(flow: Flow, need_target: bool = True):
    from ..access.admin import AdminSession

    target = flow.require_target("this command") if need_target else None  # before any connection
    src = AdminSession.for_endpoint("source", flow.source)
    tgt = AdminSession.for_endpoint("target", target) if target is not None else None
    flow.verify_clusters(src, tgt)  # the environment's recorded target, the worker's cluster (exit 2)
    return src, tgt


def _migration(flow: Flow, src, tgt, client=None):
    """The :class:`MigrationSession` the runbook functions take: this flow, its two sessions, its worker."""
    from ..runbook.session import MigrationSession

    target = flow.require_target("this command")
    return MigrationSession(flow.migration, flow.worker, src, tgt, flow.source.alias, target.alias, client)


def _connect(flow: Flow, allow_absent: bool = False):
    from ..connect_api.rest import client_for, verify_worker

    client = client_for(flow)
    verify_worker(flow, client, allow_absent)  # this migration's connectors between this flow's clusters, or none (exit 2)
    return client


# ---- preflight -------------------------------------------------------------------------------------
@click.command("preflight")
@flow_options
@output_option
@in_vpc_options
def preflight(output: str, in_vpc_opts: dict, **kw) -> None:
    """Check the clusters before replication: reachability, topics, partitions, RF, groups. Before deploy
    (no target bootstrap yet) only the source side is checked. Exit 1 on a failed check, 2 when MM2's user
    lacks a source ACL (the line names it and the grant). --in-vpc runs the
    same preflight as a one-off ECS task with the Connect service's network and task role."""
    from ..runbook.preflight import run_preflight
    from ..runbook.preflight_acls import NAME as ACLS_CHECK

    flow_file, flag = (kw.get("config"), "--config") if kw.get("config") else (kw.get("env"), "--env")
    target_bootstrap = kw.get("target_bootstrap")
    flow = flow_from_kwargs(kw)
    announce(flow, output)
    con = human(output)
    if in_vpc_opts.pop("in_vpc"):
        from ..aws.preflight_task import print_in_vpc
        from ..config.flow import environment_path

        if not flow_file:
            raise UsageError("--in-vpc", "needs the flow's file", "pass --env NAME or --config FILE (not --local)")
        path = Path(flow_file) if flag == "--config" else environment_path(str(flow_file))
        sys.exit(print_in_vpc(path, con, output, flag=flag, target_bootstrap=target_bootstrap, **in_vpc_opts))
    with con.status("running preflight checks"):
        rep = run_preflight(flow.source, flow.target, flow.migration, flow.worker)
    # MM2's user lacking a source ACL is a fix of the input (grant it), not a state of the clusters: exit 2.
    acl = next((c for c in rep.checks if c.name == ACLS_CHECK and c.status == "fail"), None)
    code = 0 if rep.ok else 2 if acl else 1
    if output == "json":
        emit_json({**rep.to_dict(), **json_document(talked_to(flow), rep.to_dict()["checks"], "ok" if rep.ok else "failed", code)})
        sys.exit(code)
    t = table("preflight", ("check", "status", "detail"))
    tint = {"ok": "green", "warn": "yellow", "fail": "red", "skip": "cyan"}
    for c in rep.checks:
        t.add_row(c.name, f"[{tint[c.status]}]{c.status}[/]", c.detail)
    con.print(t)
    if acl is not None:
        raise UsageError(ACLS_CHECK, acl.detail)
    sys.exit(code)


# ---- offsets -------------------------------------------------------------------------------------
def offsets_table(rows: list[dict]):
    t = table("consumer group offsets (source -> target)",
              ("group", "topic", "p", "source committed/end", "target committed/end", "re-delivery", "status"),
              numeric=("p", "source committed/end", "target committed/end", "re-delivery"))
    for r in rows:
        t.add_row(r["group"], r["topic"], str(r["partition"]), f"{r['source_committed']}/{r['source_end']}",
                  f"{r['target_committed']}/{r['target_end']}", str(r["redelivery"]), colour(r["status"] == "ok", r["status"]))
    return t


#: Above this many rows the text output summarises per topic (every row stays in --output json).
DETAIL_ROWS = 50


def offsets_summary_table(summary) -> Table:
    t = table("consumer group offsets per topic (source -> target), not-ok first",
              ("topic", "groups", "partitions", "not ok", "max re-delivery", "worst"),
              numeric=("groups", "partitions", "not ok", "max re-delivery"))
    for s in summary.topics():
        worst = ", ".join(f"{r.group}[{r.partition}] {r.status}" + (f" {r.redelivery}" if r.redelivery is not None else "")
                          for r in s.worst) or "-"
        t.add_row(s.topic, str(s.groups), str(s.rows), colour(s.bad == 0, str(s.bad)), str(s.max_redelivery), worst)
    return t


def _verify(output: str, groups: tuple[str, ...], kw: dict) -> None:
    from ..runbook.group_offsets import OffsetSummary, iter_offset_rows

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    src, tgt = _sessions(flow)
    summary = OffsetSummary(keep=DETAIL_ROWS)
    rows = summary.feed(iter_offset_rows(src, tgt, flow.migration, list(groups) or None))
    if output == "json":
        emit_json_stream({"talked_to": talked_to(flow)}, rows,
                         lambda: {"verdict": summary.verdict(), "exit_code": summary.exit_code(),
                                  "in_sync": summary.exit_code() == 0})
    else:
        for _ in rows:
            pass
        con = human(output)
        con.print(offsets_table([r.to_dict() for r in summary.kept]) if summary.count <= DETAIL_ROWS else offsets_summary_table(summary))
        con.print(f"{summary.count} group-partition(s) of {summary.group_count} group(s): {summary.verdict()}", highlight=False)
    sys.exit(summary.exit_code())


@click.group("offsets", invoke_without_command=True)
@flow_options
@click.option("--group", "groups", multiple=True, help="Only these groups (default: the migration's group regexes).")
@output_option
@click.pass_context
def offsets(ctx: click.Context, groups: tuple[str, ...], output: str, **kw) -> None:
    """Consumer-group offsets on the target (`offsets` alone = `offsets verify`)."""
    if ctx.invoked_subcommand is None:
        _verify(output, groups, kw)


@offsets.command("verify")
@flow_options
@click.option("--group", "groups", multiple=True, help="Only these groups (default: the migration's group regexes).")
@output_option
def offsets_verify(groups: tuple[str, ...], output: str, **kw) -> None:
    """Translated offsets never ahead of the source (exit 1 otherwise), with the re-delivery per partition."""
    _verify(output, groups, kw)


@offsets.command("sync")
@flow_options
@click.option("--group", required=True, help="The stopped consumer group to move now.")
@click.option("--to", "to", type=click.Choice(["target", "source"]), default="target", show_default=True,
              help="target: cutover (source commits placed on the target); source: rollback after reverse replication.")
@click.option("--exact-only", is_flag=True, help="Refuse (exit 2, nothing written) unless every partition is proven exact.")
@click.option("--dry-run", is_flag=True, help="Show the placement and its proof; write nothing.")
@click.option("--force", is_flag=True, help="Also move offsets backwards where the group is already further on that cluster.")
@click.option("--certificate", "certificate", help="Write the proof (JSON + HTML) to this path, directory or s3://bucket/prefix.")
@output_option
def offsets_sync(group: str, to: str, exact_only: bool, dry_run: bool, force: bool, certificate: str | None,
                 output: str, **kw) -> None:
    """Place a stopped group on the other cluster exactly: per partition, the offset of the first record after
    its commit point, found by content (docs/design.md, exact offset translation). Unproven partitions fall
    back to MM2's checkpoint and say why (--exact-only refuses instead). Exit 0 every partition exact, 1 some
    placed on the checkpoint or left, 2 bad input (nothing written)."""
    from ..offset_translation.sync import sync_group

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    src, tgt = _sessions(flow)
    target_alias = flow.require_target("offsets sync").alias
    con = human(output)
    with con.status(f"placing {group} on the {to} by content"):
        res = sync_group(flow.migration, src, tgt, flow.source.alias, target_alias, group, to, exact_only, dry_run,
                         force, certificate)
    rows = res.rows()
    if output == "json":
        emit_json(json_document(talked_to(flow), rows, res.certificate["verdict"], 0 if res.exact else 1,
                                group=group, direction=res.direction, dry_run=dry_run, written=res.written,
                                exact=res.exact, totals=res.certificate["totals"], certificate=res.locations,
                                exit="0 every partition exact; 1 some on MM2's checkpoint or left as they were"))
    else:
        t = table(f"offsets sync {group} ({res.direction})" + (" (dry run)" if dry_run else ""),
                  ("topic", "p", "commit", "current", "placed", "method", "re-delivered", "action", "why"),
                  numeric=("p", "commit", "current", "placed", "re-delivered"))
        for r in rows:
            t.add_row(r["topic"], str(r["partition"]), str(r["commit"]), str(r["current"]), str(r["translated"]),
                      colour(r["method"] == "exact", r["method"]), "-" if r["redelivery"] is None else str(r["redelivery"]),
                      colour(r["action"] not in ("backwards-refused", "none"), r["action"]), r["reason"])
        con.print(t)
        tot = res.certificate["totals"]
        con.print(f"{'would write' if dry_run else 'wrote'} {res.written if not dry_run else sum(r['action'] in ('write', 'backwards-forced') for r in rows)} "
                  f"partition(s); {tot['exact']}/{tot['partitions']} exact, {tot['redelivered']} record(s) re-delivered by identity"
                  + (f"; certificate {', '.join(res.locations)}" if res.locations else ""), highlight=False, soft_wrap=True)
    sys.exit(0 if res.exact else 1)


@offsets.command("snapshot")
@flow_options
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Where to write {topic: {partition: end offset}} (the input of `validate --offsets-snapshot`).")
@click.option("--topic", "topics", multiple=True, help="Only these source topics (default: the migration's).")
def offsets_snapshot(out: Path, topics: tuple[str, ...], **kw) -> None:
    """Snapshot the source's last stable offsets of the migrated topics (take it after producers stopped)."""
    import json as _json

    from ..access.offsets import last_stable_offsets, partitions
    from ..kafka.selection import topic_selection

    flow = flow_from_kwargs(kw)
    announce(flow)
    src, _ = _sessions(flow, need_target=False)
    chosen = topic_selection(flow.migration).select(src.topics())
    if topics:
        unknown = [t for t in topics if t not in chosen]
        if unknown:
            raise UsageError("--topic", f"{unknown[0]} is not a migrated topic of the source", "name a topic the flow replicates")
        chosen = list(topics)
    ends = last_stable_offsets(src, partitions(src, chosen))
    snap: dict[str, dict[str, int]] = {}
    for (t, p), o in sorted(ends.items()):
        snap.setdefault(t, {})[str(p)] = o
    try:
        out.write_text(_json.dumps(snap, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise UsageError("--out", f"cannot write {out}: {exc.strerror}", "give a writable path") from None
    human("text").print(f"{len(ends)} partition(s) of {len(snap)} topic(s) written to {out}", highlight=False)


# ---- lag -------------------------------------------------------------------------------------------
def lag_table(rows: list) -> Table:
    """Up to :data:`DETAIL_ROWS` partitions: one row each; more: one row per topic, topics behind first
    with their worst partitions (every partition stays in --output json)."""
    if len(rows) > DETAIL_ROWS:
        return lag_summary_table(rows)
    t = table("replication lag (source -> target)",
              ("topic", "p", "source LSO", "replicated", "behind", "age s", "latency s", "status"),
              numeric=("p", "source LSO", "replicated", "behind", "age s", "latency s"))
    for r in rows:
        t.add_row(r.topic, str(r.partition), str(r.source_lso), str(r.replicated),
                  str(r.behind) if r.exact else f"<={r.behind}", "-" if r.newest_age_s is None else str(r.newest_age_s),
                  "-" if r.latency_s is None else str(r.latency_s), colour(r.status == "in-sync", r.status))
    return t


def lag_summary_table(rows: list) -> Table:
    from ..runbook.lag import summarize

    topics = summarize(rows)
    behind = sum(1 for s in topics if s.behind_partitions)
    t = table(f"replication lag per topic (source -> target): {len(rows)} partitions of {len(topics)} topics, "
              f"{behind} topic(s) behind, worst first",
              ("topic", "partitions", "behind p", "behind", "latency s", "worst partitions"),
              numeric=("partitions", "behind p", "behind", "latency s"))
    for s in topics[:DETAIL_ROWS]:
        worst = ", ".join(f"[{r.partition}] {r.behind if r.exact else f'<={r.behind}'}" for r in s.worst) or "-"
        t.add_row(s.topic, str(s.partitions), colour(s.behind_partitions == 0, str(s.behind_partitions)),
                  str(s.behind) if s.exact else f"<={s.behind}", "-" if s.max_latency_s is None else str(s.max_latency_s), worst)
    if len(topics) > DETAIL_ROWS:
        rest = topics[DETAIL_ROWS:]
        t.add_row(f"... {len(rest)} more topic(s)", str(sum(s.partitions for s in rest)),
                  str(sum(s.behind_partitions for s in rest)), str(sum(s.behind for s in rest)), "-", "--output json: every partition")
    return t


@click.command("lag")
@flow_options
@click.option("--topic", "topics", multiple=True, help="Only these source topics.")
@click.option("--max-records", default=0, show_default=True, type=click.IntRange(min=0),
              help="Records a partition may be behind and still count as in sync.")
@click.option("--max-age", type=click.FloatRange(min=0), default=None,
              help="Seconds the target's newest record may trail the source's (default: not checked).")
@click.option("--watch", is_flag=True, help="Refresh a live table until in sync (or --timeout).")
@click.option("--interval", default=5.0, show_default=True, type=click.FloatRange(min=0.5), help="Seconds between refreshes.")
@click.option("--timeout", default=0.0, show_default=True, type=click.FloatRange(min=0), help="--watch gives up after this many seconds (0 = never).")
@output_option
def lag(topics, max_records, max_age, watch, interval, timeout, output, **kw) -> None:
    """Per topic and partition: source LSO, replicated position, records behind, newest record age.
    Exit 0 when every partition is within the thresholds (in sync), 1 otherwise."""
    from ..runbook.lag import measure_lag

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    src, tgt = _sessions(flow)
    client = _connect(flow)

    def measure():
        return measure_lag(_migration(flow, src, tgt, client), list(topics) or None, max_records, max_age)

    rows = measure()
    if watch and output != "json":
        from rich.live import Live

        deadline = time.time() + timeout if timeout else None
        with Live(lag_table(rows), console=human(output), refresh_per_second=2) as live:
            while any(r.status != "in-sync" for r in rows) and (deadline is None or time.time() < deadline):
                time.sleep(interval)
                rows = measure()
                live.update(lag_table(rows))
    ok = bool(rows) and all(r.status == "in-sync" for r in rows)
    if output == "json":
        emit_json(json_document(talked_to(flow), rows, "in-sync" if ok else "behind", 0 if ok else 1, in_sync=ok))
    elif not watch:
        human(output).print(lag_table(rows))
    if not rows:
        human(output).print("no topic of the migration on the source")
    sys.exit(0 if ok else 1)


# ---- cutover ---------------------------------------------------------------------------------------
@click.group("cutover")
def cutover() -> None:
    """Decide whether consumer groups can move to the target."""


@cutover.command("check")
@flow_options
@click.option("--group", "groups", multiple=True, required=True, help="Consumer group(s) about to move.")
@click.option("--max-records", default=0, show_default=True, type=click.IntRange(min=0), help="Lag bound per partition.")
@click.option("--max-age", type=click.FloatRange(min=0), default=None, help="Replication latency bound in seconds.")
@click.option("--max-redelivery", default=1000, show_default=True, type=click.IntRange(min=0),
              help="Records a moved group may see again, per partition.")
@click.option("--validation-report", "report", help="report.json (or its directory / s3:// prefix) of `msk-migrate validate`.")
@click.option("--max-report-age", default=60.0, show_default=True, type=click.FloatRange(min=0),
              help="Minutes since the validation finished.")
@click.option("--certificate", "certificate", help="Also require the offset certificate of `offsets sync` (path, directory or s3://).")
@output_option
def cutover_check_cmd(groups, max_records, max_age, max_redelivery, report, max_report_age, certificate, output, **kw) -> None:
    """One readiness gate: connectors and tasks RUNNING, lag within bounds, translated offsets never ahead
    and re-delivery bounded, group inactive on the target, a fresh matching validation report.
    Exit 0 ready, 1 not ready (with the reasons)."""
    from ..runbook.cutover import cutover_check

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    client = _connect(flow)
    src, tgt = _sessions(flow)
    conds = cutover_check(_migration(flow, src, tgt, client), list(groups), max_records=max_records, max_age=max_age,
                          max_redelivery=max_redelivery, report=report, max_report_age_s=max_report_age * 60,
                          certificate=certificate)
    ready = all(c.ok for c in conds)
    if output == "json":
        emit_json(json_document(talked_to(flow), conds, "ready" if ready else "not-ready", 0 if ready else 1,
                                ready=ready, groups=list(groups), conditions=[c.to_dict() for c in conds]))
    else:
        t = table(f"cutover check: {', '.join(groups)}", ("condition", "result", "evidence"))
        for c in conds:
            t.add_row(c.name, colour(c.ok, "ok" if c.ok else "NOT READY"), c.evidence)
        con = human(output)
        con.print(t)
        con.print(colour(ready, "ready to move" if ready else "not ready: " + "; ".join(c.name for c in conds if not c.ok)))
    sys.exit(0 if ready else 1)


# ---- rollback --------------------------------------------------------------------------------------
@click.group("rollback")
def rollback() -> None:
    """Reverse replication target -> source for topics whose producers moved."""


def _rollback_plan(topics, kw, output):
    from ..runbook.rollback import plan

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    target = flow.require_target("rollback")
    src, tgt = _sessions(flow)
    return flow, src, tgt, plan(flow.source, target, flow.migration, list(topics), src, tgt)


def _print_plan(p, output: str, applied: bool, talked: dict | None = None) -> None:
    if output == "json":
        rows = [{"connector": n, "direction": "reverse", **c} for n, c in p.reverse.items()]
        emit_json({"applied": applied, **p.to_dict(), **json_document(talked, rows, "applied" if applied else "planned", 0)})
        return
    con = human(output)
    con.print(f"forward flow: topics_exclude += {', '.join(p.forward_exclude_added)}")
    t = table("reverse connectors (target -> source)", ("connector", "topics", "offset syncs / checkpoints on source"))
    for name, cfg in p.reverse.items():
        alias = cfg["source.cluster.alias"]
        is_source = cfg["connector.class"] == SOURCE_CONNECTOR_CLASS
        t.add_row(name, cfg.get("topics", "-") if is_source else cfg.get("groups", "-"),
                  offset_syncs_topic(alias, cfg["target.cluster.alias"], namespace=connector_namespace(cfg)) if is_source
                  else checkpoints_topic(alias, connector_namespace(cfg)))
    con.print(t)
    if p.start:
        con.print("reverse starts at target offsets: " + ", ".join(f"{k}={v}" for k, v in p.start.items()))
    con.print("applied" if applied else "plan only: `msk-migrate rollback apply` with the same options makes it")


@rollback.command("plan")
@flow_options
@click.option("--topic", "topics", multiple=True, required=True, help="Source topic whose producers moved (repeat).")
@output_option
def rollback_plan(topics, output, **kw) -> None:
    """Show the forward exclusion and the reverse connectors for TOPIC(s); change nothing."""
    flow, _, _, p = _rollback_plan(topics, kw, output)
    _print_plan(p, output, applied=False, talked=talked_to(flow))


@rollback.command("apply")
@flow_options
@click.option("--topic", "topics", multiple=True, required=True, help="Source topic whose producers moved (repeat).")
@click.option("--timeout", default=180.0, show_default=True, type=click.FloatRange(min=1), help="Seconds to wait for RUNNING.")
@output_option
def rollback_apply(topics, timeout, output, **kw) -> None:
    """Stop the forward flow for TOPIC(s), then replicate them target -> source from the producers' first
    record on the target, with checkpoints for the groups that move back."""
    from ..runbook.rollback import apply_rollback

    flow, src, tgt, p = _rollback_plan(topics, kw, output)
    client = _connect(flow)
    con = human(output)
    with con.status("rolling back") as sp:
        apply_rollback(_migration(flow, src, tgt, client), p, timeout, sp.update)
    _print_plan(p, output, applied=True, talked=talked_to(flow))


# ---- cleanup ---------------------------------------------------------------------------------------
@click.command("cleanup")
@flow_options
@click.option("--include-worker-topics", is_flag=True, help="Also the Connect worker's topics and group (after the service is gone).")
@click.option("--yes", is_flag=True, help="Delete what is listed (without it: list only).")
@output_option
def cleanup(include_worker_topics: bool, yes: bool, output: str, **kw) -> None:
    """List MM2/Connect topics and groups left on the target after cutover; delete them only with --yes."""
    from ..runbook.cleanup import delete, leftovers, require_no_connectors, shared_topics

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    target = flow.require_target("cleanup")
    if yes and not flow.connect_url:
        raise UsageError("--connect-url", "cleanup --yes deletes only after the worker shows none of the "
                         "migration's connectors (forward or reverse) exists, and no worker was given",
                         "pass --connect-url https://HOST:8083 (or --local); without --yes cleanup only lists")
    client = _connect(flow, allow_absent=True) if flow.connect_url else None
    if client is not None:
        require_no_connectors(client, flow.migration)
    src, tgt = _sessions(flow)
    items = leftovers(_migration(flow, src, tgt, client), include_worker_topics, shared_topics(client, flow.migration))
    if yes:
        delete(tgt, items)
    if output == "json":
        emit_json(json_document(talked_to(flow), items, "deleted" if yes else "listed", 0, deleted=yes,
                                items=[i.to_dict() for i in items]))
        return
    con = human(output)
    t = table(f"left on the target {target.bootstrap_servers}", ("kind", "name", "why"))
    for i in items:
        t.add_row(i.kind, i.name, i.why)
    con.print(t)
    n = sum(i.kind != "kept" for i in items)
    con.print(f"deleted {n} item(s)" if yes else f"{n} item(s); nothing deleted (pass --yes to delete)")
# ---- rehearse --------------------------------------------------------------------------------------
@click.command("rehearse")
@click.option("--no-monitoring", is_flag=True, help="Do not start Prometheus.")
@click.option("--no-validate", is_flag=True, help="Skip the Spark validation steps.")
@click.option("--worker", type=click.Choice(["local", "image"]), default="local", show_default=True,
              help="image: run the Connect worker from the kafka-connect image built with buildah (docs/images.md).")
@shape_options
@output_option
def rehearse(no_monitoring: bool, no_validate: bool, worker: str, source_kafka: str | None, source_brokers: int,
             target_brokers: int, source_security: str, broker_heap: str, output: str) -> None:
    """Walk the whole runbook on local clusters: preflight, apply, lag, validate, cutover check, move a
    group, move producers, reverse replication, roll a group back, validate in reverse, cleanup.
    The shape options choose the clusters (e.g. --source-kafka 2.8.2 --source-brokers 3 --target-brokers 3)."""
    from ..local.shape import make_shape
    from ..rehearsal import rehearse as run

    shape = make_shape(source_kafka, source_brokers, target_brokers, source_security, broker_heap)  # before anything starts
    con = human(output)
    with con.status("rehearsal") as sp:
        res = run(say=sp.update, with_monitoring=not no_monitoring, validate=not no_validate, worker=worker, shape=shape)
    if output == "json":
        doc = res.to_dict()
        talked = {k: (v.get("bootstrap_servers") or v.get("url")) for k, v in (res.status or {}).items() if isinstance(v, dict)}
        emit_json({**doc, **json_document(talked, doc.get("steps", []), "ok" if res.ok else "failed", 0 if res.ok else 1)})
        sys.exit(0 if res.ok else 1)
    if res.topics:
        t = table("replicated topics", ("source topic", "target topic", "source records", "target records", "configs"),
                  numeric=("source records", "target records"))
        for r in res.topics:
            same = r["source_records"] == r["target_records"]
            cfg = f"[red]differ: {r['config_differences']}[/]" if r["config_differences"] else colour(True, ", ".join(r["synced_configs"]) or "-")
            t.add_row(r["topic"], colour(r["target_topic"] == r["topic"], r["target_topic"]), f"{r['source_records']:,}",
                      colour(same, f"{r['target_records']:,}"), cfg)
        con.print(t)
    if res.offsets:
        con.print(offsets_table(res.offsets))
    st = res.status
    if st:
        con.print(f"source  {st['source']['bootstrap_servers']} (Kafka {st['source']['kafka_version']})", highlight=False)
        con.print(f"target  {st['target']['bootstrap_servers']} (Kafka {st['target']['kafka_version']})", highlight=False)
        con.print(f"connect {st['connect']['url']}   metrics {st['connect']['metrics_url']}", highlight=False)
        if "prometheus" in st:
            con.print(f"prometheus {st['prometheus']['url']}", highlight=False)
    for label, v in (("validation", res.validation), ("reverse validation", res.reverse_validation)):
        for loc in v.get("locations", []):
            con.print(f"{label} report: {loc}", highlight=False, soft_wrap=True)
    t = table("rehearsal: the runbook, step by step", ("#", "step", "seconds", "result"), numeric=("#", "seconds"))
    for i, s in enumerate(res.steps, 1):
        t.add_row(str(i), colour(s.ok, s.name), f"{s.seconds:.1f}", s.result)
    t.add_row("", "total", f"{res.seconds.get('total', 0):.1f}", colour(res.ok, "ok" if res.ok else "FAILED"))
    con.print(t)
    con.print("the environment keeps running: `msk-migrate local status`, stop it with `msk-migrate local down`")
    sys.exit(0 if res.ok else 1)
