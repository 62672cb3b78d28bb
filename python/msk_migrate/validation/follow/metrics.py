"""Proof lag as Prometheus metrics: a tiny text exposition (format 0.0.4) served on 127.0.0.1 (``--metrics-bind``).

No client library: the follower publishes one snapshot of its gauges per pass (:meth:`Metrics.publish`)
and the HTTP thread renders that snapshot; a scrape never waits for a pass and never sees half of one.

Series (labels ``topic``, ``partition``):

- ``msk_migrate_proof_lag_records``: source offsets past the verified-up-to mark (end offset - mark);
- ``msk_migrate_proof_lag_seconds``: age of the oldest source record not yet proven (0 when caught up);
- ``msk_migrate_proof_records_proven_total``: records compared and matched below the mark (persisted with
  it, so it survives a restart);
- ``msk_migrate_proof_mismatch``: 1 when the partition stopped at a differing record (one the target holds
  and the source does not included: the lag series say 0 for it, this one says 1);
- ``msk_migrate_proof_truncated``: 1 when retention deleted source records past the mark.

And ``msk_migrate_proof_last_pass_timestamp_seconds``: when the follower last finished a pass.

Where copies are marked the follower compares per origin (docs/follow.md "Marked copies"), and says so:

- ``msk_migrate_proof_compare_per_origin{source_alias,target_alias}``: 1 (absent when every record is compared in
  order);
- ``msk_migrate_proof_origin_records_total{topic,partition,origin,side}``: records of each origin (a cluster alias)
  below the mark on each side: the source's origin on the source (its natives) and on the target (their copies,
  restart duplicates passed over included: compared), the target's origin on the source (records copied from the
  target, left out) and on the target (its natives): counted, never compared;
- ``msk_migrate_proof_duplicates_total{topic,partition}``: copies re-delivered by MM2 and passed over with
  ``--allow-duplicates`` (without it a duplicate stops the partition: ``msk_migrate_proof_mismatch`` 1).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_HELP = {
    "msk_migrate_proof_lag_records": ("gauge", "Source offsets past the verified-up-to mark."),
    "msk_migrate_proof_lag_seconds": ("gauge", "Age of the oldest source record not yet proven on the target."),
    "msk_migrate_proof_records_proven_total": ("counter", "Records compared and matched below the mark."),
    "msk_migrate_proof_mismatch": ("gauge", "1 when the partition's mark stopped at a differing record."),
    "msk_migrate_proof_truncated": ("gauge", "1 when source retention passed the mark (records never compared)."),
}


@dataclass(frozen=True, slots=True)
class PartitionSample:
    topic: str
    partition: int
    lag_records: int
    lag_seconds: float
    proven: int
    mismatch: bool
    truncated: bool
    #: per origin only: re-deliveries passed over, and the target origin's records below the mark per side
    duplicates: int = 0
    origin_target_source: int | None = None
    origin_target_target: int | None = None


def _label(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _per_origin(rows: list[PartitionSample], copy_marks: dict[str, str]) -> list[str]:
    src, tgt = copy_marks["source_alias"], copy_marks["target_alias"]
    out = ["# HELP msk_migrate_proof_compare_per_origin 1: copies are marked and each origin's records are compared apart.",
           "# TYPE msk_migrate_proof_compare_per_origin gauge",
           f'msk_migrate_proof_compare_per_origin{{source_alias="{_label(src)}",target_alias="{_label(tgt)}"}} 1',
           "# HELP msk_migrate_proof_origin_records_total Records of each origin below the mark, per side "
           "(the source's origin compared, the target's counted).",
           "# TYPE msk_migrate_proof_origin_records_total counter"]
    for s in rows:
        where = f'topic="{_label(s.topic)}",partition="{s.partition}"'
        for origin, side, n in ((src, "source", s.proven), (src, "target", s.proven + s.duplicates),
                                (tgt, "source", s.origin_target_source or 0), (tgt, "target", s.origin_target_target or 0)):
            out.append(f'msk_migrate_proof_origin_records_total{{{where},origin="{_label(origin)}",side="{side}"}} {n}')
    out += ["# HELP msk_migrate_proof_duplicates_total Copies re-delivered by MM2 passed over (--allow-duplicates).",
            "# TYPE msk_migrate_proof_duplicates_total counter"]
    out += [f'msk_migrate_proof_duplicates_total{{topic="{_label(s.topic)}",partition="{s.partition}"}} {s.duplicates}'
            for s in rows]
    return out


def exposition(samples: Iterable[PartitionSample], last_pass_s: float | None,
               copy_marks: dict[str, str] | None = None) -> str:
    """The text exposition of one snapshot (``copy_marks``: the follower compares per origin with these aliases)."""
    rows = list(samples)
    out: list[str] = []
    values = {
        "msk_migrate_proof_lag_records": lambda s: s.lag_records,
        "msk_migrate_proof_lag_seconds": lambda s: round(s.lag_seconds, 3),
        "msk_migrate_proof_records_proven_total": lambda s: s.proven,
        "msk_migrate_proof_mismatch": lambda s: int(s.mismatch),
        "msk_migrate_proof_truncated": lambda s: int(s.truncated),
    }
    for name, value in values.items():
        kind, text = _HELP[name]
        out.append(f"# HELP {name} {text}")
        out.append(f"# TYPE {name} {kind}")
        for s in rows:
            out.append(f'{name}{{topic="{_label(s.topic)}",partition="{s.partition}"}} {value(s)}')
    if copy_marks is not None:
        out += _per_origin(rows, copy_marks)
    out.append("# HELP msk_migrate_proof_last_pass_timestamp_seconds When the follower last finished a pass.")
    out.append("# TYPE msk_migrate_proof_last_pass_timestamp_seconds gauge")
    if last_pass_s is not None:
        out.append(f"msk_migrate_proof_last_pass_timestamp_seconds {last_pass_s:.3f}")
    return "\n".join(out) + "\n"


class Metrics:
    """The current snapshot, and (``serve``) the HTTP endpoint that renders it at ``/metrics``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._body = exposition([], None).encode()
        self._server: ThreadingHTTPServer | None = None

    def publish(self, samples: Iterable[PartitionSample], last_pass_s: float | None,
                copy_marks: dict[str, str] | None = None) -> None:
        body = exposition(samples, last_pass_s, copy_marks).encode()
        with self._lock:
            self._body = body

    def body(self) -> bytes:
        with self._lock:
            return self._body

    def serve(self, port: int, host: str = "127.0.0.1") -> int:
        """Serve on ``host:port`` (0: any free port) in a daemon thread; returns the port."""
        metrics = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] not in ("/metrics", "/"):
                    self.send_error(404)
                    return
                body = metrics.body()
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return  # scrapes stay off the console

        self._server = ThreadingHTTPServer((host, port), Handler)
        # close() (shutdown) waits out one poll of the serving loop: 0.1 s, not the default 0.5 s, per stop
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="proof-metrics",
                         daemon=True).start()
        return int(self._server.server_address[1])

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
