"""The offset certificate: what it carries, its digest, the cutover gate's check, and S3 (moto's server: the aws tier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.offset_translation import certificate as cert
from msk_migrate.offset_translation.evidence import PartitionRead, Span
from msk_migrate.offset_translation.planner import Action, Decision, Matched, PartitionPlan, Placement, Proof, Unproven


def _proof(method: str = "exact", offset: int = 42) -> PartitionPlan:
    read = PartitionRead("orders", 0, "orders", 40, Span(0, 100), Span(0, 102), checkpoint=30)
    if method == "exact":
        d = Decision(Placement.EXACT, offset, proof=Proof((Matched(40, 42, 123),), (), (), (), 0, 1))
    else:
        d = Decision(Placement.CHECKPOINT_FALLBACK, offset, Unproven.CONTENT_DIFFERS)
    return PartitionPlan(read, d, None, Action.WRITE)


def test_certificate_carries_the_proof_and_the_gate_accepts_only_what_is_committed_now(tmp_path):
    c = cert.build("billing", "source->target", "src:9092", "tgt:9092", [_proof()], written=True, dry_run=False)
    assert c["verdict"] == "exact" and c["totals"]["records_matched"] == 1 and c["totals"]["redelivered"] == 0
    paths = cert.write(c, str(tmp_path))
    assert paths[0].endswith("offset-certificate-billing.json") and "Verdict: exact" in Path(paths[1]).read_text()
    back = cert.read(str(tmp_path), "billing")
    assert cert.check(back, "billing", {("orders", 0): 42})[0]
    ok, why = cert.check(back, "billing", {("orders", 0): 30})
    assert not ok and "re-run offsets sync" in why
    assert not cert.check(back, "other", {("orders", 0): 42})[0]
    tampered = {**back, "partitions": [{**back["partitions"][0], "target_offset": 43}]}
    assert "digest" in cert.check(tampered, "billing", {("orders", 0): 43})[1]
    dry = cert.build("billing", "source->target", "s", "t", [_proof()], written=False, dry_run=True)
    assert "dry run" in cert.check(dry, "billing", {("orders", 0): 42})[1]
    partial = cert.build("billing", "source->target", "s", "t", [_proof("checkpoint", 30)], written=True, dry_run=False)
    assert partial["verdict"] == "not-proven" and not cert.check(partial, "billing", {("orders", 0): 30})[0]


def test_the_gate_refuses_a_certificate_of_a_move_to_another_cluster_and_says_when_one_names_none():
    """A certificate names the clusters the group moved from and to (their ids): the gate accepts it only for the
    cluster it checks (another environment's certificate of a group with the same name and offsets is refused); one
    written before certificates named their clusters is checked on its content and says so."""
    ids = {"from_cluster_id": "SRC-ID", "to_cluster_id": "TGT-ID"}
    bound = cert.build("billing", "source->target", "s", "t", [_proof()], written=True, dry_run=False, ids=ids)
    assert bound["to_cluster_id"] == "TGT-ID" and bound["from_cluster_id"] == "SRC-ID"
    ok, why = cert.check(bound, "billing", {("orders", 0): 42}, "TGT-ID")
    assert ok and "names no cluster" not in why, why
    ok, why = cert.check(bound, "billing", {("orders", 0): 42}, "PROD-TGT-ID")
    assert not ok and "move to cluster TGT-ID, not to this flow's PROD-TGT-ID" in why, why
    edited = {**bound, "to_cluster_id": "PROD-TGT-ID"}  # the id is sealed by the digest like the rest
    assert "digest" in cert.check(edited, "billing", {("orders", 0): 42}, "PROD-TGT-ID")[1]
    older = cert.build("billing", "source->target", "s", "t", [_proof()], written=True, dry_run=False)
    ok, why = cert.check(older, "billing", {("orders", 0): 42}, "TGT-ID")
    assert ok and "names no cluster" in why, why


def test_unreadable_or_foreign_certificates_are_one_line_errors(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        cert.read(str(tmp_path / "missing.json"))
    (tmp_path / "x.json").write_text(json.dumps({"verdict": "match"}))
    with pytest.raises(UsageError, match="not an offset translation certificate"):
        cert.read(str(tmp_path / "x.json"))


def test_certificate_round_trips_through_s3(monkeypatch, moto_url):
    import boto3

    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                 "AWS_ENDPOINT_URL": moto_url}.items():
        monkeypatch.setenv(k, v)
    boto3.client("s3").create_bucket(Bucket="proofs")
    c = cert.build("billing", "target->source", "t", "s", [_proof()], written=True, dry_run=False)
    cert.check_destination("s3://proofs/offsets/", "billing")
    locs = cert.write(c, "s3://proofs/offsets/")
    assert locs == ["s3://proofs/offsets/offset-certificate-billing.json", "s3://proofs/offsets/offset-certificate-billing.html"]
    assert cert.read("s3://proofs/offsets/", "billing")["digest"] == c["digest"]
    with pytest.raises(UsageError, match="--certificate"):
        cert.check_destination("s3://no-such-bucket/x/")
