"""images/kafka-connect/entrypoint.sh: the single source of worker.properties (run outside a container)."""

from __future__ import annotations

import os
import subprocess

from msk_migrate.paths import CONNECT_ENTRYPOINT


def _run(tmp_path, **env):
    base = {"PATH": os.environ["PATH"], "CONNECT_CONFIG_DIR": str(tmp_path), "CONNECT_DRY_RUN": "1"}
    return subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], env={**base, **env}, capture_output=True, text=True)


def test_worker_properties_reference_secrets_instead_of_containing_them(tmp_path):
    r = _run(tmp_path, CONNECT_BOOTSTRAP_SERVERS="b-1:9096", CONNECT_AUTH_MODE="scram",
             MM2_TARGET_SASL_USERNAME="mm2", MM2_TARGET_SASL_PASSWORD="hunter2-secret")
    assert r.returncode == 0, r.stderr
    props = (tmp_path / "worker.properties").read_text()
    assert "hunter2-secret" not in props
    assert 'password="${env:MM2_TARGET_SASL_PASSWORD}"' in props
    assert "producer.sasl.mechanism=SCRAM-SHA-512" in props and "consumer.security.protocol=SASL_SSL" in props
    assert "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider" in props
    assert oct((tmp_path / "worker.properties").stat().st_mode)[-3:] == "600"


def test_iam_worker_uses_the_msk_iam_login_module(tmp_path):
    r = _run(tmp_path, CONNECT_BOOTSTRAP_SERVERS="b-1:9098", CONNECT_AUTH_MODE="iam", CONNECT_REPLICATION_FACTOR="3")
    assert r.returncode == 0, r.stderr
    assert "sasl.mechanism=AWS_MSK_IAM" in r.stdout and "config.storage.replication.factor=3" in r.stdout


def test_bad_worker_environment_is_one_line_exit_2(tmp_path):
    for env, word in [({"CONNECT_AUTH_MODE": "kerberos"}, "CONNECT_AUTH_MODE"),
                      ({"CONNECT_AUTH_MODE": "scram"}, "MM2_TARGET_SASL_USERNAME"),
                      ({"CONNECT_REST_PORT": "http"}, "CONNECT_REST_PORT")]:
        r = _run(tmp_path, CONNECT_BOOTSTRAP_SERVERS="b-1:9092", **env)
        assert r.returncode == 2 and word in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = _run(tmp_path)
    assert r.returncode != 0 and "CONNECT_BOOTSTRAP_SERVERS" in r.stderr
