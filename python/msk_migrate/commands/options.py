"""The value types of the commands' options: each value is checked where click parses it.

A malformed value (a topic name Kafka refuses, ``eu-westt-1``, ``s3:/bucket``, a path that cannot be
written) is one line naming the option and exit 2 before a flow is read, a file written or a cluster,
worker or AWS API asked (:class:`msk_migrate.clivalues.Checked`). What can only be judged against the
clusters (is this topic migrated? does this group exist?) stays with the operation.

One vocabulary across commands (old spellings stay as hidden aliases, :class:`~msk_migrate.clivalues.Aliased`):
a value read back by another command has the same option name on both (``validate --validation-report
DIR`` writes what ``cutover check --validation-report DIR`` reads); topics are ``--topic`` (repeatable,
comma-separated), groups ``--group``; a directory that is read is ``--from-dir`` beside ``--from-s3``,
one that is written ``--out-dir``, a file that is written ``--out``.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..clivalues import (
    Checked,
    check_host_ports,
    check_read_location,
    check_readable_file,
    check_s3_uri,
    check_writable,
    check_write_location,
)
from ..config.flow import check_connect_url
from ..config.identifiers import check_env_name, check_secret_arn, parse_msk_arn
from ..errors import UsageError
from ..kafka.legal import check_group_id, check_topic_list, check_topic_name


def _env(value: str) -> str:
    """``--env``: an environment name of ``infra/environments/`` (the file must be there) or a YAML path."""
    from ..config.environment_files import environment_path

    if value.endswith((".yaml", ".yml")) or "/" in value:
        check_readable_file(value)
        return value
    check_env_name(value)
    environment_path(value)  # names the known environments when there is no such file
    return value


def _topics(value: str) -> str:
    check_topic_list(value)
    return value


def _read_dir(value: str) -> Path:
    path = Path(value)
    if not path.is_dir():
        raise ValueError(f"{value} is not a directory")
    return path


#: An environment of infra/environments (name or path).
ENV = Checked("env", _env, "pass --env NAME of infra/environments/NAME.yaml (lowercase, e.g. dev) or the YAML's path", "NAME|PATH")
#: A file that must exist and be readable.
READ_FILE = Checked("file", check_readable_file, "give the path of an existing, readable file", "FILE")
#: A directory that must exist.
READ_DIR = Checked("directory", _read_dir, "give an existing directory", "DIR")
#: A file to write (its directory exists or can be created; nothing is created while parsing).
WRITE_FILE = Checked("file", lambda v: check_writable(v, "file"), "give a path in a writable directory", "FILE")
#: A directory to write into.
WRITE_DIR = Checked("directory", lambda v: check_writable(v, "dir"), "give a directory that is (or can be) created here", "DIR")
#: Where evidence is written: a local path or s3://bucket/prefix.
WRITE_LOCATION = Checked("location", check_write_location, "give a writable directory or s3://BUCKET/PREFIX", "DIR|s3://BUCKET/PREFIX")
#: Where evidence is read from: an existing file or directory, or s3://bucket/key-or-prefix.
READ_LOCATION = Checked("location", check_read_location, "give an existing file or directory, or s3://BUCKET/PREFIX", "PATH|s3://BUCKET/PREFIX")
#: An s3://bucket/prefix.
S3_PREFIX = Checked("s3-uri", check_s3_uri, "give s3://BUCKET/PREFIX/", "s3://BUCKET/PREFIX/")
#: A Kafka Connect worker's REST URL, http(s).
CONNECT_URL = Checked("url", check_connect_url, "give the worker's REST URL, e.g. https://kafka-connect.example:8083", "URL")
#: host:port[,host:port...].
BOOTSTRAP = Checked("bootstrap", check_host_ports, "give host:port[,host:port...]", "HOST:PORT[,...]")
#: A Kafka topic name (one per value).
TOPIC = Checked("topic", check_topic_name, "name a topic as Kafka allows: 1-249 of letters, digits, '.', '_', '-'", "TOPIC")
#: Topic names, comma-separated (one or more per value).
TOPICS = Checked("topics", _topics, "name topics as Kafka allows, comma-separated: T1,T2", "T1[,T2...]")
#: A consumer group id.
GROUP = Checked("group", check_group_id, "give the group id exactly as the consumers set group.id", "GROUP")
#: A Secrets Manager secret ARN.
SECRET_ARN = Checked("secret-arn", lambda v: check_secret_arn(v, "secret"), "pass arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME", "ARN")
#: An MSK cluster ARN.
MSK_CLUSTER_ARN = Checked("cluster-arn", lambda v: parse_msk_arn(v) and v,
                          "pass arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID (stack output target_cluster_arn)", "ARN")


def seconds(minimum: float = 0, maximum: float | None = None) -> click.FloatRange:
    """A number of seconds (a duration or a timeout) within bounds: ``-5`` or ``abc`` is refused while parsing."""
    return click.FloatRange(min=minimum, max=maximum)


def in_seconds(canonical: tuple[str, float | None], old: tuple[str, float | None, float], default: float) -> float:
    """A duration given under its canonical spelling (seconds) or its old, hidden one in the old unit
    (``(name, value, seconds per unit)``): the value in seconds, ``default`` when neither is given.
    Both given: one line naming both, exit 2 (as :class:`~msk_migrate.clivalues.Aliased` refuses two spellings)."""
    (name, value), (old_name, old_value, unit) = canonical, old
    if value is not None and old_value is not None:
        raise UsageError(f"{name} and {old_name}", "two spellings of the same option",
                         f"give {name} only; {old_name} is its old spelling (in {'minutes' if unit == 60 else f'{unit:g} s'})")
    if value is not None:
        return float(value)
    return float(old_value) * unit if old_value is not None else default
