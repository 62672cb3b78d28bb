"""Self-contained HTML page of a validation report: verdict and summary first, then one table per
topic, then the details (differences, samples) of every partition that does not match.
No external assets; machine-readable anchors: ``#verdict[data-verdict]``, ``table#summary``,
``table#topics`` (one ``tr[data-topic][data-status]`` per topic)."""

from __future__ import annotations

import html
from typing import Any

from .request import iso

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem;color:#1d232a;max-width:1200px}
h1{font-size:1.5rem;margin:0 0 .5rem}h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem}
.verdict{padding:1rem 1.5rem;border-radius:8px;font-size:1.4rem;font-weight:600;margin:1rem 0}
.match{background:#e3f6e8;color:#14532d;border:1px solid #86d39c}
.mismatch{background:#fde8e8;color:#7f1d1d;border:1px solid #f19a9a}
.no-evidence{background:#fff4d6;color:#713f12;border:1px solid #e9c46a}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
.s-match{color:#15803d;font-weight:600}.s-bad{color:#b91c1c;font-weight:600}.s-warn{color:#a16207;font-weight:600}
.muted{color:#57606a;font-size:.85rem}code{font-size:.85rem}ul{margin:.2rem 0}
"""


#: A topic with more partitions than this shows its partition table collapsed (<details>), the partitions
#: that do not match first and open; report.json keeps every partition either way.
COLLAPSE_PARTITIONS = 32


def _e(v: Any) -> str:
    if v is None:
        return "—"
    return html.escape(str(v))


def _n(v: Any) -> str:
    if v is None:
        return '<td class="n">n/a</td>'
    return f'<td class="n">{v:,}</td>' if isinstance(v, int) else f'<td class="n">{_e(v)}</td>'


def _status(s: str) -> str:
    cls = "s-match" if s in ("match", "identical") else (
        "s-warn" if s in ("duplicates", "no-evidence", "not-schemad", "skipped") else "s-bad")
    return f'<span class="{cls}">{_e(s)}</span>'


def render_html(r: dict[str, Any]) -> str:
    s = r["summary"]
    verdict = r["verdict"]
    win = r["window"]
    out: list[str] = []
    add = out.append
    add("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>")
    add(f"<title>msk-migrate validation: {_e(verdict)}</title><style>{CSS}</style></head><body>")
    add("<h1>msk-migrate validation report</h1>")
    def side(role: str) -> str:
        c = r[role]
        extra = f", cluster id <code>{_e(c.get('cluster_id'))}</code>"
        if c.get("msk_cluster_arn"):
            extra += f", <code>{_e(c['msk_cluster_arn'])}</code>"
        return f"{role} <code>{_e(c['bootstrap_servers'])}</code> ({_e(c['auth_mode'])}{extra})"

    env = f"environment <b>{_e(r['environment'])}</b> · " if r.get("environment") else ""
    add(
        f"<p class='muted' id='clusters'>{env}{side('source')} → {side('target')} · mode "
        f"<b>{_e(r['run']['mode'])}</b> · engine {_e(r['run'].get('engine', r['run'].get('checksum_engine')))} · "
        f"run {_e(r['run']['id'])} at {_e(r['run']['finished_at'])}</p>"
    )
    text = {
        "match": "MATCH — the target holds the same records",
        "mismatch": f"MISMATCH — {s['topics_mismatched']} of {s['topics']} topic(s) differ",
        "schemas-not-checked": f"SCHEMAS NOT CHECKED — {r.get('verdict_reason', '')}",
    }.get(verdict, f"NO EVIDENCE — {r.get('verdict_reason', '')}")
    add(f"<div id='verdict' class='verdict {verdict}' data-verdict='{verdict}'>{_e(text)}</div>")
    add(f"<p class='muted' id='topics-covered'>Topics covered: {_e(', '.join(r.get('topics_covered') or []) or 'none')}</p>")

    add("<table id='summary'><tbody>")
    rows = [
        ("Topics", s["topics"]), ("Topics matching", s["topics_matching"]),
        ("Topics mismatched", s["topics_mismatched"]), ("Partitions", s["partitions"]),
        ("Partitions mismatched", s["partitions_mismatched"]),
        ("Partitions with records", s.get("partitions_with_records")),
        ("Partitions without evidence", s.get("partitions_without_evidence")), ("Source records", s["source_records"]),
        ("Target records", s["target_records"]), ("Missing on target", s["missing"]),
        ("Unexpected on target", s["unexpected"]), ("Duplicates on target", s["duplicates"]),
        ("Changed records", s["changed"]),
        ("Reordered (out-of-order points)", s["reordered"]), ("Warnings", s["warnings"]),
    ]
    for label, value in rows:
        key = label.lower().replace(" ", "_")
        add(f"<tr data-key='{key}'><th>{_e(label)}</th>{_n(value)}</tr>")
    add("</tbody></table>")
    if win["kind"] == "timestamps":
        add(
            f"<p class='muted'>Window: record timestamps in [{_e(win.get('from') or 'beginning')}, "
            f"{_e(win.get('until'))}) · isolation {_e(r['run']['isolation_level'])}</p>"
        )
    else:
        add(f"<p class='muted'>Window: source offset snapshot ({_e(win.get('partitions'))} partitions) · "
            f"isolation {_e(r['run']['isolation_level'])}</p>")
    if r["warnings"]:
        add("<h2>Warnings</h2><ul id='warnings'>" + "".join(f"<li>{_e(w)}</li>" for w in r["warnings"]) + "</ul>")

    add("<h2>Topics</h2><table id='topics'><thead><tr><th>Topic</th><th>Status</th><th>Partitions (src/tgt)</th>"
        "<th>Source</th><th>Target</th><th>Missing</th><th>Unexpected</th><th>Duplicates</th><th>Changed</th>"
        "<th>Reordered</th><th>Problems</th></tr></thead><tbody>")
    for t in r["topics"]:
        md = t["metadata"]
        probs = "".join(f"<li>{_e(p)}</li>" for p in t["problems"])
        add(
            f"<tr data-topic='{_e(t['topic'])}' data-status='{_e(t['status'])}'><td><a href='#t-{_e(t['topic'])}'>"
            f"{_e(t['topic'])}</a></td><td>{_status(t['status'])}</td>"
            f"<td>{_e(md['source_partitions'])}/{_e(md['target_partitions'])}</td>"
            f"{_n(t['source_count'])}{_n(t['target_count'])}{_n(t['missing'])}{_n(t['unexpected'])}"
            f"{_n(t['duplicates'])}{_n(t['changed'])}{_n(t['reordered'])}<td>{'<ul>' + probs + '</ul>' if probs else ''}</td></tr>"
        )
    add("</tbody></table>")
    _schemas(r, add)

    for t in r["topics"]:
        add(f"<h2 id='t-{_e(t['topic'])}'>{_e(t['topic'])} {_status(t['status'])}</h2>")
        md = t["metadata"]
        notes = [f"compare: {t['compare']}", f"timestamps in fingerprint: {'yes' if t['timestamps_in_fingerprint'] else 'no'}",
                 f"timestamp type: {md['timestamp_type'].get('source')} / {md['timestamp_type'].get('target')}"]
        if t["target_topic"] != t["topic"]:
            notes.insert(0, f"target topic: {t['target_topic']}")
        add(f"<p class='muted'>{_e(' · '.join(notes))}</p>")
        if md["config_differences"]:
            add("<table><thead><tr><th>Config</th><th>Source</th><th>Target</th></tr></thead><tbody>")
            for d in md["config_differences"]:
                add(f"<tr><td>{_e(d['name'])}</td><td>{_e(d['source'])}</td><td>{_e(d['target'])}</td></tr>")
            add("</tbody></table>")
        parts = t["partitions"]
        large = len(parts) > COLLAPSE_PARTITIONS
        if large:  # a large topic: collapsed, the partitions that do not match first
            bad = sum(p["status"] != "match" for p in parts)
            parts = sorted(parts, key=lambda p: (p["status"] == "match", p["partition"]))
            add(f"<details class='partitions'{' open' if bad else ''}><summary>{len(parts)} partitions, "
                f"{bad} not matching{' (listed first)' if bad else ''}</summary>")
        add("<table class='partitions'><thead><tr><th>Partition</th><th>Status</th><th>Method</th><th>Source</th>"
            "<th>Target</th><th>Missing</th><th>Unexpected</th><th>Duplicates</th><th>Changed</th>"
            "<th>Reordered</th><th>Explanation</th></tr></thead><tbody>")
        for p in parts:
            diffs = "; ".join(p["differences"])
            add(
                f"<tr data-partition='{p['partition']}' data-status='{_e(p['status'])}'><td class='n'>{p['partition']}</td>"
                f"<td>{_status(p['status'])}</td><td>{_e(p['method'])}</td>{_n(p['source_count'])}{_n(p['target_count'])}"
                f"{_n(p['missing'])}{_n(p['unexpected'])}{_n(p['duplicates'])}{_n(p['changed'])}{_n(p['reordered'])}<td>{_e(diffs)}</td></tr>"
            )
        add("</tbody></table>")
        if large:
            add("</details>")
        _schema_ids(t, add)
        for p in t["partitions"]:
            for cat, items in p["samples"].items():
                if not items:
                    continue
                add(f"<h3>{_e(t['topic'])}[{p['partition']}] — {_e(cat)} (sample of {len(items)})</h3>")
                add("<table class='samples'><thead><tr><th>Key</th><th>Source offset</th><th>Target offset</th>"
                    "<th>Timestamp</th><th>Detail</th></tr></thead><tbody>")
                for it in items:
                    key = "null" if it.get("key") is None else it["key"]
                    if it.get("key_encoding") in ("base64", "sha256"):
                        key = f"{it['key_encoding']}:{key}"
                    detail = []
                    if it.get("changed"):
                        detail.append("changed: " + ", ".join(it["changed"]))
                    if it.get("target_timestamp") is not None and it["target_timestamp"] != it.get("timestamp"):
                        detail.append(f"target timestamp {iso(it['target_timestamp'])}")
                    if it.get("copies", 1) != 1:
                        detail.append(f"{it['copies']} copies")
                    if it.get("previous_target_offset") is not None:
                        detail.append(f"out of order: comes after source offset {it['previous_source_offset']}, "
                                      f"but before its target offset {it['previous_target_offset']}")
                    if it.get("target_last_offset") is not None:
                        detail.append(f"target offsets {it['target_offset']}…{it['target_last_offset']}")
                    add(
                        f"<tr><td><code>{_e(key)}</code></td><td class='n'>{_e(it.get('source_offset'))}</td>"
                        f"<td class='n'>{_e(it.get('target_offset'))}</td><td>{_e(iso(it.get('timestamp')))}</td>"
                        f"<td>{_e('; '.join(detail))}</td></tr>"
                    )
                add("</tbody></table>")
    add(f"<p class='muted'>msk-migrate {_e(r['run']['tool_version'])} · Spark {_e(r['run']['spark_version'])} · "
        f"report schema v{r['schema_version']} · {_e(r['run']['duration_seconds'])} s</p>")
    add("</body></html>")
    return "\n".join(out)


def _schemas(r: dict[str, Any], add: Any) -> None:
    """The schema row per topic (proof per record): ids seen, resolved identically, differing, missing."""
    rows = [t for t in r["topics"] if t.get("schemas")]
    if not rows:
        return
    reg = r.get("schema_registry")
    where = (f"registries <code>{_e(reg['source'])}</code> → <code>{_e(reg['target'])}</code>" if reg
             else "no schema registries given")
    add(f"<h2>Schemas</h2><p class='muted'>Every schema id the compared values carry, resolved on both registries "
        f"({where}).</p>")
    add("<table id='schemas'><thead><tr><th>Topic</th><th>Status</th><th>Values in wire format (src/tgt)</th>"
        "<th>Ids seen</th><th>Resolved identical</th><th>Differing</th><th>Missing on target</th>"
        "<th>Missing on source</th><th>Missing on both</th><th>Note</th></tr></thead><tbody>")
    for t in rows:
        sc = t["schemas"]

        def ids(key: str, sc: dict[str, Any] = sc) -> str:
            return f"<td class='n'>{_e(', '.join(map(str, sc[key])) or '0')}</td>"

        add(f"<tr data-topic='{_e(t['topic'])}' data-schema-status='{_e(sc['status'])}'><td>{_e(t['topic'])}</td>"
            f"<td>{_status(sc['status'])}</td><td class='n'>{sc['source']['wire_format']:,}/{sc['target']['wire_format']:,}"
            f"</td>{_n(sc['ids_seen'])}{_n(sc['resolved_identical'])}{ids('differing')}{ids('missing_on_target')}"
            f"{ids('missing_on_source')}{ids('missing_on_both')}<td>{_e(sc['reason'] or '')}</td></tr>")
    add("</tbody></table>")


def _schema_ids(t: dict[str, Any], add: Any) -> None:
    sc = t.get("schemas")
    if not sc or not sc["ids"]:
        return
    add("<table class='schema-ids'><thead><tr><th>Schema id</th><th>Status</th><th>Type</th><th>Records (src/tgt)</th>"
        "<th>Differences</th></tr></thead><tbody>")
    for i in sc["ids"]:
        add(f"<tr data-schema-id='{i['id']}' data-status='{_e(i['status'])}'><td class='n'>{i['id']}</td>"
            f"<td>{_status(i['status'])}</td><td>{_e(i['schema_type'] or '')}</td>"
            f"<td class='n'>{i['records']['source']:,}/{i['records']['target']:,}</td>"
            f"<td>{_e('; '.join(i['differences']))}</td></tr>")
    add("</tbody></table>")
