"""Issue 43, parts 3-4 without a broker: the exit-2 JSON document, the exported operator principal on every flow kind,
the Java client properties of the DescribeProducers helper, and the producer table's rows."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from msk_migrate.access.secrets import SecretResolver, operator_env_name, operator_secrets, principal_origin
from msk_migrate.cliutil import JSON_SHAPE, command_path, json_requested, json_shape_problems, run_cli
from msk_migrate.commands.root import cli
from msk_migrate.config.auth import AuthConfig
from msk_migrate.errors import UsageError
from msk_migrate.runbook.producers.describe import ProducerRow, ProducersAnswer, java_properties


# ---- exit 2 with --output json: one JSON document of the one shape ------------------------------------------------
def test_json_requested_reads_both_spellings_and_stops_at_the_double_dash() -> None:
    assert json_requested(["cutover", "check", "--output", "json"])
    assert json_requested(["lag", "--output=json"])
    assert not json_requested(["lag", "--output", "text"])
    assert not json_requested(["lag", "--", "--output", "json"])
    assert command_path(cli, ["cutover", "check", "--producers"], "msk-migrate") == "cutover check"
    assert command_path(cli, ["--bogus"], "msk-migrate") == "msk-migrate"


def test_a_bad_option_value_with_output_json_prints_one_document_of_the_shape(capsys) -> None:
    code = run_cli(cli, ["cutover", "check", "--producers", "--wave", "w", "--timeout", "0", "--output", "json"], "msk-migrate")
    out, err = capsys.readouterr()
    assert code == 2
    doc = json.loads(out)  # exactly one document on stdout
    assert json_shape_problems(doc) == [], doc
    assert set(JSON_SHAPE) <= set(doc)
    assert doc["exit_code"] == 2 and doc["verdict"] == "bad-input" and doc["command"] == "cutover check" and doc["rows"] == []
    assert "Invalid value for '--timeout'" in doc["error"] and doc["talked_to"] == {}  # cutover check has --timeout now
    (line,) = [ln for ln in err.splitlines() if ln.strip()]  # and still the one line on stderr
    assert line.startswith("error: ") and "Invalid value for '--timeout'" in line


def test_a_usage_error_inside_a_command_prints_the_document_too(tmp_path, capsys) -> None:
    code = run_cli(cli, ["cutover", "fence", "--config", str(tmp_path / "missing.yaml"), "--output", "json"], "msk-migrate")
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    doc = json.loads(out)
    assert json_shape_problems(doc) == [] and doc["exit_code"] == 2 and doc["command"] == "cutover fence", doc
    assert doc["error"] in err


def test_text_output_prints_no_document(capsys) -> None:
    assert run_cli(cli, ["cutover", "check", "--producers", "--timeout", "0"], "msk-migrate") == 2
    out, err = capsys.readouterr()
    assert out == "" and "Invalid value for '--timeout'" in err


def test_the_installed_cli_exits_2_with_one_json_document() -> None:
    proc = subprocess.run([sys.executable, "-m", "msk_migrate.commands", "cutover", "fence", "--fence", "nonsense", "--output", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)
    assert json_shape_problems(doc) == [] and doc["exit_code"] == 2 and "--fence" in doc["error"], doc


# ---- the operator principal wins on every flow kind -------------------------------------------------------------
def _file_auth(tmp_path) -> AuthConfig:
    f = tmp_path / "secrets.json"
    f.write_text(json.dumps({"username": "mm2", "password": "mm2-secret"}))
    return AuthConfig(mode="scram", secrets_from="file", secrets_file=str(f))


def test_the_exported_operator_principal_wins_over_the_local_secrets_file(tmp_path) -> None:
    auth = _file_auth(tmp_path)
    assert SecretResolver(environ={}).resolve("source", auth)["username"] == "mm2"
    env = {"MSK_MIGRATE_SOURCE_SASL_USERNAME": "ops", "MSK_MIGRATE_SOURCE_SASL_PASSWORD": "ops-secret"}
    got = SecretResolver(environ=env).resolve("source", auth)
    assert (got["username"], got["password"]) == ("ops", "ops-secret")
    assert principal_origin("source", "ops", env) == "the operator principal exported as MSK_MIGRATE_SOURCE_SASL_USERNAME"
    assert "MSK_MIGRATE_SOURCE_SASL_USERNAME" in principal_origin("source", "mm2", {})  # the flow's own: says how to export one


def test_the_exported_operator_principal_wins_over_mm2_variables_and_secrets_manager() -> None:
    auth = AuthConfig(mode="scram", secret_arn="arn:aws:secretsmanager:eu-west-1:111111111111:secret:mm2")
    env = {"MM2_SOURCE_SASL_USERNAME": "mm2", "MM2_SOURCE_SASL_PASSWORD": "x",
           "MSK_MIGRATE_SOURCE_SASL_USERNAME": "ops", "MSK_MIGRATE_SOURCE_SASL_PASSWORD": "y"}

    def no_aws():
        raise AssertionError("Secrets Manager asked although the operator principal is exported")

    assert SecretResolver(environ=env, secretsmanager=no_aws).resolve("source", auth)["username"] == "ops"
    # the target side is untouched by the source's operator principal
    assert operator_secrets("target", auth, env) is None


def test_half_an_operator_principal_is_bad_input_naming_the_missing_variable(tmp_path) -> None:
    with pytest.raises(UsageError) as exc:
        SecretResolver(environ={"MSK_MIGRATE_SOURCE_SASL_USERNAME": "ops"}).resolve("source", _file_auth(tmp_path))
    assert exc.value.field == "MSK_MIGRATE_SOURCE_SASL_PASSWORD" and "MSK_MIGRATE_SOURCE_SASL_USERNAME" in exc.value.message
    assert operator_env_name("target", "private_key") == "MSK_MIGRATE_TARGET_TLS_PRIVATE_KEY"


def test_plaintext_sides_have_no_operator_principal() -> None:
    env = {"MSK_MIGRATE_SOURCE_SASL_USERNAME": "ops", "MSK_MIGRATE_SOURCE_SASL_PASSWORD": "y"}
    assert operator_secrets("source", AuthConfig(mode="plaintext"), env) is None


# ---- the DescribeProducers helper's client settings and the producer table ---------------------------------------
def test_java_properties_of_a_scram_tls_session() -> None:
    props = java_properties({"bootstrap.servers": "b:9096", "security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-512",
                             "sasl.username": 'o"ps', "sasl.password": "p\\w", "ssl.ca.pem": "-----BEGIN CERTIFICATE-----\nX\n",
                             "error_cb": print})
    assert isinstance(props, dict)
    assert props["security.protocol"] == "SASL_SSL" and props["sasl.mechanism"] == "SCRAM-SHA-512"
    assert props["sasl.jaas.config"] == 'org.apache.kafka.common.security.scram.ScramLoginModule required username="o\\"ps" password="p\\\\w";'
    assert props["ssl.truststore.type"] == "PEM" and props["ssl.truststore.certificates"].startswith("-----BEGIN")
    assert "error_cb" not in props
    assert java_properties({"bootstrap.servers": "b", "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}).startswith("not asked")


def test_the_producer_table_names_every_producer_or_why_not() -> None:
    ans = ProducersAnswer([ProducerRow("t", 0, 7, 0, 41, 1700000000000), ProducerRow("t", 0, 9, 2, 3, 1700000000001, 5, 120)],
                          {("t", 2): "not answered: the source does not support DescribeProducers (Kafka < 2.8)"})
    rows = ans.table([("t", 0), ("t", 1), ("t", 2)])
    assert [(r["partition"], r["producer_id"]) for r in rows] == [(0, 7), (0, 9), (1, None), (2, None)]
    assert rows[1]["coordinator_epoch"] == 5 and rows[1]["current_transaction_start_offset"] == 120
    assert rows[2]["answer"] == "answered: no active producer"
    assert "Kafka < 2.8" in rows[3]["answer"]


# ---- the rights each command needs, in its help ------------------------------------------------------------------
@pytest.mark.parametrize("words,needs", [
    (["cutover", "check"], ["DESCRIBE on the source cluster", "MSK_MIGRATE_SOURCE_SASL_USERNAME", "--timeout"]),
    (["cutover", "fence"], ["ALTER and DESCRIBE on the source cluster", "AlterConfigs", "MSK_MIGRATE_SOURCE_SASL_USERNAME", "--timeout"]),
    (["cutover", "run"], ["DESCRIBE and ALTER on the source cluster", "MSK_MIGRATE_SOURCE_SASL_USERNAME", "--timeout"]),
    (["cutover", "confirm"], ["READ on the wave's topics", "--timeout"]),
    (["cutover", "unfence"], ["ALTER and DESCRIBE on the source cluster", "MSK_MIGRATE_SOURCE_SASL_USERNAME"]),
])
def test_each_producer_command_names_its_rights_and_its_timeout_in_its_help(words, needs, capsys) -> None:
    assert run_cli(cli, [*words, "--help"], "msk-migrate") == 0
    text = " ".join(capsys.readouterr().out.split())
    missing = [n for n in needs if n not in text]
    assert missing == [], (missing, text[:3000])
