"""`cutover confirm` records "producers moved" only on a producer certificate of this flow's clusters: another
environment's certificate of topics with the same names (passed with --certificate) is refused by the clusters it
names, before any cluster is read (the session here holds only what the gate needs before that)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from msk_migrate.config.flow import Found
from msk_migrate.errors import UsageError
from msk_migrate.ledger import Change, open_ledger
from msk_migrate.runbook.producers.cutover import confirm_wave
from msk_migrate.runbook.producers.gate import KIND, _digest
from msk_migrate.runbook.producers.wave import Wave


def _certificate(path, source_id: str, target_id: str) -> str:
    body = {"kind": KIND, "verdict": "ready", "topics": ["orders"], "source_cluster_id": source_id,
            "target_cluster_id": target_id, "partitions": [{"topic": "orders", "partition": 0, "source_end_offset": 5,
                                                            "target_offset": 5}]}
    path.write_text(json.dumps({**body, "digest": _digest(body)}))
    return str(path)


class _Unreachable:
    def __getattr__(self, name):
        raise AssertionError(f"a cluster was asked ({name}) before the certificate was refused")


@pytest.mark.parametrize("role", ["source", "target"])
def test_confirm_refuses_a_producer_certificate_of_other_clusters_before_reading_any(tmp_path, role):
    ledger = open_ledger(str(tmp_path / "ledger"), "m")
    ledger.append(ledger.read(), [Change("topic", "orders", "fenced")], "cutover fence")
    s = SimpleNamespace(found=Found("SRC", "TGT"), source=_Unreachable(), target=_Unreachable(), migration=None)
    ids = {"source": "SRC", "target": "TGT", role: "PROD"}
    foreign = _certificate(tmp_path / "foreign.json", ids["source"], ids["target"])
    with pytest.raises(UsageError) as err:
        confirm_wave(s, ledger, Wave.of(None, ["orders"]), timeout=1, talked_to={}, certificate=foreign)  # type: ignore[arg-type]
    assert err.value.field == "--certificate" and f"{role} cluster PROD, not of this flow's" in str(err.value)


def test_confirm_goes_on_to_the_clusters_with_this_flows_certificate(tmp_path):
    from msk_migrate.config.migration import MigrationSpec

    ledger = open_ledger(str(tmp_path / "ledger"), "m")
    ledger.append(ledger.read(), [Change("topic", "orders", "fenced")], "cutover fence")
    s = SimpleNamespace(found=Found("SRC", "TGT"), source=_Unreachable(), target=_Unreachable(),
                        migration=MigrationSpec(name="m", topics=["orders"]))
    mine = _certificate(tmp_path / "mine.json", "SRC", "TGT")
    with pytest.raises(AssertionError, match="a cluster was asked"):
        confirm_wave(s, ledger, Wave.of(None, ["orders"]), timeout=1, talked_to={}, certificate=mine)  # type: ignore[arg-type]
