"""The proof follower in the rehearsal (issue 34): ``msk-migrate validate --follow`` runs from the moment the
connectors are applied until cleanup, as the operator would run it (its own process, the command line, a flow
file), and the gates take its verified-up-to mark as their evidence.

- "proof follower started" (after "apply connectors"): the follower process, its mark under the rehearsal's
  reports (``rehearsal-proof/proof-mark.json``), its metrics on a free loopback port;
- "cutover check" (steps.py) and "producer gate on the proof mark" (here) read the mark; their rows say
  ``evidence: verified-up-to mark`` and the proof lag at that moment (from the follower's metrics endpoint);
- "proof follower stopped" (before "cleanup"): SIGTERM, the follower persists its mark and prints its outcome;
  the row gives the records proven, the partitions and their states, and the proof lag at each gate.

A killed follower resuming from its mark with nothing compared twice or skipped is proven by
tests/validation/test_follow_live.py (a real SIGKILL, counted); the rehearsal does not repeat it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..access.offsets import end_offsets, partitions
from ..runbook.producers.cutover import fenced_ends_of, groups_on_wave
from ..runbook.producers.gate import producer_gate
from .context import RehearsalContext
from .demo import PRODUCER_WAVE, wait
from .producer_steps import QUIET_SECONDS, ledger, operator_session, wave_topics
from .result import StepFailed

#: The rehearsal's follower passes once a second (an operator's default is 10 s): the gates wait on it.
INTERVAL_SECONDS = 1.0
#: The mark may be this old at a gate (it is persisted after every pass).
MAX_MARK_AGE_S = 600.0
#: What every gate row that used the mark says.
EVIDENCE = "evidence: verified-up-to mark"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proof_dir(ctx: RehearsalContext) -> Path:
    return ctx.work_dir / "rehearsal-proof"


def start_follower(ctx: RehearsalContext) -> str:
    """Start ``validate --follow`` beside the rehearsal (a previous rehearsal's mark goes: it was made on the
    clusters the "environment up" step wiped, and the follower refuses a mark of other clusters)."""
    stop_quietly(ctx)
    shutil.rmtree(proof_dir(ctx), ignore_errors=True)
    proof_dir(ctx).mkdir(parents=True)
    mark = proof_dir(ctx) / "proof-mark.json"
    port = _free_port()
    # --local: the rehearsal's environment, so the follower reads its ledger too and stops each topic at the fence
    # its producers moved behind (validation/follow/fences.py)
    cmd = [sys.executable, "-m", "msk_migrate.commands", "validate", "--follow", "--local",
           "--mark", str(mark), "--interval", f"{INTERVAL_SECONDS:g}", "--metrics-port", str(port), "--output", "json"]
    out, err = (proof_dir(ctx) / "follower.json").open("wb"), (proof_dir(ctx) / "follower.log").open("wb")
    # its own session: a Ctrl-C of the rehearsal stops the rehearsal, which stops the follower (run.py)
    ctx.follower = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True,
                                    env={**os.environ, "MSK_MIGRATE_LOCAL_ENV_DIR": str(ctx.env.base_dir)})
    out.close()
    err.close()
    ctx.proof_mark, ctx.proof_metrics = str(mark), f"http://127.0.0.1:{port}/metrics"
    if not wait(lambda: ctx.follower is not None and (ctx.follower.poll() is not None or (mark.is_file() and _metrics(ctx))), 60, 0.5):
        raise StepFailed(f"the follower did not persist a mark and serve metrics within 60 s (log {proof_dir(ctx) / 'follower.log'})")
    if ctx.follower.poll() is not None:
        raise StepFailed(f"the follower exited with {ctx.follower.returncode}: {_last_line(proof_dir(ctx) / 'follower.log')}")
    return (f"`msk-migrate validate --follow --local --interval {INTERVAL_SECONDS:g}` (pid "
            f"{ctx.follower.pid}); mark {mark}, metrics {ctx.proof_metrics}")


def _last_line(path: Path) -> str:
    lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()] if path.is_file() else []
    return lines[-1] if lines else "(no output)"


def _metrics(ctx: RehearsalContext) -> dict[str, float] | None:
    """The follower's proof lag now: total records behind, the oldest unproven record's age, records proven."""
    import urllib.request

    if not ctx.proof_metrics:
        return None
    try:
        with urllib.request.urlopen(ctx.proof_metrics, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    out = {"lag_records": 0.0, "lag_seconds": 0.0, "proven": 0.0}
    names = {"msk_migrate_proof_lag_records": "lag_records", "msk_migrate_proof_records_proven_total": "proven"}
    for line in text.splitlines():
        name = line.partition("{")[0]
        if name in names:
            out[names[name]] += float(line.rsplit(" ", 1)[1])
        elif name == "msk_migrate_proof_lag_seconds":
            out["lag_seconds"] = max(out["lag_seconds"], float(line.rsplit(" ", 1)[1]))
    return out


def lag_at_gate(ctx: RehearsalContext, gate: str) -> str:
    """Record the follower's proof lag as ``gate`` passed; the text for its row."""
    m = _metrics(ctx) or {}
    ctx.proof_at_gates[gate] = m
    return (f"proof lag at the gate {int(m.get('lag_records', 0)):,} record(s), {m.get('lag_seconds', 0):.1f} s; "
            f"{int(m.get('proven', 0)):,} record(s) proven so far")


def producer_gate_on_mark(ctx: RehearsalContext) -> str:
    """The producer gate again, its validation evidence the follower's mark at or past the fenced end offsets
    (no batch run of the snapshot): `cutover check --producers --validation-report <mark>`."""
    if not ctx.proof_mark:
        raise StepFailed("no proof mark (step 'proof follower started' did not run)")
    s, book, topics = operator_session(ctx), ledger(ctx), wave_topics(ctx)
    view = book.read()
    ends = fenced_ends_of(book, view, topics)
    if ends is None:  # detection only: the ends as they are now stand for the fenced ones
        ends = end_offsets(s.source, partitions(s.source, topics))
    last: list[Any] = [None]

    def ready() -> Any:
        res = producer_gate(s, topics, wave=PRODUCER_WAVE, ledger=groups_on_wave(view), fenced_ends=ends,
                            quiet_seconds=QUIET_SECONDS, timeout=60, validate=False, progress=ctx.say,
                            proof_mark=ctx.proof_mark, max_mark_age_s=MAX_MARK_AGE_S)
        last[0] = res
        return res if res.ready else None

    res = wait(ready, 90, 1) or last[0]
    cond = res.conditions[-1] if res and res.conditions else None
    if not res or not res.ready or cond is None:
        bad = res.first_failure() if res else None
        raise StepFailed(f"{bad.name}: {bad.evidence}" if bad else "not ready")
    if not cond.evidence.startswith("evidence: proof mark"):
        raise StepFailed(f"the gate did not use the mark: {cond.name}: {cond.evidence}")
    return f"ready, {EVIDENCE}: {cond.evidence.removeprefix('evidence: ')}; {lag_at_gate(ctx, 'producer gate')}"


def cutover_evidence(ctx: RehearsalContext, conds: list[Any]) -> str:
    """The consumer gate's validation row when it read the mark (``cutover check --validation-report <mark>``)."""
    from ..runbook.proof_mark import NAME

    cond = next((c for c in conds if c.name == NAME), None)
    if cond is None:
        raise StepFailed("the cutover check did not read the proof mark")
    return f"{EVIDENCE}: {cond.evidence.removeprefix('evidence: ')}; {lag_at_gate(ctx, 'cutover check')}"


def stop_follower(ctx: RehearsalContext) -> str:
    """SIGTERM the follower: it finishes its pass, persists the mark and prints its outcome (one JSON document)."""
    proc = ctx.follower
    if proc is None or not ctx.proof_mark:
        raise StepFailed("no follower (step 'proof follower started' did not run)")
    if proc.poll() is not None:
        raise StepFailed(f"the follower had exited with {proc.returncode}: {_last_line(proof_dir(ctx) / 'follower.log')}")
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise StepFailed("the follower did not stop within 60 s of SIGTERM") from None
    finally:
        ctx.follower = None
    try:
        doc = json.loads((proof_dir(ctx) / "follower.json").read_text())
    except ValueError:
        raise StepFailed(f"the follower printed no outcome: {_last_line(proof_dir(ctx) / 'follower.log')}") from None
    rows = doc.get("rows") or []
    states: dict[str, int] = {}
    for r in rows:
        states[r["state"]] = states.get(r["state"], 0) + 1
    figures = {"records_proven": sum(r["compared"] for r in rows), "partitions": len(rows), "states": states,
               "lag_records_at_stop": sum(r["lag_records"] for r in rows), "exit_code": proc.returncode,
               "verdict": doc.get("verdict"), "mark": ctx.proof_mark, "at_gates": dict(ctx.proof_at_gates)}
    ctx.result.validation["follower"] = figures
    gates = "; ".join(f"at the {g}: {int(m.get('lag_records', 0)):,} record(s) behind, {m.get('lag_seconds', 0):.1f} s"
                      for g, m in ctx.proof_at_gates.items()) or "no gate read the mark"
    text = (f"{figures['records_proven']:,} record(s) proven on {len(rows)} partition(s) "
            f"({', '.join(f'{n} {s}' for s, n in sorted(states.items()))}); proof lag {gates}; "
            f"exit {proc.returncode} on SIGTERM; mark {ctx.proof_mark}")
    bad = [r for r in rows if r["state"] in ("mismatch", "truncated")]
    if bad:
        r = bad[0]
        raise StepFailed(f"{text}; {r['topic']}[{r['partition']}] {r['state']}: {r.get('mismatch') or r.get('source_log_start')}")
    if not figures["records_proven"]:
        raise StepFailed(f"{text}: nothing proven")
    return text


def stop_quietly(ctx: RehearsalContext) -> None:
    """A follower still running (a failed step stopped the rehearsal): stopped, its mark persisted."""
    proc, ctx.follower = ctx.follower, None
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait(10)
