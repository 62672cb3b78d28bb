"""The proof of one group's move: a certificate (JSON + readable HTML), written to a path or S3, and the
check ``cutover check --certificate`` runs on it (reading and writing through :mod:`msk_migrate.store`).

The JSON carries, per partition, the commit point, the records compared on both sides (offsets and
fingerprints), the offset written, the method and why, and the records the group will see again,
counted by identity. ``digest`` is the SHA-256 of the canonical JSON of everything else, so an edited
certificate is refused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
from typing import Any

from ..errors import UsageError
from ..store import Place, document
from .planner import PartitionPlan

KIND = "msk-migrate offset translation certificate"
#: The certificate of a flow that marks its copies (:mod:`.two_origin_sync`): per partition the records consumed
#: and covered per origin instead of one offset stream's matched records.
TWO_ORIGIN_KIND = "msk-migrate/offset-certificate/two-origin"
VERSION = 1


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def cluster_ids(frm: Any, to: Any) -> dict[str, str | None]:
    """The ids of the clusters a group moved from and to (admin sessions): what binds its certificate to them."""
    return {"from_cluster_id": frm.cluster_id(), "to_cluster_id": to.cluster_id()}


def build(group: str, direction: str, frm: str, to: str, plans: list[PartitionPlan], written: bool,
          dry_run: bool, ids: dict[str, str | None] | None = None) -> dict[str, Any]:
    """The certificate of one group's placements (``written``: they were committed); ``ids``: :func:`cluster_ids`."""
    parts = [p.to_dict() for p in plans]
    exact = sum(p.proven for p in plans)
    body = {
        "kind": KIND, "version": VERSION, "group": group, "direction": direction, "from": frm, "to": to, **(ids or {}),
        "created_at": dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z"),
        "dry_run": dry_run, "written": written,
        "verdict": "exact" if plans and exact == len(plans) else ("partial" if exact else "not-proven"),
        "totals": {"partitions": len(plans), "exact": exact,
                   "checkpoint": sum(p.method == "checkpoint" for p in plans),
                   "none": sum(p.method == "none" for p in plans),
                   "redelivered": sum(p.redelivery or 0 for p in plans if p.proven),
                   "duplicates": sum(len(p.duplicates) for p in plans),
                   "records_matched": sum(len(p.matched) for p in plans)},
        "partitions": parts,
    }
    return {**body, "digest": _digest(body)}


def render_html(cert: dict[str, Any]) -> str:
    e = html.escape
    t = cert["totals"]
    rows = []
    for p in cert["partitions"]:
        matched = " ".join(f"{m['source_offset']}&rarr;{m['target_offset']}" for m in p["matched"][:40])
        red = ", ".join(f"{r['target_offset']}" for r in p["redelivered"][:40]) or "none"
        resumes = "" if p["effective_commit"] == p["commit"] else f" (resumes at {p['effective_commit']})"
        rows.append(
            f"<tr class='{e(p['method'])}'><td>{e(p['topic'])}</td><td>{p['partition']}</td><td>{p['commit']}{resumes}</td>"
            f"<td>{e(p['to_topic'])}</td><td>{p['target_offset']}</td><td>{e(p['method'])}</td>"
            f"<td>{'-' if p['redelivery'] is None else p['redelivery']}</td><td>{e(p['reason'])}</td>"
            f"<td class='m'>{matched}</td><td class='m'>{red}</td></tr>")
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>offset certificate {e(cert['group'])}</title>
<style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;
padding:3px 6px;vertical-align:top;font-size:13px}}tr.exact td:nth-child(6){{color:#070}}tr.checkpoint td:nth-child(6),
tr.none td:nth-child(6){{color:#b00}}.m{{font-family:monospace;font-size:11px;max-width:30em}}</style></head><body>
<h1>Offset translation certificate: {e(cert['group'])}</h1>
<p>{e(cert['direction'])}: from <code>{e(cert['from'])}</code> to <code>{e(cert['to'])}</code>, {e(cert['created_at'])};
{'dry run (nothing written)' if cert['dry_run'] else ('offsets written' if cert['written'] else 'nothing written')}.</p>
<p><b>Verdict: {e(cert['verdict'])}</b>. {t['exact']} of {t['partitions']} partition(s) placed exactly,
{t['checkpoint']} on MM2's checkpoint, {t['none']} left as they were; {t['records_matched']} record(s) matched by
content; {t['redelivered']} record(s) will be re-delivered (counted by record identity), {t['duplicates']} duplicate
copy(ies) on the other cluster.</p>
<table><tr><th>topic</th><th>p</th><th>commit point</th><th>other topic</th><th>offset written</th><th>method</th>
<th>re-delivered</th><th>why</th><th>matched (source&rarr;target offsets)</th><th>re-delivered (target offsets)</th></tr>
{''.join(rows)}</table>
<p>digest <code>{e(cert['digest'])}</code> (SHA-256 of the JSON certificate without this field)</p></body></html>
"""


FIELD = "--certificate"


def _place(location: str, group: str | None) -> Place:
    return document(location, FIELD, f"offset-certificate-{group}.json" if group else "offset-certificate.json")


def check_destination(dest: str, group: str | None = None) -> None:
    """Refuse an unwritable ``--certificate`` before anything is committed."""
    _place(dest, group).check_writable()


def write(cert: dict[str, Any], dest: str) -> list[str]:
    """Write ``<dest>`` (a .json path, a directory, or s3://bucket/prefix) and its HTML next to it."""
    place = _place(dest, cert["group"])
    body = json.dumps(cert, indent=2, sort_keys=True) + "\n"
    return [place.write(body, "application/json"), place.with_suffix(".html").write(render_html(cert), "text/html")]


def write_json(cert: dict[str, Any], dest: str) -> list[str]:
    """Write ``<dest>`` as JSON only (a certificate of another kind than :func:`build`'s, e.g. the two-origin one)."""
    return [_place(dest, cert["group"]).write(json.dumps(cert, indent=2, sort_keys=True) + "\n", "application/json")]


def read(location: str, group: str | None = None) -> dict[str, Any]:
    """A certificate from a .json path, a directory (``offset-certificate-<group>.json``) or s3:// URI."""
    place = _place(location, group)
    raw = place.read_bytes("pass the certificate written by `msk-migrate offsets sync --certificate`")
    try:
        cert = json.loads(raw)
    except ValueError as exc:
        raise UsageError(FIELD, f"cannot read {place}: {str(exc).splitlines()[0]}",
                         "pass the JSON certificate of `msk-migrate offsets sync`") from None
    if not isinstance(cert, dict) or cert.get("kind") not in (KIND, TWO_ORIGIN_KIND):
        raise UsageError(FIELD, f"{place} is not an offset translation certificate",
                         "pass the JSON certificate of `msk-migrate offsets sync`")
    return cert


def check(cert: dict[str, Any], group: str, committed_now: dict[tuple[str, int], int],
          to_cluster_id: str | None = None) -> tuple[bool, str]:
    """Whether ``cert`` proves ``group``'s current offsets on the cluster it moved to: intact, for this
    group, of that cluster (``to_cluster_id``, the gate's; a certificate written before certificates named their
    clusters is checked on its content alone, and says so), written (not a dry run), every partition exact, and
    the committed offsets still the ones written."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    if _digest(body) != cert.get("digest"):
        return False, "digest does not match its content (edited?)"
    if cert.get("group") != group:
        return False, f"certificate is for group {cert.get('group')!r}"
    named = cert.get("to_cluster_id")
    if named and to_cluster_id and named != to_cluster_id:
        return False, (f"certificate is of a move to cluster {named}, not to this flow's {to_cluster_id} "
                       "(another environment's or direction's certificate)")
    ok, why = _check_parts(cert, committed_now)
    return ok, why + ("" if named or not ok else " (the certificate names no cluster: written by an older msk-migrate)")


def _check_parts(cert: dict[str, Any], committed_now: dict[tuple[str, int], int]) -> tuple[bool, str]:
    if not cert.get("written"):
        return False, "certificate of a dry run (nothing was written)"
    parts = cert.get("partitions") or []
    if not parts:
        return False, "certificate covers no partition"
    if cert.get("kind") == TWO_ORIGIN_KIND:
        return _check_two_origin(cert, parts, committed_now)
    inexact = [p for p in parts if p["method"] != "exact"]
    if inexact:
        p = inexact[0]
        return False, f"{len(inexact)} partition(s) not exact, e.g. {p['topic']}[{p['partition']}]: {p['reason']}"
    moved = [p for p in parts if committed_now.get((p["to_topic"], p["partition"])) != p["target_offset"]]
    if moved:
        p = moved[0]
        return False, (f"{p['to_topic']}[{p['partition']}] committed {committed_now.get((p['to_topic'], p['partition']))}, "
                       f"certificate wrote {p['target_offset']} (re-run offsets sync)")
    red = sum(p.get("redelivery") or 0 for p in parts)
    return True, f"{len(parts)} partition(s) exact, {red} record(s) re-delivered by identity, {cert['created_at']}"


def check_certificates(location: str, groups: list[str], session) -> tuple[bool, str]:
    """``cutover check --certificate``: every group has an intact, exact certificate matching its offsets now."""
    notes = []
    to_cluster_id = session.cluster_id()
    for g in groups:
        ok, why = check(read(location, g), g, session.committed(g), to_cluster_id)
        if not ok:
            return False, f"{g}: {why} ({location})"
        notes.append(f"{g}: {why}")
    return True, "; ".join(notes)


def _check_two_origin(cert: dict[str, Any], parts: list[dict[str, Any]],
                      committed_now: dict[tuple[str, int], int]) -> tuple[bool, str]:
    """The partitions of an intact, written two-origin certificate: each exact (the offset covers exactly the
    records the group consumed of each origin) and each still committed where it was written (identity names)."""
    inexact = [p for p in parts if p.get("exact") is not True]
    if inexact:
        p = inexact[0]
        return False, (f"{len(inexact)} partition(s) not exact, e.g. {p['topic']}[{p['partition']}]: "
                       f"{p.get('reason') or 'records of an origin read again'}")
    moved = [p for p in parts if committed_now.get((p["topic"], p["partition"])) != p["offset"]]
    if moved:
        p = moved[0]
        return False, (f"{p['topic']}[{p['partition']}] committed {committed_now.get((p['topic'], p['partition']))}, "
                       f"certificate wrote {p['offset']} (re-run offsets sync)")
    return True, (f"{len(parts)} partition(s) exact by origin (two-origin: every origin's records consumed are "
                  f"covered, none read again), {cert['created_at']}")
