"""The rehearsal as an :class:`~msk_migrate.outcome.Outcome`: its steps (rows), the replicated topics
and translated offsets (tables), where the clusters and reports are (notes); exit 0 every step passed."""

from __future__ import annotations

from typing import Any

from ..outcome import Outcome, View, col
from ..runbook.group_offsets import OffsetRow, offsets_view
from .result import RehearsalResult


def _topics_view(topics: list[dict[str, Any]]) -> View:
    def configs(r: dict[str, Any]) -> str:
        if r["config_differences"]:
            return f"[red]differ: {r['config_differences']}[/]"
        return f"[green]{', '.join(r['synced_configs']) or '-'}[/]"

    return View("replicated topics", [
        col("source topic", "topic"), col("target topic", "target_topic", ok=lambda r: r["target_topic"] == r["topic"]),
        col("source records", "source_records", True),
        col("target records", "target_records", True, ok=lambda r: r["source_records"] == r["target_records"]),
        col("configs", configs)], topics)


def _steps_view(res: RehearsalResult) -> View:
    rows: list[dict[str, Any]] = [{"#": i, "step": s.name, "ok": s.ok, "seconds": f"{s.seconds:.1f}", "result": s.result}
                                  for i, s in enumerate(res.steps, 1)]
    rows.append({"#": None, "step": "total", "ok": True, "seconds": f"{res.seconds.get('total', 0):.1f}",
                 "result": "[green]ok[/]" if res.ok else "[red]FAILED[/]"})
    return View("rehearsal: the runbook, step by step", [
        col("#", "#", True), col("step", "step", ok=lambda r: r["ok"]), col("seconds", "seconds", True), col("result", "result")], rows)


def _where(res: RehearsalResult) -> list[str]:
    st, out = res.status, []
    if st:
        out += [f"source  {st['source']['bootstrap_servers']} (Kafka {st['source']['kafka_version']})",
                f"target  {st['target']['bootstrap_servers']} (Kafka {st['target']['kafka_version']})",
                f"connect {st['connect']['url']}   metrics {st['connect']['metrics_url']}"]
        if "prometheus" in st:
            out.append(f"prometheus {st['prometheus']['url']}")
    for label, v in (("validation", res.validation), ("reverse validation", res.reverse_validation)):
        out += [f"{label} report: {loc}" for loc in v.get("locations", [])]
    follower = res.validation.get("follower")
    if follower:  # validate --follow, from the connectors' apply to cleanup
        out.append(f"proof mark: {follower['mark']} ({follower['records_proven']:,} record(s) proven)")
    return out


def rehearsal_outcome(res: RehearsalResult) -> Outcome:
    """``msk-migrate rehearse``'s outcome (every key of :meth:`RehearsalResult.to_dict` stays in the JSON)."""
    doc = res.to_dict()
    talked = {k: (v.get("bootstrap_servers") or v.get("url")) for k, v in (res.status or {}).items() if isinstance(v, dict)}
    views = [_topics_view(res.topics)] if res.topics else []
    if res.offsets:
        views.append(offsets_view([OffsetRow(**r) for r in res.offsets]))
    views.append(_steps_view(res))
    if res.schemas.get("report_rows"):  # the forward validation's schema row per schema'd topic
        views.append(View("schema ids proven on both registries (validation report)", [
            col("topic", "topic"), col("status", "status", ok=lambda r: r["status"] == "match"), col("ids seen", "ids_seen", True),
            col("resolved identical", "resolved_identical", True, ok=lambda r: r["resolved_identical"] == r["ids_seen"]),
            col("differing", lambda r: len(r["differing"] or [])), col("missing on target", lambda r: len(r["missing_on_target"] or []))],
            [{"topic": t, **r} for t, r in res.schemas["report_rows"].items()]))
    if res.waves.get("status"):  # `msk-migrate status` at the end: every topic and group, its wave, state and evidence
        views.append(View("waves", [col("wave", "wave"), col("topics", "topics")],
                          [{"wave": w, "topics": ", ".join(ts)} for w, ts in res.waves.get("wave_table", {}).items()]))
        views.append(View(f"status (ledger {res.waves.get('ledger')})", [
            col("kind", "kind"), col("name", "name"), col("wave", "wave"), col("state", "state"), col("evidence", "evidence")],
            res.waves["status"]))
    return Outcome("rehearse", "ok" if res.ok else "failed", 0 if res.ok else 1, doc["steps"], talked, extra=doc, views=views,
                   notes=[*_where(res), "the environment keeps running: `msk-migrate local status`, stop it with `msk-migrate local down`"])
