"""The cutover gate's reading of a proof mark: at or past the commit points / fenced end offsets on
every partition, on the flow's clusters, fresh; which evidence it used (no server)."""

from __future__ import annotations

import json

from msk_migrate.runbook.evidence import GateEvidence
from msk_migrate.runbook.proof_mark import check_proof_mark, is_proof_mark, validation_evidence
from msk_migrate.validation.follow.mark import Mark, PartitionMark, TopicMark
from msk_migrate.validation.follow.store import MarkStore

NOW = 1_800_000_000_000


def saved(tmp_path, offsets=(100, 50), state="following", updated_ms=NOW - 5_000):
    tm = TopicMark("orders", 2, 2, partitions={p: PartitionMark(o, o, compared=o, state=state) for p, o in enumerate(offsets)})
    if state == "mismatch":
        tm.partitions[0].mismatch = {"category": "changed", "source_offset": 100, "target_offset": 100, "changed": ["value"]}
    mark = Mark("mm2", "SRC", "TGT", {"orders": tm}, updated_ms)
    MarkStore(str(tmp_path)).save(mark)
    return str(tmp_path)


def test_a_mark_at_or_past_every_commit_point_passes_and_says_it_is_the_evidence(tmp_path):
    c = check_proof_mark(saved(tmp_path), {("orders", 0): 100, ("orders", 1): 40}, "the groups' commit points", 3600,
                         "SRC", "TGT", now_ms=NOW)
    assert c.ok, c.evidence
    assert c.name == "proof mark"
    assert c.evidence.startswith("evidence: proof mark at or past the groups' commit points on 2 partition(s), 150 record(s) proven")


def test_a_mark_behind_one_fenced_end_offset_fails_naming_the_partition(tmp_path):
    c = check_proof_mark(saved(tmp_path), {("orders", 0): 100, ("orders", 1): 51}, "the fenced end offsets", 3600, now_ms=NOW)
    assert not c.ok and "behind the fenced end offsets on 1 partition(s): orders[1] verified up to 50 < 51" in c.evidence


def test_a_mismatch_stops_the_gate_with_the_first_differing_record(tmp_path):
    c = check_proof_mark(saved(tmp_path, state="mismatch"), {("orders", 0): 10}, "the groups' commit points", 3600, now_ms=NOW)
    assert not c.ok and "orders[0] mismatch: changed at source offset 100, target offset 100" in c.evidence


def test_a_mark_of_other_clusters_a_stale_mark_and_an_uncovered_partition_fail(tmp_path):
    loc = saved(tmp_path, updated_ms=NOW - 7200_000)
    c = check_proof_mark(loc, {("orders", 0): 1, ("payments", 0): 1}, "the groups' commit points", 3600, "OTHER", None, now_ms=NOW)
    assert not c.ok
    for words in ("made on another source cluster", "does not cover 1 partition(s): payments[0]", "persisted 120 min old"):
        assert words in c.evidence


def test_nothing_to_prove_is_never_a_pass(tmp_path):
    assert not check_proof_mark(saved(tmp_path), {}, "the groups' commit points", 3600, now_ms=NOW).ok


def test_no_mark_at_the_location_fails_saying_how_to_make_one(tmp_path):
    c = check_proof_mark(str(tmp_path / "none"), {("orders", 0): 1}, "the groups' commit points", 3600)
    assert not c.ok and "validate --follow" in c.evidence


def test_the_gate_reads_a_mark_or_a_batch_report_from_the_same_option(tmp_path):
    loc = saved(tmp_path / "m", updated_ms=0)
    assert is_proof_mark(loc) and is_proof_mark(loc + "/proof-mark.json")
    ev = GateEvidence(["orders"], {("orders", 0): 100}, "SRC", "TGT", {})
    assert validation_evidence(loc, 3600, ev).name == "proof mark"
    rep = tmp_path / "r" / "report.json"
    rep.parent.mkdir()
    rep.write_text(json.dumps({"verdict": "mismatch", "run": {}}))
    assert not is_proof_mark(str(rep.parent))
    assert validation_evidence(str(rep.parent), 3600, ev).name == "validation report"
