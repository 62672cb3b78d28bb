"""The harness's cluster shapes: what `local up` accepts, what it refuses before starting anything."""

from __future__ import annotations

import pytest

from msk_migrate import versions
from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli
from msk_migrate.errors import UsageError
from msk_migrate.kafka.mm2_acls import forward_source_acls, reverse_source_acls
from msk_migrate.local.shape import BROKER_OVERHEAD_MIB, RESERVE_MIB, make_shape, max_brokers


def test_zookeeper_era_source_is_secured_and_three_brokers_replicate_like_msk():
    shape = make_shape(versions.kafka_zk_version(), 3, 3, available=64 * 1024)
    assert (shape.source.mode, shape.source.security) == ("zookeeper", "scram-tls")
    assert (shape.target.kafka_version, shape.target.mode) == (versions.kafka_target_version(), "kraft")
    assert (shape.target.replication_factor, shape.target.min_insync_replicas) == (3, 2)


def test_default_shape_is_the_fast_single_broker_kraft_pair():
    shape = make_shape(available=64 * 1024)
    assert shape.source.kafka_version == versions.kafka_version()
    assert (shape.source.mode, shape.source.brokers, shape.source.security) == ("kraft", 1, "plaintext")
    assert (shape.source.replication_factor, shape.source.min_insync_replicas) == (1, 1)


def test_broker_capacity_comes_from_free_memory_and_heap():
    free = RESERVE_MIB + 6 * (384 + BROKER_OVERHEAD_MIB)
    assert max_brokers("384m", available=free) == 6
    make_shape(versions.kafka_zk_version(), 3, 3, available=free)
    with pytest.raises(UsageError) as err:
        make_shape(versions.kafka_zk_version(), 3, 4, available=free)
    assert err.value.field == "--target-brokers" and "smaller --broker-heap" in str(err.value)


@pytest.mark.parametrize("args, field", [
    (["--source-kafka", "2.7.0"], "--source-kafka"),
    (["--source-brokers", "0"], "--source-brokers"),
    (["--target-brokers", "100000"], "--target-brokers"),
    (["--broker-heap", "1k"], "--broker-heap"),
    (["--peer-brokers", "-1"], "--peer-brokers"),
    (["--peer-brokers", "100000"], "--peer-brokers"),
])
def test_local_up_refuses_a_shape_it_cannot_start_in_one_line_and_starts_nothing(tmp_path, capsys, args, field):
    base = tmp_path / "env"
    assert run_cli(cli, ["local", "up", "--dir", str(base), *args], "msk-migrate") == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and field in lines[0] and "fix:" in lines[0], err
    assert "Traceback" not in err and not base.exists()


def test_mm2_forward_acls_only_read_and_reverse_acls_name_only_the_rolled_back_topic_and_group():
    assert {n.operation for n in forward_source_acls()} == {"READ", "DESCRIBE", "DESCRIBE_CONFIGS"}
    rev = reverse_source_acls("target", ["shop.orders"], ["shop-billing"], "mm2-connect-offsets", "shop-reverse")
    writes = {n.name for n in rev if n.operation == "WRITE"}
    assert writes == {"shop.orders", "mm2-offset-syncs.shop-reverse.target.internal",
                      "shop-reverse.target.checkpoints.internal", "mm2-connect-offsets"}
    legacy = reverse_source_acls("target", ["shop.orders"], ["shop-billing"], "mm2-connect-offsets")
    assert {"mm2-offset-syncs.target.internal", "target.checkpoints.internal"} <= {n.name for n in legacy}
    assert {n.name for n in rev if n.resource == "group"} == {"shop-billing"}


def test_a_peer_cluster_is_a_third_plaintext_kraft_cluster_counted_against_free_memory():
    shape = make_shape(peer_brokers=1, available=64 * 1024)
    assert shape.roles == ("source", "target", "peer")
    assert (shape.peer.role, shape.peer.mode, shape.peer.security, shape.peer.brokers) == ("peer", "kraft", "plaintext", 1)
    assert make_shape(available=64 * 1024).roles == ("source", "target")
    free = RESERVE_MIB + 2 * (384 + BROKER_OVERHEAD_MIB)
    make_shape(available=free)
    with pytest.raises(UsageError) as err:
        make_shape(peer_brokers=1, available=free)
    assert err.value.field == "--peer-brokers"


def test_shape_with_a_peer_survives_the_state_file_round_trip():
    from msk_migrate.local.shape import EnvironmentShape

    shape = make_shape(peer_brokers=1, available=64 * 1024)
    assert EnvironmentShape.from_dict(shape.to_dict()) == shape
    plain = make_shape(available=64 * 1024)
    assert "peer" not in plain.to_dict() and EnvironmentShape.from_dict(plain.to_dict()) == plain


def test_adding_a_peer_changes_nothing_else_and_removing_it_removes_only_it():
    from msk_migrate.local.reshape import changes

    plain, peered = make_shape(available=64 * 1024), make_shape(peer_brokers=1, available=64 * 1024)
    assert changes(plain, peered) == {}
    assert changes(peered, plain) == {"peer": "remove"}
    bigger = make_shape(peer_brokers=2, available=64 * 1024)
    assert changes(peered, bigger) == {"peer": "recreate"}
