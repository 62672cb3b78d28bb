"""The copy-mark transform on every Connect the project ships: the session's worker runs Kafka 3.9's Connect
(test_active_active_marks.py), the image's Connect is 4.1 too. Here a product worker of Connect 4.1
(images/kafka-connect/entrypoint.sh with the rendered worker.properties and the project's extension jar) joins the
session's target cluster, runs a marked flow's MirrorSourceConnector rendered by the product renderer, and every
record it copies carries exactly one trailing mark naming the source, with key, value and the producer's headers as
written."""

from __future__ import annotations

import uuid

import pytest

from msk_migrate import versions
from msk_migrate.connect_api.apply import apply
from msk_migrate.connect_api.rest import ConnectClient
from msk_migrate.connectors.render import render_connectors
from msk_migrate.local.connect_worker import local_rest_credentials, local_worker_spec, start_connect_worker, wait_connect_ready
from msk_migrate.local.procs import stop
from msk_migrate.topology.marks import mark_header, origins
from tests.kafka_helpers import consume_all, create_topic, end_offsets, produce, wait_until

from .mm2_flows import flow

pytestmark = pytest.mark.integration
N = 200


@pytest.fixture(scope="module")
def connect_41(local_env, tmp_path_factory):
    """A worker of Connect 4.1 in a group of its own, pinned to the session's pair like the harness's workers."""
    base = tmp_path_factory.mktemp("connect-41")
    spec = local_worker_spec(group_id=f"marks-41-{uuid.uuid4().hex[:6]}")
    rec = start_connect_worker(local_env.target(), base / "connect", spec, kafka_version=versions.kafka_target_version(),
                               name="connect-marks-41", source=local_env.source(), secret_env=local_env.secret_env("source"),
                               credentials_dir=base / "connect")
    try:
        wait_connect_ready(rec, f"http://127.0.0.1:{spec.rest_port}", timeout=300)
        creds = local_rest_credentials(base / "connect")
        yield ConnectClient(f"http://127.0.0.1:{spec.rest_port}", auth=creds)
    finally:
        stop(rec)


def test_connect_41_copies_every_record_with_one_trailing_mark_of_its_origin(local_env, connect_41, unique):
    src, tgt = local_env.source(), local_env.target()
    topic = f"m41{unique}"
    create_topic(src.bootstrap_servers, topic, partitions=2)
    spec = flow(f"m41{unique}", [topic], mark_copies=True, tasks_max=1)
    configs = render_connectors(src, tgt, spec)
    (name,) = [n for n, c in configs.items() if c["connector.class"].endswith("MirrorSourceConnector")]
    apply(connect_41, {name: configs[name]}, wait=True, timeout=180)
    try:
        connect_41.wait_state(name, "RUNNING", timeout=180, min_tasks=1)
        produce(src.bootstrap_servers, topic, ((f"k{i}".encode(), f"v{i}".encode(), [("trace", str(i).encode())], i % 2)
                                               for i in range(N)))
        wait_until(lambda: sum(end_offsets(tgt.bootstrap_servers, topic).values()) >= N, timeout=180,
                   what=f"{N} copies of {topic} on the target")
        got = consume_all(tgt.bootstrap_servers, topic, N, timeout=60)
        assert len(got) == N
        assert all(origins(m.headers()) == (src.alias,) for m in got)
        assert all(m.headers()[-1] == (mark_header(src.alias), src.alias.encode()) for m in got)  # the one trailing mark
        assert sorted((m.key(), m.value(), m.headers()[0]) for m in got) == sorted(
            (f"k{i}".encode(), f"v{i}".encode(), ("trace", str(i).encode())) for i in range(N))
    finally:
        connect_41.delete(name)
