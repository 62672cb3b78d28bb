"""What ``validate --on <home>`` shows of a job run, whichever home ran it (EMR Serverless, Glue): progress
on the console while it runs, then the verdict (text) or the one JSON shape. The exit code is the report's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Progress = Callable[[str], None]


def show(home: str, run_key: str, run: Callable[[Progress], dict[str, Any]], output: str) -> int:
    """Run ``run`` (check, submit, follow, fetch: it returns the report, where it was written and the run)
    behind a status line named ``home``; ``run_key`` names the run in ``talked_to``."""
    from ..cliutil import emit_json, human
    from ..outcome import json_document

    con = human(output)
    with con.status(home) as status:
        def say(message: str) -> None:
            status.update(message)
            con.print(message)

        result = run(say)
    doc = result["report"]
    code = int(doc.get("exit_code", 1))
    talked_to = {**{role: (doc.get(role) or {}).get("bootstrap_servers") for role in ("source", "target")},
                 run_key: result["job_run"]["job_run_id"]}
    if output == "json":
        emit_json({**doc, "locations": result["written"], "job_run": result["job_run"],
                   **json_document(talked_to, doc.get("topics", []), str(doc.get("verdict")), code)})
    else:
        con.print(f"verdict: {doc.get('verdict')} ({doc.get('verdict_reason', '')})")
        for where in result["written"]:
            con.print(f"report: {where}")
    return code
