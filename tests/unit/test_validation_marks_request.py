"""What a validation request with copy marks reads on each side, and the combinations it refuses (no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from msk_migrate.config import ClusterEndpoint
from msk_migrate.validation.plan import mark_fields
from msk_migrate.validation.request import CopyMarks, ValidationRequest

REPO = Path(__file__).resolve().parents[2]


def _req(**kw) -> ValidationRequest:
    return ValidationRequest(source=ClusterEndpoint(alias="onprem", bootstrap_servers="127.0.0.1:9"),
                             target=ClusterEndpoint(alias="msk", bootstrap_servers="127.0.0.1:9"), topics=["t"], **kw)


def test_one_way_marks_strip_the_sources_mark_on_the_target_and_leave_out_the_targets_records_on_the_source():
    req = _req(marks=CopyMarks(source_alias="onprem", target_alias="msk"))
    assert mark_fields(req, "target") == {"strip_mark_of": "onprem"}
    assert mark_fields(req, "source") == {"skip_marked_by": "msk"}
    assert mark_fields(_req(), "target") == {}


def test_multiset_reads_each_side_as_its_natives_and_the_other_sides_copies():
    req = _req(marks=CopyMarks(source_alias="onprem", target_alias="msk"), compare="multiset")
    assert mark_fields(req, "source") == {"strip_mark_of": "msk", "skip_marked_by": None, "two_origin": True}
    assert mark_fields(req, "target") == {"strip_mark_of": "onprem", "skip_marked_by": None, "two_origin": True}


@pytest.mark.parametrize("kw, words", [
    ({}, "give --copy-marks SRC,TGT"),
    ({"marks": CopyMarks(source_alias="onprem")}, "both aliases"),
    ({"marks": CopyMarks(source_alias="onprem", target_alias="msk"), "mode": "full"}, "without the full diff"),
])
def test_multiset_needs_both_aliases_and_the_checksum_pass_without_the_full_diff(kw, words):
    with pytest.raises(ValueError, match=words):
        _req(compare="multiset", **kw)


def test_multiset_runs_on_either_checksum_pass():
    for engine in ("spark", "native", "auto"):
        assert _req(compare="multiset", engine=engine, marks=CopyMarks(source_alias="onprem", target_alias="msk")).engine == engine


def test_an_alias_that_is_not_an_mm2_alias_is_refused():
    with pytest.raises(ValueError):
        CopyMarks(source_alias="bad alias")


def _marked_flow(tmp_path) -> str:
    flow = (REPO / "tests/unit/data/nowhere-flow.yaml").read_text().replace(
        'groups: [".*"]', 'groups: [".*"]\n  mark_copies: true').replace("alias: source", "alias: onprem").replace(
        "alias: target", "alias: msk")
    path = tmp_path / "flow.yaml"
    path.write_text(flow)
    return str(path)


def test_a_flow_with_marks_gives_both_aliases_and_the_follower_refuses_an_order_comparison_of_it(tmp_path, capfd):
    from msk_migrate.commands.validate import run_cli
    from msk_migrate.commands.validate_request import build_request

    flow = _marked_flow(tmp_path)
    req = build_request({"config": flow, "no_report": True, "compare": "multiset"})
    assert req.marks == CopyMarks(source_alias="onprem", target_alias="msk") and req.compare == "multiset"
    code = run_cli(["--config", flow, "--follow", "--once", "--compare", "records"])  # the follower compares per origin
    err = capfd.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--compare records" in err and "Traceback" not in err


def test_a_marked_flow_is_compared_per_origin_without_being_asked(tmp_path):
    from msk_migrate.commands.validate_request import build_request

    flow = _marked_flow(tmp_path)
    req = build_request({"config": flow, "no_report": True})
    assert (req.compare, req.marks) == ("multiset", CopyMarks(source_alias="onprem", target_alias="msk"))
    assert build_request({"config": flow, "no_report": True, "marks": ("onprem", "msk")}).compare == "multiset"


@pytest.mark.parametrize("kw, option", [({"compare": "records"}, "--compare records"), ({"mode": "full"}, "--mode full")])
def test_an_order_comparison_of_marked_copies_is_refused_naming_the_option(tmp_path, kw, option):
    from msk_migrate.commands.validate_request import build_request
    from msk_migrate.errors import UsageError

    with pytest.raises(UsageError) as err:
        build_request({"config": _marked_flow(tmp_path), "no_report": True, **kw})
    assert err.value.field == option, err.value
