"""``msk-migrate validate``: prove the target holds the same records as the source.

Exit 0 = everything matches, 1 = a mismatch (see the report), 2 = bad input or an unreachable
cluster (one line on stderr naming the field and the fix; nothing written).

The command declares its options (:mod:`.validate_options`), builds the request once
(:func:`.validate_request.build_request`) and hands it to one home: this machine
(:func:`msk_migrate.validation.job.run_validation`), a job run of the stack's EMR Serverless application or
Glue job (the request as one document, :mod:`msk_migrate.validation.job_request`), a file for a spark-submit by
hand (``--job-request``), or the follower (``--follow``, :mod:`.validate_follow`). The Spark job's own entry
(``validation/spark_entry.py``) runs no command: it reads that document.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .. import cliutil
from ..cliutil import emit_json, output_option
from ..errors import UsageError
from ..outcome import json_document
from ..validation.request import ValidationRequest
from .validate_console import client_logs_to_stderr, console_for, progress_to
from .validate_follow import follow_command
from .validate_options import FOLLOW_KEYS, validate_options
from .validate_request import build_request


@click.command("validate")
@validate_options
@output_option
@click.pass_context
def validate(ctx: click.Context, output: str, **kw: Any) -> None:
    """Prove the target holds the same records as the source (PySpark).

    Exit 0: everything matches; 1: a mismatch; 2: bad input or an unreachable cluster.
    """
    spark = (ctx.obj or {}).get("spark") if isinstance(ctx.obj, dict) else None
    verbose = kw.pop("verbose", False)
    follow_opts = {k: kw.pop(k) for k in FOLLOW_KEYS}
    on = kw.pop("on", "local")
    if follow_opts["follow"] or any(v not in (None, False) for v in follow_opts.values()):
        follow_command(kw, follow_opts, on, output, verbose)
        return
    job_request = kw.pop("job_request", None)
    if job_request is not None:
        if on != "local":
            raise UsageError("--job-request", f"writes the request for a Spark job started by hand, not with --on {on}", "drop one of them")
        _write_job_request(job_request, build_request(kw), output)
        return
    if on != "local":
        code = _run_on(on, kw, output)
        if code:
            sys.exit(code)
        return
    _run_here(build_request(kw), spark, output, verbose)


def _run_on(on: str, kw: dict[str, Any], output: str) -> int:
    """``--on emr-serverless|glue``: the environment checked, the request built, one job run; its exit code."""
    if on == "emr-serverless":
        from ..validation.emr_run import environment, validate_on_emr_serverless

        return validate_on_emr_serverless(environment(kw), build_request(kw), output)
    from ..validation.glue_run import environment as glue_environment
    from ..validation.glue_run import validate_on_glue

    return validate_on_glue(glue_environment(kw), build_request(kw), output)


def _run_here(request: ValidationRequest, spark: Any, output: str, verbose: bool) -> None:
    """The job on this machine (or in the caller's Spark session), its report printed or as the one JSON shape."""
    from ..validation.console import print_report, spark_progress
    from ..validation.job import run_validation

    with client_logs_to_stderr(spark, verbose), progress_to(spark_progress, output) as say:
        report = run_validation(request, spark=spark, progress=say)
    if output == "json":
        doc = report.to_dict()
        emit_json({**doc, "locations": report.locations,
                   **json_document(report.talked_to(), doc.get("topics", []), str(doc.get("verdict")), report.exit_code)})
    else:
        print_report(report, console_for(output)[0])
    if report.exit_code:
        sys.exit(report.exit_code)


def _write_job_request(path: Path, request: ValidationRequest, output: str) -> None:
    """``--job-request FILE``: the checked request as the job's one document; nothing runs."""
    from ..validation.job_request import document

    doc = document(request)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    talked_to = {role: getattr(request, role).bootstrap_servers for role in ("source", "target")}
    if output == "json":
        emit_json({"job_request": str(path), **json_document(talked_to, [], "written", 0)})
    else:
        console_for(output)[0].print(f"job request for {talked_to['source']} -> {talked_to['target']} written to {path} "
                                     "(spark_entry.py --request \"$(cat FILE)\")")


def run_cli(argv: list[str], spark: Any = None) -> int:
    """Run ``validate`` with ``argv`` behind the one error boundary (:func:`cliutil.run_cli`); returns
    the exit code (0/1/2) instead of exiting: one-line ``error: ...`` on stderr, like ``msk-migrate``.
    ``spark``: the caller's SparkSession (tests), used instead of a local one."""
    return cliutil.run_cli(validate, argv, "msk-migrate validate", obj={"spark": spark})
