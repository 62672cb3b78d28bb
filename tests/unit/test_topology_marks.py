"""Copy marks without servers: the transforms a marked flow renders, origins() read from headers, and the
refusal of a topic flowing both ways without marks (one line, exit 2)."""

from __future__ import annotations

import click
import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec
from msk_migrate.connectors.render import render_connectors, render_reverse_connectors
from msk_migrate.errors import UsageError
from msk_migrate.topology.marks import MARK_PREFIX, is_mark, mark_header, mark_transforms, marked, origins

SRC = ClusterEndpoint(alias="onprem", bootstrap_servers="kafka-1:9092")
TGT = ClusterEndpoint(alias="msk", bootstrap_servers="b-1.msk:9098")


def test_marked_forward_flow_skips_records_copied_from_the_target_then_marks_with_the_source_alias():
    src = render_connectors(SRC, TGT, MigrationSpec(topics=["orders"], mark_copies=True))["mm2-source"]
    assert src["transforms"] == "skipFromTarget,markSource"  # the filter runs before the mark
    assert src["transforms.skipFromTarget.type"] == "org.apache.kafka.connect.transforms.Filter"
    assert src["transforms.skipFromTarget.predicate"] == "copiedFromTarget"
    assert src["predicates"] == "copiedFromTarget"
    assert src["predicates.copiedFromTarget.type"] == "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"
    assert src["predicates.copiedFromTarget.name"] == "msk-migrate.copied-from.msk"
    assert src["transforms.markSource.type"] == "io.mskmigrate.connect.marks.InsertBytesHeader"
    assert src["transforms.markSource.header"] == "msk-migrate.copied-from.onprem"
    assert src["transforms.markSource.value.literal"] == "onprem"
    assert "transforms" not in render_connectors(SRC, TGT, MigrationSpec(topics=["orders"]))["mm2-source"]


def test_only_the_source_connector_carries_marks_checkpoints_and_heartbeats_copy_no_records():
    cfgs = render_connectors(SRC, TGT, MigrationSpec(topics=["orders"], mark_copies=True))
    assert [n for n, c in cfgs.items() if "transforms" in c] == ["mm2-source"]


def test_marked_reverse_flow_mirrors_the_forward_marks_so_both_directions_of_one_topic_are_allowed():
    m = MigrationSpec(topics=["orders"], mark_copies=True)
    rev = render_reverse_connectors(SRC, TGT, m, ["orders"])["mm2-reverse-source"]
    assert rev["predicates.copiedFromTarget.name"] == mark_header("onprem")
    assert rev["transforms.markSource.header"] == mark_header("msk")
    assert rev["topics"] == "orders"


def test_a_topic_flowing_both_ways_without_marks_is_refused_naming_mark_copies():
    with pytest.raises(UsageError) as e:
        render_reverse_connectors(SRC, TGT, MigrationSpec(topics=["orders"]), ["orders"])
    assert e.value.field == "migration.mark_copies"
    assert "loop" in e.value.message and "mark_copies: true" in (e.value.fix or "")


def test_the_loop_refusal_is_one_line_exit_2_behind_the_cli_error_boundary(capfd):
    @click.command()
    def reverse() -> None:
        render_reverse_connectors(SRC, TGT, MigrationSpec(topics=["orders"]), ["orders"])

    capfd.readouterr()
    code = run_cli(reverse, [], "msk-migrate")
    _out, err = capfd.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "migration.mark_copies" in err and "Traceback" not in err


def test_origins_reads_the_path_in_header_order_and_ignores_other_headers():
    headers: list[tuple[str, bytes | None]] = [
        ("trace-id", b"x"), (mark_header("a"), b"a"), ("msk-migrate.other", None), (mark_header("b"), b"b")]
    assert origins(headers) == ("a", "b")
    assert origins([("trace-id", b"x")]) == ()
    assert origins(None) == ()
    assert origins([(mark_header("a"), None), (mark_header("a"), b"a")]) == ("a", "a")  # a loop stays visible


def test_mark_header_and_is_mark_share_the_one_prefix():
    assert mark_header("src") == MARK_PREFIX + "src" and is_mark(mark_header("src")) and not is_mark("copied-from.src")
    assert mark_transforms("a", "b")["predicates.copiedFromTarget.name"] == mark_header("b")


def test_mark_copies_defaults_off_so_active_passive_records_are_copied_untouched():
    assert MigrationSpec().mark_copies is False


def test_marked_recognises_a_rendered_marked_source_connector_and_nothing_less():
    m = MigrationSpec(topics=["orders"], mark_copies=True)
    fwd = render_connectors(SRC, TGT, m)["mm2-source"]
    rev = render_reverse_connectors(SRC, TGT, m, ["orders"])["mm2-reverse-source"]
    assert marked(fwd) and marked(rev)
    assert not marked(render_connectors(SRC, TGT, MigrationSpec(topics=["orders"]))["mm2-source"])
    assert not marked({**fwd, "transforms": "markSource"})  # the filter left out: it would loop
    assert not marked({**fwd, "predicates.copiedFromTarget.name": mark_header("elsewhere")})
