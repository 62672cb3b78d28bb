"""Refusals of this round's wave options that need no cluster: each names its option, exit 2, nothing written."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.ledger import open_ledger
from msk_migrate.runbook.producers.cutover import confirm_wave
from msk_migrate.runbook.producers.wave import Wave


def test_confirm_without_a_recorded_fence_is_refused_on_any_source_before_a_cluster_is_asked(tmp_path) -> None:
    ledger = open_ledger(str(tmp_path / "ledger"), "m")
    unreachable = SimpleNamespace()  # no source, no target: the refusal comes from the ledger alone
    with pytest.raises(UsageError) as e:
        confirm_wave(unreachable, ledger, Wave.of("first", ["orders"]), timeout=1, talked_to={})  # type: ignore[arg-type]
    assert e.value.field == "--wave" and "orders not fenced" in e.value.message
    assert ledger.read().version == 0  # nothing recorded


@pytest.mark.parametrize("args,option,says", [
    (("offsets", "sync"), "--group", "no group to move"),
    (("offsets", "sync", "--wave", "first", "--certificate", "cert.json"), "--certificate", "names one file"),
    (("connectors", "status", "--wave", "bad wave!"), "--wave", "is not a wave name"),
])
def test_a_wave_request_wrong_alone_is_one_line_naming_the_option(args, option, says, msk_migrate_cli) -> None:
    code, _out, err = msk_migrate_cli(*args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {option}:") and says in lines[0], err


def test_a_wave_names_itself_the_same_way_in_evidence_titles_and_hints():
    whole, first = Wave.of(None, ["orders", "payments"]), Wave.of("first", ("orders",))
    assert (whole.label, whole.option, whole.topics) == ("migration", "", ("orders", "payments"))
    assert (first.label, first.option) == ("first", " --wave first")
    assert whole.resume == "msk-migrate cutover run (same flow options)"
    assert first.resume == "msk-migrate cutover run --wave first (same flow options)"
