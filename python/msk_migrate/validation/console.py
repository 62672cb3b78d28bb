"""Console rendering (rich): a progress display while Spark runs, and the result table."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from .report import NO_EVIDENCE, OK_STATUSES, SCHEMAS_NOT_CHECKED, Report


@contextmanager
def spark_progress(console: Console) -> Iterator[Any]:
    """Yields ``say(phase)``. A background thread shows the running Spark stage's tasks as a bar
    (SparkContext.statusTracker of the active SparkContext, once there is one)."""
    progress = Progress(
        SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[stage]}"), TimeElapsedColumn(), console=console, transient=True,
    )
    task = progress.add_task("starting", total=None, stage="")
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.5):
            try:
                from pyspark import SparkContext

                sc = SparkContext._active_spark_context
                if sc is None:
                    continue
                tracker = sc.statusTracker()
                total = done = 0
                stages = []
                for sid in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(sid)
                    if info:
                        total += info.numTasks
                        done += info.numCompletedTasks
                        stages.append(str(sid))
                if total:
                    progress.update(task, total=total, completed=done, stage=f"stage {','.join(stages)}")
            except Exception:
                pass

    def say(phase: str) -> None:
        progress.update(task, description=phase, total=None, completed=0, stage="")

    thread = threading.Thread(target=poll, daemon=True)
    with progress:
        thread.start()
        try:
            yield say
        finally:
            stop.set()
            thread.join(timeout=2)


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{v:,}"


def _style(status: str) -> str:
    if status == "match":
        return "green"
    return "yellow" if status in OK_STATUSES | {NO_EVIDENCE, SCHEMAS_NOT_CHECKED, "not-schemad", "skipped"} else "red"


def print_report(report: Report, console: Console) -> None:
    s = report.summary()
    how = report.run["mode"] + (", each origin's records as a multiset" if report.run.get("compare") == "multiset" else "")
    table = Table(title=f"Validation ({how})", show_lines=False)
    for col, just in [("Topic", "left"), ("Status", "left"), ("Parts", "right"), ("Source", "right"),
                      ("Target", "right"), ("Missing", "right"), ("Unexpected", "right"),
                      ("Duplicates", "right"), ("Changed", "right"), ("Reordered", "right")]:
        table.add_column(col, justify="right" if just == "right" else "left")
    for t in report.topics:
        c = t.counts()
        parts = f"{t.source_partitions}/{t.target_partitions if t.target_partitions is not None else '-'}"
        table.add_row(
            t.topic, f"[{_style(t.status)}]{t.status}[/]", parts, _fmt(c["source_count"]), _fmt(c["target_count"]),
            _fmt(c["missing"]), _fmt(c["unexpected"]), _fmt(c["duplicates"]), _fmt(c["changed"]), _fmt(c["reordered"]),
        )
    console.print(table)
    _schema_table(report, console)
    for t in report.topics:
        for prob in t.problems:
            console.print(f"  [red]{t.topic}[/]: {prob}")
        for p in t.partitions:
            if p.status not in OK_STATUSES or p.status == "duplicates":
                console.print(f"  [{_style(p.status)}]{t.topic}[{p.partition}][/] {p.status}: {'; '.join(p.differences)}")
    for w in report.warnings:
        console.print(f"  [yellow]warning[/]: {w}")
    for side in ("source", "target"):
        c = report.clusters[side]
        arn = f", MSK {c['msk_cluster_arn']}" if c.get("msk_cluster_arn") else ""
        console.print(f"  {side}: {c['bootstrap_servers']} (cluster id {c.get('cluster_id') or 'unknown'}{arn})", highlight=False)
    if report.verdict in (NO_EVIDENCE, SCHEMAS_NOT_CHECKED):
        label = report.verdict.upper().replace("-", " ")
        console.print(f"[bold yellow]{label}[/]: {report.verdict_reason()}", highlight=False)
        return _locations(report, console)
    colour = "green" if report.verdict == "match" else "red"
    console.print(
        f"[bold {colour}]{report.verdict.upper()}[/]: {s['topics_matching']}/{s['topics']} topics match, "
        f"{s['partitions_mismatched']} partition(s) differ, {_fmt(s['source_records'])} source records compared"
    )
    _locations(report, console)


def _locations(report: Report, console: Console) -> None:
    for loc in report.locations:
        console.print(f"report: {loc}")


def _schema_table(report: Report, console: Console) -> None:
    """One schema row per topic whose values carry schema ids (proof per record)."""
    rows = [t for t in report.topics if t.schemas is not None and t.schemas.status != "not-schemad"]
    if not rows:
        return
    reg = report.schema_registry
    title = f"Schemas ({reg['source']} -> {reg['target']})" if reg else "Schemas (no registries given)"
    table = Table(title=title)
    for col in ("Topic", "Status", "Ids seen", "Identical", "Differing", "Missing on target", "Missing on source",
                "Missing on both"):
        table.add_column(col, justify="left" if col in ("Topic", "Status") else "right")
    for t in rows:
        d = t.schemas.to_dict() if t.schemas is not None else {}

        def ids(key: str, d: dict[str, Any] = d) -> str:
            return ", ".join(map(str, d[key][:10])) + (" ..." if len(d[key]) > 10 else "") if d[key] else "0"

        table.add_row(t.topic, f"[{_style(d['status'])}]{d['status']}[/]", _fmt(d["ids_seen"]), _fmt(d["resolved_identical"]),
                      ids("differing"), ids("missing_on_target"), ids("missing_on_source"), ids("missing_on_both"))
    console.print(table)
