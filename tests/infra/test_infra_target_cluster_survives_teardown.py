"""A created MSK cluster holds the migrated data: destroying the migration stack must not take it."""

from __future__ import annotations

from infra_helpers import ALL_ENVS, Synth


def test_created_msk_cluster_is_protected_from_destroy(synth: Synth) -> None:
    created = 0
    for env in ALL_ENVS:
        for name, cluster in synth.stacks[env].get("resource", {}).get("aws_msk_cluster", {}).items():
            created += 1
            assert cluster.get("lifecycle", {}).get("prevent_destroy") is True, f"{env}: {name} can be destroyed"
    assert created >= 1, "no environment creates an MSK cluster; the test would prove nothing"
