"""images/kafka-connect/entrypoint.sh writes what msk_migrate.connectors.worker_env renders (run outside a container)."""

from __future__ import annotations

import os
import subprocess

from msk_migrate.access.client_security import client_properties
from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint, WorkerSpec
from msk_migrate.connectors.worker_env import (
    OVERRIDE_ALLOWED_BOOTSTRAP,
    OVERRIDE_POLICY,
    RestSecurity,
    render_properties,
    worker_environment,
    worker_properties,
    worker_secret_env,
)
from msk_migrate.paths import CONNECT_ENTRYPOINT, JVM_DIR

ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:mm2-AbCdEf"
CA_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:ca-AbCdEf"


def _target(mode: str, **auth) -> ClusterEndpoint:
    if mode in ("scram", "mtls"):
        auth.setdefault("secret_arn", ARN)
    return ClusterEndpoint(alias="target", bootstrap_servers="b-1:9096", auth=AuthConfig(mode=mode, **auth))


def _run(tmp_path, env: dict[str, str]):
    base = {"PATH": os.environ["PATH"], "CONNECT_DRY_RUN": "1"}
    return subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], env={**base, **env}, capture_output=True, text=True)


def _env(tmp_path, target, rest: RestSecurity | None = None, **extra) -> dict[str, str]:
    rest = rest or RestSecurity()
    return {**worker_environment(target, WorkerSpec(), rest=rest, config_dir=str(tmp_path)), **extra}


def _parse(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_written_worker_properties_are_exactly_the_python_rendering(tmp_path):
    for target in (_target("plaintext"), _target("iam"), _target("scram", ca_secret_arn=CA_ARN), _target("mtls")):
        env = _env(tmp_path, target)
        secrets = {name: "x" for name in env["CONNECT_REQUIRED_ENV"].split()}
        r = _run(tmp_path, {**env, **secrets, "CONNECT_REST_ADVERTISED_HOST": "10.0.0.7"})
        assert r.returncode == 0, r.stderr
        written = _parse((tmp_path / "worker.properties").read_text())
        expected = _parse(render_properties(worker_properties(target, WorkerSpec(), config_dir=str(tmp_path))))
        assert written == {**expected, "rest.advertised.host.name": "10.0.0.7"}
        assert oct((tmp_path / "worker.properties").stat().st_mode)[-3:] == "600"


def test_worker_clients_use_the_connectors_security_settings_for_every_client_prefix():
    for target in (_target("iam"), _target("scram"), _target("mtls", ca_secret_arn=CA_ARN)):
        props = worker_properties(target, WorkerSpec())
        for key, value in client_properties("target", target.auth).items():
            for prefix in ("", "producer.", "consumer.", "admin."):
                assert props[prefix + key] == value


def test_iam_worker_properties_carry_aws_msk_iam_auth_expected_keys():
    props = worker_properties(_target("iam"), WorkerSpec())
    for prefix in ("", "producer.", "consumer.", "admin."):
        assert props[prefix + "security.protocol"] == "SASL_SSL"
        assert props[prefix + "sasl.mechanism"] == "AWS_MSK_IAM"
        assert props[prefix + "sasl.jaas.config"] == "software.amazon.msk.auth.iam.IAMLoginModule required;"
        assert props[prefix + "sasl.client.callback.handler.class"] == (
            "software.amazon.msk.auth.iam.IAMClientCallbackHandler")


def test_worker_properties_reference_secrets_instead_of_containing_them(tmp_path):
    target = _target("scram")
    env = _env(tmp_path, target)
    r = _run(tmp_path, {**env, "MM2_TARGET_SASL_USERNAME": "mm2", "MM2_TARGET_SASL_PASSWORD": "hunter2-secret",
                        "CONNECT_REST_USERNAME": "ops", "CONNECT_REST_PASSWORD": "rest-pass-secret"})
    assert r.returncode == 0, r.stderr
    props = (tmp_path / "worker.properties").read_text()
    assert "hunter2-secret" not in props and "rest-pass-secret" not in props
    assert 'password="${env:MM2_TARGET_SASL_PASSWORD}"' in props
    assert "producer.sasl.mechanism=SCRAM-SHA-512" in props and "consumer.security.protocol=SASL_SSL" in props
    # REST credentials go to a 0600 file for Kafka's PropertyFileLoginModule, referenced by the JAAS entry.
    creds = tmp_path / "rest-credentials.properties"
    assert creds.read_text() == "ops=rest-pass-secret\n" and oct(creds.stat().st_mode)[-3:] == "600"
    assert f'file="{creds}"' in (tmp_path / "rest-jaas.conf").read_text()


def _rest_env(tmp_path, **people: str) -> dict[str, str]:
    env = _env(tmp_path, _target("scram"))
    return {**env, "MM2_TARGET_SASL_USERNAME": "mm2", "MM2_TARGET_SASL_PASSWORD": "x",
            "CONNECT_REST_USERNAME": "mm2-operator", "CONNECT_REST_PASSWORD": "machine-pass", **people}


def test_each_person_gets_their_own_rest_login_after_the_machine_login(tmp_path):
    r = _run(tmp_path, _rest_env(tmp_path, CONNECT_REST_PERSON_ALICE="alice-pass", CONNECT_REST_PERSON_J_SMITH="js-pass"))
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "rest-credentials.properties").read_text().splitlines()
    # The machine login stays first: the auto-restart extension calls the worker with the first entry.
    assert lines[0] == "mm2-operator=machine-pass"
    assert sorted(lines[1:]) == ["alice=alice-pass", "j-smith=js-pass"]
    assert "alice-pass" not in r.stdout + r.stderr


def test_the_worker_jvm_starts_without_the_rest_passwords_and_the_ca_seed_in_its_environment(tmp_path):
    # JAVA is a stand-in that records the environment it was exec'd with (the entrypoint's last step).
    seen = tmp_path / "java-env"
    fake_java = tmp_path / "java"
    fake_java.write_text(f"#!/usr/bin/env bash\nenv > {seen}\n")
    fake_java.chmod(0o755)
    (tmp_path / "agent.jar").write_text("")
    (tmp_path / "rules.yaml").write_text("")
    env = _rest_env(tmp_path, CONNECT_REST_PERSON_ALICE="alice-pass", CONNECT_REST_TLS_CA_SEED="s" * 64)
    r = subprocess.run(["bash", str(CONNECT_ENTRYPOINT)], capture_output=True, text=True,
                       env={"PATH": os.environ["PATH"], **env, "JAVA": str(fake_java), "JMX_AGENT_JAR": str(tmp_path / "agent.jar"),
                            "JMX_EXPORTER_CONFIG": str(tmp_path / "rules.yaml"), "CONNECT_REST_ADVERTISED_HOST": "127.0.0.1"})
    assert r.returncode == 0, r.stderr
    names = {line.split("=", 1)[0] for line in seen.read_text().splitlines() if "=" in line}
    assert not names & {"CONNECT_REST_PASSWORD", "CONNECT_REST_PERSON_ALICE", "CONNECT_REST_TLS_CA_SEED"}, names
    assert {"MM2_TARGET_SASL_USERNAME", "MM2_TARGET_SASL_PASSWORD"} <= names  # the rendered cluster settings need them
    assert "machine-pass" not in seen.read_text() and "alice-pass" not in seen.read_text() and "s" * 64 not in seen.read_text()
    # ...and they live on only in the 0600 credentials file the REST extension reads.
    assert "alice=alice-pass" in (tmp_path / "rest-credentials.properties").read_text()


def test_a_person_variable_that_names_the_machine_login_or_no_person_is_refused(tmp_path):
    r = _run(tmp_path, _rest_env(tmp_path, CONNECT_REST_PERSON_MM2_OPERATOR="p"))
    assert r.returncode != 0 and "CONNECT_REST_PERSON_MM2_OPERATOR names the machine login" in r.stderr
    r = _run(tmp_path, _rest_env(tmp_path, CONNECT_REST_PERSON_9LIVES="p"))
    assert r.returncode != 0 and "CONNECT_REST_PERSON_9LIVES does not name a person" in r.stderr
    r = _run(tmp_path, _rest_env(tmp_path, CONNECT_REST_PERSON_BOB='a"b'))
    assert r.returncode != 0 and "CONNECT_REST_PERSON_BOB must be a non-empty password" in r.stderr and 'a"b' not in r.stderr


def test_env_provider_reads_only_mm2_secret_variables_and_no_file_provider_exists():
    target = _target("scram")
    source = ClusterEndpoint(alias="source", bootstrap_servers="s:9094",
                             auth=AuthConfig(mode="mtls", secret_arn=ARN))
    props = worker_properties(target, WorkerSpec(), source)
    assert props["config.providers"] == "env"
    assert props["config.providers.env.param.allowlist.pattern"] == (
        "^(?:MM2_SOURCE_TLS_CERTIFICATE_CHAIN|MM2_SOURCE_TLS_PRIVATE_KEY|"
        "MM2_TARGET_SASL_PASSWORD|MM2_TARGET_SASL_USERNAME)$")
    assert not [k for k in props if k.startswith("config.providers.file")]
    plain = worker_properties(_target("plaintext"), WorkerSpec())
    assert plain["config.providers.env.param.allowlist.pattern"] == "(?!)"  # matches no variable


def test_client_overrides_go_through_the_mm2_policy_pinned_to_the_source_cluster():
    source = ClusterEndpoint(alias="source", bootstrap_servers="s-1:9094,s-2:9094",
                             auth=AuthConfig(mode="mtls", secret_arn=ARN))
    props = worker_properties(_target("scram"), WorkerSpec(), source)
    assert props["connector.client.config.override.policy"] == OVERRIDE_POLICY
    assert props[OVERRIDE_ALLOWED_BOOTSTRAP] == "s-1:9094,s-2:9094"
    # without a declared source no cluster is pinned: the policy then refuses every bootstrap.servers override
    alone = worker_properties(_target("scram"), WorkerSpec())
    assert alone["connector.client.config.override.policy"] == OVERRIDE_POLICY and OVERRIDE_ALLOWED_BOOTSTRAP not in alone
    # the class the worker loads is the one jvm/connect-extensions builds and registers for Kafka's ServiceLoader
    ext = JVM_DIR / "connect-extensions" / "src" / "main"
    assert (ext / "java" / (OVERRIDE_POLICY.replace(".", "/") + ".java")).is_file()
    manifest = ext / "resources" / "META-INF" / "services" / (
        "org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy")
    assert OVERRIDE_POLICY in manifest.read_text().split()
    java = (ext / "java" / (OVERRIDE_POLICY.replace(".", "/") + ".java")).read_text()
    assert f'ALLOWED_BOOTSTRAP_CONFIG = "{OVERRIDE_ALLOWED_BOOTSTRAP}"' in java


def test_rest_is_authenticated_by_default_and_https_is_optional():
    props = worker_properties(_target("iam"), WorkerSpec())
    assert "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension" in props["rest.extension.classes"].split(",")
    assert props["listeners"] == "http://0.0.0.0:8083"
    tls = worker_properties(_target("iam"), WorkerSpec(), rest=RestSecurity(tls=True), config_dir="/tmp/connect")
    assert tls["listeners"] == "https://0.0.0.0:8083" and tls["rest.advertised.listener"] == "https"
    assert tls["listeners.https.ssl.keystore.location"] == "/tmp/connect/rest-keystore.p12"


def test_ecs_secrets_name_the_variables_the_entrypoint_requires():
    target = _target("scram")
    env = worker_environment(target, WorkerSpec(), rest=RestSecurity(tls=True))
    secrets = worker_secret_env(target, None, rest_secret_arn=ARN, rest_tls_secret_arn=CA_ARN)
    assert sorted(env["CONNECT_REQUIRED_ENV"].split()) == sorted(secrets)
    assert secrets["CONNECT_REST_PASSWORD"] == f"{ARN}:password::"


def test_missing_required_variable_is_one_line_exit_2(tmp_path):
    env = _env(tmp_path, _target("scram"))
    r = _run(tmp_path, {**env, "MM2_TARGET_SASL_USERNAME": "mm2", "CONNECT_REST_USERNAME": "ops",
                        "CONNECT_REST_PASSWORD": "p"})
    assert r.returncode == 2 and "MM2_TARGET_SASL_PASSWORD" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "worker.properties").exists()  # nothing half-written


def test_bad_worker_environment_is_one_line_exit_2(tmp_path):
    good = _env(tmp_path, _target("plaintext"), rest=RestSecurity(basic_auth=False))
    cases = [({"CONNECT_HEAP": "lots"}, "CONNECT_HEAP"),
             ({"CONNECT_METRICS_PORT": "http"}, "CONNECT_METRICS_PORT"),
             ({"CONNECT_WORKER_PROPERTIES": ""}, "CONNECT_WORKER_PROPERTIES"),
             ({"CONNECT_REQUIRED_ENV": "NOT-A-NAME"}, "CONNECT_REQUIRED_ENV"),
             ({"CONNECT_REST_TLS_KEYSTORE": "%%% not base64"}, "CONNECT_REST_TLS_KEYSTORE")]
    for override, word in cases:
        r = _run(tmp_path, {**good, **override})
        assert r.returncode == 2 and word in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_rest_password_the_credentials_file_would_misread_is_refused(tmp_path):
    env = _env(tmp_path, _target("plaintext"))
    for password in ('a"b', "a\\b", "a\nb"):
        r = _run(tmp_path, {**env, "CONNECT_REST_USERNAME": "ops", "CONNECT_REST_PASSWORD": password})
        assert r.returncode == 2 and "CONNECT_REST_PASSWORD" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "rest-credentials.properties").exists()
