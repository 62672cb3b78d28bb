"""``validate --follow`` where copies are marked (issue 47), on the real local clusters: the follower compares per
origin, as the batch ``validate`` of the same flow does, and says so.

Most topics are written the way two marked flows (``onprem -> msk`` and ``msk -> onprem``) leave them, without MM2
(as tests/validation/test_validation_multiset.py writes them): each side's natives and the other side's natives as
copies (trailing mark ``msk-migrate.copied-from.<origin>``), interleaved differently on each side. The last test runs
a real marked MirrorSourceConnector on the session's Connect worker. What is checked: the source's origin is proven
in order (every copy, mark removed, against the source's natives), the target's origin counted (records copied from
the target on the source, the target's natives) and never compared; a reordered, lost or wrongly marked copy stops
its partition where the batch verdict fails it; an MM2 restart's re-delivered copy is named ``duplicates`` (or passed
over and counted with ``--allow-duplicates``), never passed silently; the report, the mark, the metrics and a gate
reading the mark say that it compared per origin and give the origin counts (docs/follow.md "Marked copies").
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from tests.kafka_helpers import BASE_TS, Rec, create_topic, end_offsets, produce, wait_until
from validation_helpers import make_request

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.commands.validate import run_cli
from msk_migrate.runbook.proof_mark import check_proof_mark
from msk_migrate.topology.marks import mark_header
from msk_migrate.validation.request import CopyMarks

REPO = Path(__file__).resolve().parents[2]
SRC, TGT = "onprem", "msk"
N = 10
CASES = ("same", "swapped", "lost", "bad-mark", "rerun")


def _native(origin: str, p: int, i: int) -> Rec:
    headers = (("trace", f"{origin}{i}".encode()),) if i % 3 == 0 else ()
    return Rec(p, f"{origin}-{p}-{i}".encode(), f"v{i}".encode(), headers, BASE_TS + 7 * i + (1 if origin == TGT else 0))


def _copy(r: Rec, origin: str) -> Rec:
    return r.with_(headers=(*r.headers, (mark_header(origin), origin.encode())))


def _side(side: str, peer: str, p: int, order: str, copies: list[Rec]) -> list[Rec]:
    """``order``: "n" the next native of ``side``, "c" the next of ``copies``."""
    nat = iter(_native(side, p, i) for i in range(N))
    cop = iter(copies)
    return [next(nat) if c == "n" else next(cop) for c in order]


@pytest.fixture(scope="module")
def topics(clusters):
    """One two-partition topic per case; partition 1 is right in every case, partition 0 carries the case. The
    source (onprem) alternates its natives with msk's copies; the target (msk) holds 4 natives, onprem's copies,
    then its 6 other natives."""
    out = {}
    for case in CASES:
        topic = f"follow-marks-{case}-{time.time_ns()}"
        for bs in clusters.values():
            create_topic(bs, topic, partitions=2)
        for p in (0, 1):
            src = _side(SRC, TGT, p, "nc" * N, [_copy(_native(TGT, p, i), TGT) for i in range(N)])
            copies: list[Rec | None] = [_copy(_native(SRC, p, i), SRC) for i in range(N)]
            if p == 0 and case == "swapped":
                copies[3], copies[4] = copies[4], copies[3]
            if p == 0 and case == "lost":
                copies[5] = None
            if p == 0 and case == "bad-mark":
                own = _native(SRC, p, 3)  # the mark before the record's own header
                copies[3] = own.with_(headers=((mark_header(SRC), SRC.encode()), *own.headers))
            if p == 0 and case == "rerun":  # a restarted task copies onprem's 3, 4, 5 again after 5
                copies = copies[:6] + copies[3:6] + copies[6:]
            kept = [c for c in copies if c is not None]
            tgt = _side(TGT, SRC, p, "n" * 4 + "c" * len(kept) + "n" * (N - 4), kept)
            produce(clusters["source"], topic, src)
            produce(clusters["target"], topic, tgt)
        out[case] = topic
    return out


def _args(clusters, topic: str, mark: Path, *extra: str) -> list[str]:
    return ["--follow", "--source-bootstrap", clusters["source"], "--target-bootstrap", clusters["target"],
            "--topic", topic, "--mark", str(mark), *extra]


def _once(capfd, clusters, topic: str, mark: Path, *extra: str, marks: bool = True) -> tuple[int, dict]:
    capfd.readouterr()
    code = run_cli([*_args(clusters, topic, mark, *extra), *(["--copy-marks", f"{SRC},{TGT}"] if marks else []),
                    "--once", "--output", "json"])
    out, err = capfd.readouterr()
    return code, {**(json.loads(out) if out.strip() else {}), "stderr": err}


def _batch(clusters, topic: str, **kw):
    from msk_migrate.validation import run_validation

    until = int(time.time() * 1000) + 600_000
    return run_validation(make_request(clusters, topics=[topic], until_timestamp_ms=until, engine="native",
                                       marks=CopyMarks(source_alias=SRC, target_alias=TGT), compare="multiset", **kw))


def _origins(n_src: int, n_tgt: int, left_out: int, natives: int) -> dict:
    return {SRC: {"source": n_src, "target": n_tgt, "compared": True},
            TGT: {"source": left_out, "target": natives, "compared": False}}


def test_both_origins_interleaved_differently_are_proven_per_origin_with_each_origins_counts_as_the_batch_matches(
        clusters, topics, tmp_path, capfd):
    topic = topics["same"]
    code, doc = _once(capfd, clusters, topic, tmp_path / "mark.json")
    assert (code, doc.get("verdict")) == (0, "proven"), doc
    assert json_shape_problems(doc) == []
    assert doc["compare"] == "per-origin" and doc["copy_marks"] == {"source_alias": SRC, "target_alias": TGT}
    for r in doc["rows"]:
        assert (r["state"], r["compared"], r["source_verified_up_to"], r["target_verified_up_to"]) == \
            ("following", N, 2 * N, 2 * N), r
        assert r["origins"] == _origins(N, N, N, N), r
    assert doc["origins"] == _origins(2 * N, 2 * N, 2 * N, 2 * N)
    mark = json.loads((tmp_path / "mark.json").read_text())
    assert mark["compare"] == "per-origin" and mark["topics"][topic]["partitions"]["0"]["origin_target"] == \
        {"source": N, "target": N}
    rep = _batch(clusters, topic)  # the batch per-origin comparison of the same data
    assert rep.verdict == "match", [p.differences for p in rep.topic(topic).partitions]
    for p in rep.topic(topic).partitions:  # the same origin counts
        assert (p.source.copy_marks["natives"], p.source.copy_marks["stripped"]) == (N, N)
        assert (p.target.copy_marks["stripped"], p.target.copy_marks["natives"]) == (N, N)


@pytest.mark.parametrize("case, category, source_offset, target_offset", [
    ("swapped", "reordered", 6, 7),  # onprem's 3 (source offset 6) is the 5th copy (target offset 4 + 4)
    ("lost", "missing", 10, 9),  # onprem's 5 (source offset 10) never copied: its place holds onprem's 6
    ("bad-mark", "copy_mark", 6, 7),  # onprem's 3 copied with its mark first
])
def test_a_reordered_lost_or_wrongly_marked_copy_stops_its_partition_there_as_the_batch_verdict_fails_it(
        clusters, topics, tmp_path, capfd, case, category, source_offset, target_offset):
    topic = topics[case]
    code, doc = _once(capfd, clusters, topic, tmp_path / "mark.json")
    assert (code, doc.get("verdict")) == (1, "mismatch"), doc
    p0, p1 = sorted(doc["rows"], key=lambda r: r["partition"])
    assert p1["state"] == "following" and p1["origins"] == _origins(N, N, N, N), p1
    m = p0["mismatch"]
    assert (p0["state"], m["category"], m["source_offset"], m["target_offset"]) == \
        ("mismatch", category, source_offset, target_offset), p0
    # the mark stops there: below it every record of the source's origin matched, the target's was counted
    assert (p0["source_verified_up_to"], p0["target_verified_up_to"]) == (source_offset, target_offset)
    assert p0["compared"] == source_offset // 2 and p0["origins"][TGT]["target"] == 4, p0
    rep = _batch(clusters, topic)
    bp0, bp1 = rep.topic(topic).partitions
    assert rep.verdict == "mismatch" and bp0.status == "mismatch" and bp1.status == "match", bp0.differences
    gate = check_proof_mark(str(tmp_path / "mark.json"), {(topic, p): 2 * N for p in (0, 1)}, "the end offsets", 600)
    assert not gate.ok and f"mismatch: {category}" in gate.evidence, gate


def test_a_copy_an_mm2_restart_wrote_again_is_named_duplicates_or_passed_over_and_counted_with_allow_duplicates(
        clusters, topics, tmp_path, capfd):
    topic = topics["rerun"]
    code, doc = _once(capfd, clusters, topic, tmp_path / "strict.json")
    assert (code, doc.get("verdict")) == (1, "mismatch"), doc
    p0 = next(r for r in doc["rows"] if r["partition"] == 0)
    assert (p0["mismatch"]["category"], p0["mismatch"]["target_offset"]) == ("duplicates", 10), p0  # 4 natives + 6 copies
    assert _batch(clusters, topic).topic(topic).partitions[0].status == "mismatch"  # the batch fails it too
    code, doc = _once(capfd, clusters, topic, tmp_path / "lenient.json", "--allow-duplicates")
    assert (code, doc.get("verdict")) == (0, "proven"), doc
    p0, p1 = sorted(doc["rows"], key=lambda r: r["partition"])
    assert (p0["duplicates"], p0["compared"], p0["target_verified_up_to"]) == (3, N, 2 * N + 3), p0
    assert p0["origins"] == _origins(N, N + 3, N, N) and "duplicates" not in p1, p0


def test_a_per_origin_mark_is_continued_only_by_a_follower_comparing_per_origin(clusters, topics, tmp_path, capfd):
    topic = topics["same"]
    code, _ = _once(capfd, clusters, topic, tmp_path / "per-origin.json")
    assert code == 0
    code, doc = _once(capfd, clusters, topic, tmp_path / "per-origin.json", marks=False)
    assert code == 2 and doc["stderr"].count("\n") == 1 and "--mark" in doc["stderr"] and "per origin" in doc["stderr"], doc
    code, doc = _once(capfd, clusters, topic, tmp_path / "in-order.json", marks=False)  # every copy carries its mark
    assert (code, doc.get("verdict")) == (1, "mismatch") and doc["compare"] == "records", doc
    code, doc = _once(capfd, clusters, topic, tmp_path / "in-order.json")
    assert code == 2 and "--mark" in doc["stderr"] and "every record in order" in doc["stderr"], doc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _metric_lines(url: str, name: str) -> list[str]:
    return [line for line in requests.get(url, timeout=5).text.splitlines() if line.startswith(name + "{")]


def test_a_running_follower_serves_per_origin_metrics_and_the_gate_takes_its_mark_saying_so(clusters, topics, tmp_path):
    topic = topics["same"]
    mark, port = tmp_path / "running.json", _free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    cmd = [sys.executable, "-m", "msk_migrate.commands", "validate", *_args(clusters, topic, mark),
           "--copy-marks", f"{SRC},{TGT}", "--interval", "1", "--metrics-port", str(port)]
    log = tmp_path / "follower.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        def proven() -> bool:
            try:
                return len([x for x in _metric_lines(url, "msk_migrate_proof_records_proven_total")
                            if f'topic="{topic}"' in x and x.endswith(f" {N}")]) == 2
            except requests.RequestException:
                return False

        wait_until(proven, 120, what="the running follower proving both partitions")
        assert _metric_lines(url, "msk_migrate_proof_compare_per_origin") == \
            [f'msk_migrate_proof_compare_per_origin{{source_alias="{SRC}",target_alias="{TGT}"}} 1']
        origin = set(_metric_lines(url, "msk_migrate_proof_origin_records_total"))
        for p in (0, 1):
            for o, side in ((SRC, "source"), (SRC, "target"), (TGT, "source"), (TGT, "target")):
                assert f'msk_migrate_proof_origin_records_total{{topic="{topic}",partition="{p}",origin="{o}",' \
                       f'side="{side}"}} {N}' in origin, origin
        assert all(x.endswith(" 0") for x in _metric_lines(url, "msk_migrate_proof_duplicates_total"))
    except Exception as exc:
        exc.add_note(log.read_text(errors="replace")[-3000:])
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    gate = check_proof_mark(str(mark), {(topic, p): 2 * N for p in (0, 1)}, "the end offsets", 600)
    assert gate.ok and f"compared per origin ({SRC} in order; {4 * N} record(s) of {TGT} counted" in gate.evidence, gate
    assert f"{2 * N} record(s) proven" in gate.evidence, gate


# ---- a real marked MM2 flow ----------------------------------------------------------------------------------------

def test_a_real_marked_mm2_flow_is_proven_per_origin_and_a_second_pass_resumes_counting_only_the_new_records(
        local_env, tmp_path, capfd):
    from tests.integration.mm2_flows import apply_source, flow, source_config

    from msk_migrate.connect_api.rest import ConnectClient

    src_ep, tgt_ep = local_env.source(), local_env.target()
    src, tgt, s_alias, t_alias = src_ep.bootstrap_servers, tgt_ep.bootstrap_servers, src_ep.alias, tgt_ep.alias
    connect = ConnectClient(local_env.status()["connect"]["url"])
    topic = f"follow-marks-mm2-{os.urandom(4).hex()}"
    create_topic(src, topic, partitions=2)

    def write(round_: int, n: int) -> None:
        """Per partition ``n`` source natives with two records that came from the target among them (the reverse
        flow's copies: the forward flow's filter skips them)."""
        for p in (0, 1):
            nat = [Rec(p, f"r{round_}-{p}-{i}".encode(), f"v{i}".encode(), (("h", b"1"),) if i % 2 else (),
                       BASE_TS + 1000 * round_ + i) for i in range(n)]
            back = [Rec(p, f"back{round_}-{p}-{i}".encode(), b"from the target", ((mark_header(t_alias), t_alias.encode()),),
                        BASE_TS + 1000 * round_ + 500 + i) for i in range(2)]
            produce(src, topic, nat[: n // 2] + back + nat[n // 2:])

    write(0, 20)
    spec = flow(f"fmarks{topic[-8:]}", [topic], tasks_max=1, mark_copies=True)
    cfgs = source_config(local_env, spec)
    apply_source(connect, cfgs)
    try:
        wait_until(lambda: sum(end_offsets(tgt, topic).values() or [0]) >= 40, 120, what="MM2 copied round 0")
        produce(tgt, topic, [Rec(p, f"own-{p}-{i}".encode(), b"written on the target", (), BASE_TS + 5000 + i)
                             for p in (0, 1) for i in range(3)])  # the target's natives
        mark = tmp_path / "mark.json"
        capfd.readouterr()
        args = ["--follow", "--source-bootstrap", src, "--target-bootstrap", tgt, "--topic", topic, "--mark", str(mark),
                "--copy-marks", f"{s_alias},{t_alias}", "--once", "--output", "json"]
        code = run_cli(args)
        out, err = capfd.readouterr()
        doc = json.loads(out) if out.strip() else {"stderr": err}
        assert (code, doc.get("verdict")) == (0, "proven"), doc
        for r in doc["rows"]:
            assert (r["compared"], r["origins"][t_alias]) == (20, {"source": 2, "target": 3, "compared": False}), r
            assert r["proven_this_run"] == 20 and r["source_verified_up_to"] == 22, r
        write(1, 10)
        wait_until(lambda: sum(end_offsets(tgt, topic).values() or [0]) >= 40 + 6 + 20, 120, what="MM2 copied round 1")
        code = run_cli(args)
        out, err = capfd.readouterr()
        doc = json.loads(out) if out.strip() else {"stderr": err}
        assert (code, doc.get("verdict")) == (0, "proven"), doc
        for r in doc["rows"]:
            assert (r["compared"], r["proven_this_run"], r["source_verified_up_to"]) == (30, 10, 34), r
            assert r["origins"] == {s_alias: {"source": 30, "target": 30, "compared": True},
                                    t_alias: {"source": 4, "target": 3, "compared": False}}, r
            assert r["resumed_from"][0] == 22, r
        assert doc["origins"][s_alias] == {"source": 60, "target": 60, "compared": True}
    finally:
        with contextlib.suppress(Exception):
            connect.delete(spec.connector_names()["source"])
