"""`cutover check` takes a validation report only as evidence for the groups it gates: each condition
the report fails is named (the live clusters are exercised in tests/integration/test_guards.py)."""

from __future__ import annotations

from msk_migrate.runbook.evidence import GateEvidence, report_problems


def _report(**over) -> dict:
    rep = {
        "verdict": "match",
        "window": {"kind": "timestamps", "until_timestamp_ms": 2_000, "until": "T"},
        "source": {"cluster_id": "SRC", "bootstrap_servers": "s:1"},
        "target": {"cluster_id": "TGT", "bootstrap_servers": "t:1"},
        "topics_covered": ["orders"],
        "topics": [{"topic": "orders", "partitions": [
            {"partition": 0, "source_count": 5, "source_log": {"has_records": True}, "source": {"end_offset": 5}},
            {"partition": 1, "source_count": 0, "source_log": {"has_records": False}, "source": {"end_offset": 0}},
        ]}],
    }
    rep.update(over)
    return rep


EVIDENCE = GateEvidence(["orders"], {("orders", 0): 5}, "SRC", "TGT", {("orders", 0): 1_500})


def test_a_report_covering_the_groups_topics_on_the_flows_clusters_is_evidence():
    assert report_problems(_report(), EVIDENCE) == []


def test_each_failing_condition_is_named():
    ev = GateEvidence(["orders", "customers"], {("orders", 0): 5}, "SRC", "OTHER", {("orders", 0): 2_500})
    rep = _report(verdict="no-evidence", verdict_reason="0 record(s) compared")
    rep["topics"][0]["partitions"][0]["source_count"] = 0
    problems = report_problems(rep, ev)
    assert problems[0] == "verdict no-evidence (0 record(s) compared)"
    assert "does not cover topic(s) the group consumes: customers" in problems
    assert "comes from another target cluster: report TGT (t:1), flow OTHER" in problems
    assert "compared no record in 1 partition(s) that hold records: orders[0]" in problems
    assert any(p.startswith("window ends (T) before the group's last commit: orders[0]") for p in problems)
    assert not any("orders[1]" in p for p in problems)  # an empty partition needs no record


def test_an_older_report_without_cluster_ids_is_not_evidence():
    rep = _report(source={"bootstrap_servers": "s:1"})
    assert report_problems(rep, EVIDENCE) == ["records no source cluster id (written by an older msk-migrate): validate again"]


def test_an_offsets_snapshot_must_reach_the_groups_commits():
    rep = _report(window={"kind": "offsets", "partitions": 2})
    assert report_problems(rep, EVIDENCE) == []
    ev = GateEvidence(["orders"], {("orders", 0): 7}, "SRC", "TGT", {})
    assert report_problems(rep, ev) == ["window ends before the group's last commit: orders[0] snapshot end 5 < committed 7"]
