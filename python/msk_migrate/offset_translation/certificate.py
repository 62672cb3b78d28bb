"""The proof of one group's move: a certificate (JSON + readable HTML), written to a path or S3, and the
check ``cutover check --certificate`` runs on it.

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
import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..s3uri import is_s3_uri, split_s3_uri
from .plan import PartitionProof

KIND = "msk-migrate offset translation certificate"
VERSION = 1


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def build(group: str, direction: str, frm: str, to: str, proofs: list[PartitionProof], written: bool,
          dry_run: bool) -> dict[str, Any]:
    parts = [p.to_dict() for p in proofs]
    exact = sum(p.proven for p in proofs)
    body = {
        "kind": KIND, "version": VERSION, "group": group, "direction": direction, "from": frm, "to": to,
        "created_at": dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z"),
        "dry_run": dry_run, "written": written,
        "verdict": "exact" if proofs and exact == len(proofs) else ("partial" if exact else "not-proven"),
        "totals": {"partitions": len(proofs), "exact": exact,
                   "checkpoint": sum(p.method == "checkpoint" for p in proofs),
                   "none": sum(p.method == "none" for p in proofs),
                   "redelivered": sum(p.redelivery or 0 for p in proofs if p.proven),
                   "duplicates": sum(len(p.duplicates) for p in proofs),
                   "records_matched": sum(len(p.matched) for p in proofs)},
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


def check_destination(dest: str) -> None:
    """Refuse an unwritable ``--certificate`` before anything is committed."""
    if is_s3_uri(dest):
        bucket, _ = split_s3_uri(dest, "--certificate")
        try:
            import boto3

            boto3.client("s3").head_bucket(Bucket=bucket)
        except Exception as exc:
            raise UsageError("--certificate", f"cannot write to bucket {bucket!r}: {str(exc).splitlines()[0]}",
                             "check the bucket name and s3:PutObject access") from None
        return
    path = Path(dest)
    parent = path.parent if path.suffix == ".json" else path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError("--certificate", f"cannot write {dest}", "give a writable directory or .json path")


def write(cert: dict[str, Any], dest: str) -> list[str]:
    """Write ``<dest>`` (a .json path, a directory, or s3://bucket/prefix) and its HTML next to it."""
    name = f"offset-certificate-{cert['group']}"
    body = json.dumps(cert, indent=2, sort_keys=True) + "\n"
    page = render_html(cert)
    try:
        if is_s3_uri(dest):
            import boto3

            bucket, key = split_s3_uri(dest, "--certificate")
            key = key if key.endswith(".json") else f"{key.rstrip('/')}/{name}.json".lstrip("/")
            client = boto3.client("s3")
            client.put_object(Bucket=bucket, Key=key, Body=body.encode(), ContentType="application/json")
            client.put_object(Bucket=bucket, Key=key[:-5] + ".html", Body=page.encode(), ContentType="text/html")
            return [f"s3://{bucket}/{key}", f"s3://{bucket}/{key[:-5]}.html"]
        path = Path(dest)
        if path.suffix != ".json":
            path.mkdir(parents=True, exist_ok=True)
            path = path / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        path.with_suffix(".html").write_text(page)
        return [str(path), str(path.with_suffix(".html"))]
    except UsageError:
        raise
    except OSError as exc:
        raise UsageError("--certificate", f"cannot write {dest}: {exc.strerror or exc}", "give a writable path") from None
    except Exception as exc:
        raise UsageError("--certificate", f"cannot write {dest}: {str(exc).splitlines()[0]}",
                         "check the S3 URI and your credentials (s3:PutObject)") from None


def read(location: str, group: str | None = None) -> dict[str, Any]:
    """A certificate from a .json path, a directory (``offset-certificate-<group>.json``) or s3:// URI."""
    name = f"offset-certificate-{group}.json" if group else None
    try:
        if is_s3_uri(location):
            import boto3

            bucket, key = split_s3_uri(location, "--certificate")
            if not key.endswith(".json"):
                key = f"{key.rstrip('/')}/{name}".lstrip("/")
            raw = boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
        else:
            path = Path(location)
            if path.is_dir() and name:
                path = path / name
            raw = path.read_bytes()
        cert = json.loads(raw)
    except UsageError:
        raise
    except FileNotFoundError:
        raise UsageError("--certificate", f"{location} not found", "pass the certificate written by `msk-migrate offsets sync --certificate`") from None
    except (ValueError, OSError) as exc:
        raise UsageError("--certificate", f"cannot read {location}: {str(exc).splitlines()[0]}",
                         "pass the JSON certificate of `msk-migrate offsets sync`") from None
    except Exception as exc:
        raise UsageError("--certificate", f"cannot read {location}: {str(exc).splitlines()[0]}",
                         "check the S3 URI and your credentials") from None
    if not isinstance(cert, dict) or cert.get("kind") != KIND:
        raise UsageError("--certificate", f"{location} is not an offset translation certificate",
                         "pass the JSON certificate of `msk-migrate offsets sync`")
    return cert


def check(cert: dict[str, Any], group: str, committed_now: dict[tuple[str, int], int]) -> tuple[bool, str]:
    """Whether ``cert`` proves ``group``'s current offsets on the cluster it moved to: intact, for this
    group, written (not a dry run), every partition exact, and the committed offsets still the ones written."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    if _digest(body) != cert.get("digest"):
        return False, "digest does not match its content (edited?)"
    if cert.get("group") != group:
        return False, f"certificate is for group {cert.get('group')!r}"
    if not cert.get("written"):
        return False, "certificate of a dry run (nothing was written)"
    parts = cert.get("partitions") or []
    if not parts:
        return False, "certificate covers no partition"
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
    for g in groups:
        ok, why = check(read(location, g), g, session.committed(g))
        if not ok:
            return False, f"{g}: {why} ({location})"
        notes.append(f"{g}: {why}")
    return True, "; ".join(notes)
