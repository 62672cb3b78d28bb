"""``validate --follow`` where copies are marked: what it refuses, by the value given, before any network call (the
flow's clusters are at 127.0.0.1:9, where nothing listens: a refusal that tried them would take seconds and say so)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _flow(tmp_path, marked: bool = True) -> str:
    text = (REPO / "tests/unit/data/nowhere-flow.yaml").read_text().replace("alias: source", "alias: onprem").replace(
        "alias: target", "alias: msk")
    if marked:
        text = text.replace('groups: [".*"]', 'groups: [".*"]\n  mark_copies: true')
    path = tmp_path / "flow.yaml"
    path.write_text(text)
    return str(path)


def _run(capfd, *argv: str) -> tuple[int, str, float]:
    from msk_migrate.commands.validate import run_cli

    capfd.readouterr()
    began = time.monotonic()
    code = run_cli(list(argv))
    return code, capfd.readouterr().err, time.monotonic() - began


def test_an_order_comparison_of_marked_copies_is_refused_naming_the_option_and_the_reason(tmp_path, capfd):
    code, err, took = _run(capfd, "--config", _flow(tmp_path), "--follow", "--once", "--compare", "records")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "--compare records" in err and "copies are marked here" in err and "interleaving" in err, err
    assert took < 5, took  # refused before any cluster was asked


def test_the_same_option_with_copy_marks_on_the_command_line_is_refused_the_same_way(capfd):
    code, err, _ = _run(capfd, "--follow", "--once", "--source-bootstrap", "127.0.0.1:9", "--target-bootstrap",
                        "127.0.0.1:9", "--topic", "t", "--copy-marks", "onprem,msk", "--compare", "records")
    assert code == 2 and err.count("\n") == 1 and "--compare records" in err and "copies are marked" in err, err


def test_compare_stays_a_batch_option_of_the_follower_where_no_copy_is_marked(tmp_path, capfd):
    code, err, _ = _run(capfd, "--config", _flow(tmp_path, marked=False), "--follow", "--once", "--compare", "records")
    assert code == 2 and err.count("\n") == 1 and "--compare" in err and "batch option" in err, err


def test_one_copy_mark_alias_is_refused_as_the_follower_needs_both(capfd):
    code, err, _ = _run(capfd, "--follow", "--once", "--source-bootstrap", "127.0.0.1:9", "--target-bootstrap",
                        "127.0.0.1:9", "--topic", "t", "--copy-marks", "onprem")
    assert code == 2 and err.count("\n") == 1 and "--copy-marks" in err and "both aliases" in err, err


@pytest.mark.parametrize("extra", [(), ("--compare", "multiset")])
def test_the_chained_spark_run_of_a_marked_flow_is_refused_it_compares_in_order(tmp_path, capfd, extra):
    code, err, _ = _run(capfd, "--config", _flow(tmp_path), "--follow", "--once", "--engine", "spark", *extra)
    assert code == 2 and err.count("\n") == 1 and "--engine spark" in err and "copy marks" in err, err
