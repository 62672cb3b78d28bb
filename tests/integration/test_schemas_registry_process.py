"""The harness's Apicurio Registry: started with a Java 21+ JDK, reachable, bound to 127.0.0.1 only."""

from __future__ import annotations

import json
import subprocess
import urllib.request

from msk_migrate.local.schema_registry import RegistryProcess
from tests.integration.registry_fixtures import registry_pair  # noqa: F401 (fixture)


def _listening(pid: int) -> list[str]:
    """Local addresses (host:port) of the TCP sockets ``pid`` listens on, as ss reports them."""
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


def test_each_registry_listens_on_loopback_only_and_serves_the_confluent_api(
        registry_pair: tuple[RegistryProcess, RegistryProcess]) -> None:  # noqa: F811
    for reg in registry_pair:
        addrs = _listening(reg.pid)
        assert any(a.endswith(f":{reg.port}") for a in addrs), addrs
        assert any(a.endswith(f":{reg.management_port}") for a in addrs), addrs
        assert all("127.0.0.1" in a.rsplit(":", 1)[0] for a in addrs), f"{reg.name} listens beyond loopback: {addrs}"
        with urllib.request.urlopen(reg.ccompat_url + "/subjects", timeout=5) as resp:
            assert isinstance(json.load(resp), list)


def test_the_two_sides_are_separate_registries(registry_pair: tuple[RegistryProcess, RegistryProcess]) -> None:  # noqa: F811
    source, target = registry_pair
    assert source.port != target.port and source.pid != target.pid
    body = json.dumps({"schema": '{"type":"string"}'}).encode()
    req = urllib.request.Request(source.ccompat_url + "/subjects/only-on-source/versions", data=body, method="POST",
                                 headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert "id" in json.load(resp)
    with urllib.request.urlopen(target.ccompat_url + "/subjects", timeout=5) as resp:
        assert "only-on-source" not in json.load(resp)
