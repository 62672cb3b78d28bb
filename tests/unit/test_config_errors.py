"""Bad input: one line naming the field and the fix, before anything is applied."""

from __future__ import annotations

import pytest

from msk_migrate.config.loader import load_yaml_model
from msk_migrate.config.migration_file import MigrationFile
from msk_migrate.errors import UsageError


def _load(tmp_path, text):
    p = tmp_path / "m.yaml"
    p.write_text(text)
    return load_yaml_model(MigrationFile, p)


@pytest.mark.parametrize(
    "text,field,words",
    [
        ("source: {alias: s, bootstrap_servers: 'h:1'}\ntarget: {alias: t, bootstrap_servers: 'nohost'}\n",
         "target.bootstrap_servers", "host:port"),
        ("source: {alias: s, bootstrap_servers: 'h:1', auth: {mode: scram}}\ntarget: {alias: t, bootstrap_servers: 'h:2'}\n",
         "source.auth", "secret_arn"),
        ("source: {alias: s, bootstrap_servers: 'h:1'}\ntarget: {alias: t, bootstrap_servers: 'h:2'}\nmigration: {topics: ['(']}\n",
         "migration.topics", "regex"),
        ("source: {alias: s, bootstrap_servers: 'h:1'}\ntarget: {alias: t, bootstrap_servers: 'h:2'}\nmigration: {tasks_max: 0}\n",
         "migration.tasks_max", "greater than"),
        ("source: {alias: s, bootstrap_servers: 'h:1'}\ntarget: {alias: t, bootstrap_servers: 'h:2'}\nmigration: {topic_renames: {a: c, b: c}}\n",
         "migration.topic_renames", "both"),
        ("source: {alias: s, bootstrap_servers: 'h:1'}\ntarget: {alias: t, bootstrap_servers: 'h:2'}\nmigraton: {}\n",
         "migraton", "unknown field"),
    ],
)
def test_invalid_migration_file_names_the_field(tmp_path, text, field, words):
    with pytest.raises(UsageError) as err:
        _load(tmp_path, text)
    msg = str(err.value)
    assert field in msg and words in msg and "\n" not in msg


def test_missing_file_is_reported_with_its_path(tmp_path):
    with pytest.raises(UsageError, match="file not found"):
        load_yaml_model(MigrationFile, tmp_path / "nope.yaml")


def test_operator_tools_may_take_scram_secrets_from_the_environment(tmp_path):
    mf = _load(tmp_path, "source: {alias: s, bootstrap_servers: 'h:1', auth: {mode: scram, secrets_from: env}}\n"
                         "target: {alias: t, bootstrap_servers: 'h:2'}\n")
    from msk_migrate.access.client_security import admin_config
    from msk_migrate.access.secrets import SecretResolver

    conf = admin_config("source", mf.source, SecretResolver(environ={"MM2_SOURCE_SASL_USERNAME": "u",
                                                                     "MM2_SOURCE_SASL_PASSWORD": "p"}))
    assert conf["sasl.username"] == "u" and conf["sasl.password"] == "p"
    with pytest.raises(UsageError, match="secrets_from 'env' takes no secret_arn"):
        _load(tmp_path, "source: {alias: s, bootstrap_servers: 'h:1', auth: {mode: scram, secrets_from: env, "
                        "secret_arn: 'arn:aws:secretsmanager:us-east-1:1:secret:x-AbCdEf'}}\n"
                        "target: {alias: t, bootstrap_servers: 'h:2'}\n")
