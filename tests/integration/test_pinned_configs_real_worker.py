"""Only the migration's own connectors reach the secrets (issue 37), on a real worker: the two exfiltration
routes an operator with the REST login could take are refused with the key named, before the worker resolves
any variable, and the secret appears in none of the worker's files; the rendered configs still pass.

The worker is the product's (images/kafka-connect/entrypoint.sh with the rendered worker.properties), joined to
the session's target cluster, with a SCRAM source declared: MM2_SOURCE_SASL_PASSWORD is then an *allowed*
variable of its env provider and is in its environment, exactly the posture of a deployed worker."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec
from msk_migrate.connect_api.rest import ConnectClient, ConnectRestError, RestCredentials
from msk_migrate.connectors.render import render_connectors, render_reverse_connectors
from msk_migrate.local.connect_worker import local_rest_credentials, local_worker_spec, rest_url, start_connect_worker, wait_connect_ready
from msk_migrate.local.procs import stop

RUN = uuid.uuid4().hex[:6]
SECRET = f"pw{uuid.uuid4().hex}"  # distinctive: any occurrence in a log is this test's secret
ALICE = f"alice{uuid.uuid4().hex}"  # alice's own REST password (connect.people; CONNECT_REST_PERSON_ALICE on ECS)
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.fixture(scope="module")
def pinned_worker(local_env, tmp_path_factory):
    base = tmp_path_factory.mktemp("pinned-worker")
    source = ClusterEndpoint(alias="source", bootstrap_servers="127.0.0.1:19096",
                             auth=AuthConfig(mode="scram", secrets_from="env"))
    spec = local_worker_spec(group_id=f"pinned-{RUN}")
    rec = start_connect_worker(local_env.target(), base / "connect", spec, name=f"connect-pinned-{RUN}", source=source,
                               secret_env={"MM2_SOURCE_SASL_USERNAME": "mm2", "MM2_SOURCE_SASL_PASSWORD": SECRET,
                                           "CONNECT_REST_PERSON_ALICE": ALICE})
    try:
        url = rest_url(spec)
        wait_connect_ready(rec, url, timeout=240)
        yield ConnectClient(url), source, local_env.target(), base, local_rest_credentials(base / "connect").username
    finally:
        stop(rec)


def _source_config(source, target, **changes) -> dict[str, str]:
    configs = render_connectors(source, target, MigrationSpec(name=f"pin{RUN}", topics=[f"pin{RUN}-.*"]))
    (src,) = [c for c in configs.values() if c["connector.class"].endswith("MirrorSourceConnector")]
    # Without its rendered name: the probes are PUT under names of their own, and a config whose name differs from
    # the path's is refused for that before its cluster settings are read (test_connect_rest_routes.py).
    return {**{k: v for k, v in src.items() if k != "name"}, **changes}


def _refused(call) -> str:
    with pytest.raises(ConnectRestError) as err:
        call()
    assert err.value.status == 400, err.value
    return err.value.message


def _files_text(base: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in base.rglob("*") if p.is_file() and p.stat().st_size < 50_000_000)


def test_the_bootstrap_hostname_and_jaas_routes_are_refused_with_the_key_named_and_the_secret_is_in_no_log(pinned_worker):
    client, source, target, base, user = pinned_worker
    hostname = _source_config(source, target, **{"source.cluster.bootstrap.servers": "${env:MM2_SOURCE_SASL_PASSWORD}.invalid:9092"})
    jaas = _source_config(source, target, **{
        "source.cluster.bootstrap.servers": "collector.invalid:443",
        "source.cluster.security.protocol": "SASL_PLAINTEXT",
        "source.cluster.sasl.mechanism": "PLAIN",
        "source.cluster.sasl.jaas.config": f'{PLAIN} required username="x" password="${{env:MM2_SOURCE_SASL_PASSWORD}}";',
    })
    for route, cfg in (("hostname", hostname), ("jaas", jaas)):
        name = f"probe-{route}-{RUN}"
        for call in (lambda c=cfg, n=name: client.put_config(n, c), lambda c=cfg: client.validate(c)):
            message = _refused(call)
            assert message.startswith("'source.cluster.bootstrap.servers' names no cluster of this environment"), message
        assert name not in client.connectors()
    # On the pinned host, a changed mechanism or JAAS entry is refused by its own key.
    on_host = {**jaas, "source.cluster.bootstrap.servers": source.bootstrap_servers}
    assert _refused(lambda: client.validate(on_host)).startswith("'source.cluster.sasl.jaas.config' differs from the source cluster's")
    # The secret's variable anywhere else, or a cluster setting under another MM2 prefix:
    assert _refused(lambda: client.validate(_source_config(source, target, **{"topics": "${env:MM2_SOURCE_SASL_PASSWORD}"}))
                    ).startswith("'topics' names a config provider variable")
    assert _refused(lambda: client.validate(_source_config(source, target, **{"source.consumer.bootstrap.servers": "x.invalid:443"}))
                    ).startswith("'source.consumer.bootstrap.servers' is a cluster setting outside")
    logs = _files_text(base)
    assert "REST audit: user=" + user in logs and "refused: 'source.cluster.bootstrap.servers'" in logs
    assert SECRET not in logs, "the source password reached a file of the worker"


def test_the_rendered_forward_and_reverse_configs_still_pass(pinned_worker):
    client, source, target, base, _user = pinned_worker
    m = MigrationSpec(name=f"pin{RUN}", topics=[f"pin{RUN}-a"])
    for configs in (render_connectors(source, target, m), render_reverse_connectors(source, target, m, None)):
        for cfg in configs.values():
            assert client.validate(cfg) == [], cfg["name"]
    assert SECRET not in _files_text(base)


def test_a_change_sent_with_a_persons_own_login_is_audited_under_their_name(pinned_worker):
    client, source, target, base, user = pinned_worker
    alice = ConnectClient(client.url, auth=RestCredentials("alice", ALICE))
    probe = _source_config(source, target, **{"source.cluster.bootstrap.servers": "elsewhere.invalid:9092"})
    name = f"alice-probe-{RUN}"
    _refused(lambda: alice.put_config(name, probe))
    # A wrong password is refused by the worker's authentication, before any filter writes an audit line for it.
    with pytest.raises(ConnectRestError) as err:
        ConnectClient(client.url, auth=RestCredentials("alice", "not-her-password")).put_config(name, probe)
    assert err.value.status == 401
    audit = [ln for ln in _files_text(base).splitlines() if "REST audit:" in ln and name in ln]
    assert len(audit) == 1 and "user=alice PUT" in audit[0] and "refused" in audit[0], audit
    assert user != "alice" and ALICE not in _files_text(base).replace(f"alice={ALICE}", "")
