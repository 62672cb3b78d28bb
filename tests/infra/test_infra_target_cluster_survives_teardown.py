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


def _prometheus_task_env(stack: dict) -> dict[str, str]:
    import json

    for td in stack["resource"]["aws_ecs_task_definition"].values():
        for container in json.loads(td["container_definitions"]):
            if container["name"] == "prometheus":
                return {e["name"]: e["value"] for e in container.get("environment", [])}
    raise AssertionError("no prometheus container")


def test_alerts_page_through_the_configured_alertmanager_only(synth: Synth) -> None:
    prod, dev = synth.stacks["prod"], synth.stacks["dev"]
    assert _prometheus_task_env(prod)["MM2_ALERTMANAGER_TARGETS"] == "alertmanager.ops.example.internal:9093"
    assert "MM2_ALERTMANAGER_TARGETS" not in _prometheus_task_env(dev)
    egress = prod["resource"]["aws_vpc_security_group_egress_rule"].values()
    to_am = [r for r in egress if r.get("from_port") == 9093]
    assert to_am and all(r.get("cidr_ipv4") == "10.50.8.0/24" and r["to_port"] == 9093 for r in to_am)
