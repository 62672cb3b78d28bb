"""``validate --follow``: the follower's options checked before any network call, then its run here
(:func:`msk_migrate.validation.follow.run.follow`, or one chained Spark run) or as job runs of the stack's
EMR Serverless application or Glue job (:mod:`msk_migrate.validation.remote_follow`), printed by the one renderer.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..errors import UsageError
from ..render import render
from .validate_options import DEFAULT_MARK
from .validate_request import build_request, validate_flow

#: Options of a batch window that mean nothing to the follower (it compares every record past its mark).
_BATCH_ONLY = (("from_timestamp", "--from-timestamp"), ("until_timestamp", "--until-timestamp"),
               ("offsets_snapshot", "--offsets-snapshot"), ("no_report", "--no-report"), ("report_dir", "--validation-report"),
               ("show_keys", "--show-keys"))


def _check(kw: dict[str, Any], opts: dict[str, Any], on: str) -> bool:
    """Refuse what the follower cannot do with these options; True for the chained Spark run."""
    given = [flag for key, flag in (("mark", "--mark"), ("interval", "--interval"), ("metrics_port", "--metrics-port"),
                                    ("metrics_bind", "--metrics-bind"), ("once", "--once")) if opts[key] not in (None, False)]
    if not opts["follow"]:
        raise UsageError(given[0], "applies to --follow only", f"add --follow, or drop {given[0]}")
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
    return chained


def _check_marks(request: Any, asked: str | None, chained: bool) -> None:
    """Where copies are marked (the flow's ``mark_copies`` or ``--copy-marks SRC,TGT``) the follower compares each
    origin apart (docs/follow.md "Marked copies"); refused here, before any network call: ``--compare`` without
    marks (a batch option), an order comparison of marked copies, one alias only, and the chained Spark run."""
    if request.marks is None:
        if asked is not None:
            raise UsageError("--compare", "is a batch option: the follower compares every record past its mark",
                             "drop --compare, or drop --follow")
        return
    if asked == "records":
        raise UsageError("--compare records", "copies are marked here (migration.mark_copies or --copy-marks), so a topic "
                         "may hold records of both origins, and one order per partition would call their interleaving a "
                         "difference", "drop --compare: the follower compares each origin's records in order apart")
    if request.marks.target_alias is None:
        raise UsageError("--copy-marks", "the follower compares per origin and needs both aliases (the target's tells the "
                         "source's records that came from it)", "write --copy-marks SOURCE_ALIAS,TARGET_ALIAS")
    if chained:
        raise UsageError("--engine spark", "the chained Spark run compares every record in order and does not account "
                         "for copy marks", "follow with --engine native, here or as the stack's follower service (it compares per origin)")


def follow_command(kw: dict[str, Any], opts: dict[str, Any], on: str, output: str, verbose: bool) -> None:
    """``validate --follow``: checked options, one request, then the follower here or on the stack's job home."""
    from .validate_console import client_logs_to_stderr, progress_to

    chained = _check(kw, opts, on)
    cfg = None
    if on != "local":
        from ..validation.emr_run import environment
        from ..validation.remote_follow import HOMES, mark_location

        cfg = environment(kw, f"--on {on}", HOMES[on][0] + (" job" if on == "glue" else " application"))
        opts["mark"] = mark_location(cfg, opts["mark"])
    kw["no_report"] = True
    asked, kw["compare"] = kw.get("compare"), None
    request = build_request(kw)
    _check_marks(request, asked, chained)
    if cfg is not None:
        _follow_on(on, cfg, request, opts, output)
        return
    migration, ledger = "validate", None
    if kw.get("env") or kw.get("config") or kw.get("local"):
        flow = validate_flow(kw)
        migration, ledger = flow.migration.name, flow.ledger_location
    from ..validation.follow.fences import fenced_ends
    from ..validation.follow.follower import FollowOptions
    from ..validation.follow.progress import follow_progress
    from ..validation.follow.run import follow

    fo = FollowOptions(mark=opts["mark"] or DEFAULT_MARK, migration=migration,
                       interval=opts["interval"] if opts["interval"] is not None else 10.0, once=bool(opts["once"]),
                       metrics_port=opts["metrics_port"], metrics_bind=opts["metrics_bind"] or "127.0.0.1", verbose=verbose,
                       fences=partial(fenced_ends, ledger, migration) if ledger else None)
    with client_logs_to_stderr(None, verbose), progress_to(follow_progress, output) as say:
        if chained:
            from ..validation.follow.chain_run import follow_chained

            outcome = follow_chained(request, fo, None, say)
        else:
            outcome = follow(request, fo, say)
    render(outcome, output)


def _follow_on(on: str, cfg: Any, request: Any, opts: dict[str, Any], output: str) -> None:
    """``--follow --engine spark --on <home>``: chained runs as job runs of the stack (:mod:`.remote_follow`)."""
    from ..cliutil import human
    from ..validation.remote_follow import HOMES, follow_on

    con = human(output)
    with con.status(HOMES[on][0]) as status:
        def say(message: str) -> None:
            status.update(message)
            con.print(message)

        outcome = follow_on(on, cfg, request, opts["mark"], once=bool(opts["once"]),
                            interval=opts["interval"] if opts["interval"] is not None else 10.0, say=say)
    render(outcome, output)
