"""Pieces of the validation job that need no cluster: inputs, secrets, client settings, the checksum
arithmetic, explanations, the report and its schema, the spark-submit argument filter."""

from __future__ import annotations

import base64
import functools
import itertools
import json
import urllib.parse

import pytest

from msk_migrate import access as cred
from msk_migrate.config import AuthConfig, ClusterEndpoint
from msk_migrate.errors import UsageError
from msk_migrate.validation.request import ValidationRequest, load_snapshot, parse_timestamp

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mm2-src-AbCdEf"


def test_timestamps_parse_from_iso_and_epoch_ms():
    assert parse_timestamp("2025-01-31T12:00:00Z", "f") == 1738324800000
    assert parse_timestamp("2025-01-31T13:00:00+01:00", "f") == 1738324800000
    assert parse_timestamp("2025-01-31T12:00:00", "f") == 1738324800000  # UTC when no offset
    assert parse_timestamp("1738324800000", "f") == 1738324800000
    assert parse_timestamp(None, "f") is None
    with pytest.raises(UsageError, match="looks like epoch seconds"):
        parse_timestamp("1738324800", "--until-timestamp")
    with pytest.raises(UsageError, match="--from-timestamp: 'yesterday' is not a timestamp"):
        parse_timestamp("yesterday", "--from-timestamp")


def test_offset_snapshot_accepts_end_offsets_and_ranges(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"orders": {"0": 10, "1": {"start": 2, "end": 7}}}))
    snap = load_snapshot(f)
    assert snap["orders"][0].start is None and snap["orders"][0].end == 10
    assert (snap["orders"][1].start, snap["orders"][1].end) == (2, 7)
    f.write_text(json.dumps({"orders": {"0": {"start": 9, "end": 7}}}))
    with pytest.raises(UsageError, match=r"orders\[0\]"):
        load_snapshot(f)
    f.write_text(json.dumps({"orders": {"x": 1}}))
    with pytest.raises(UsageError, match="partition 'x' is not a number"):
        load_snapshot(f)
    f.write_text("{")
    with pytest.raises(UsageError, match="is not JSON"):
        load_snapshot(f)


def _ep(mode="plaintext", **auth):
    return ClusterEndpoint(alias="source", bootstrap_servers="b-1.example:9096", auth=AuthConfig(mode=mode, **auth))


def test_request_needs_topics_and_a_consistent_window():
    with pytest.raises(ValueError, match="give --topic, --topic-regex or --offsets-snapshot"):
        ValidationRequest(source=_ep(), target=_ep())
    req = ValidationRequest(source=_ep(), target=_ep(), topics=["a"], grace_seconds=60)
    assert req.effective_until_ms(now_ms=1_000_000) == 940_000
    assert req.mode == "auto" and req.isolation_level == "read_committed"


def test_scram_secrets_come_from_the_environment_first():
    auth = AuthConfig(mode="scram", secret_arn=ARN)
    resolver = cred.SecretResolver(environ={"MM2_SOURCE_SASL_USERNAME": "u", "MM2_SOURCE_SASL_PASSWORD": "p w"})
    props = cred.java_client_properties("source", auth, resolver)
    assert props["security.protocol"] == "SASL_SSL" and props["sasl.mechanism"] == "SCRAM-SHA-512"
    assert props["sasl.jaas.config"].endswith('username="u" password="p w";')
    assert "${env:" not in json.dumps(props)


def test_secrets_fall_back_to_secrets_manager(monkeypatch, moto_url, unique):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)
    import boto3

    sm = boto3.client("secretsmanager", region_name="us-east-1")
    from tests.integration.pki import ThrowawayCA

    pki = ThrowawayCA()
    client = pki.issue("client", server=False)
    cert, key = client.cert_pem, client.key_pem
    arn = sm.create_secret(
        Name=f"mm2-mtls-{unique}", SecretString=json.dumps({"certificate_chain": cert, "private_key": key})
    )["ARN"]
    ca = sm.create_secret(Name=f"mm2-ca-{unique}", SecretString=json.dumps({"ca": pki.pem}))["ARN"]
    resolver = cred.SecretResolver(environ={})
    auth = AuthConfig(mode="mtls", secret_arn=arn, ca_secret_arn=ca)
    props = cred.java_client_properties("target", auth, resolver)
    assert props["ssl.keystore.certificate.chain"] == cert and props["ssl.keystore.key"] == key
    assert props["ssl.truststore.certificates"] == pki.pem
    conf = cred.admin_config("target", ClusterEndpoint(alias="t", bootstrap_servers="h:9094", auth=auth), resolver)
    assert conf["security.protocol"] == "SSL" and conf["ssl.key.pem"] == key and conf["ssl.ca.pem"] == pki.pem

    missing_key = sm.create_secret(Name=f"bad-{unique}", SecretString=json.dumps({"username": "u"}))["ARN"]
    with pytest.raises(UsageError, match="has no JSON key 'password'"):
        cred.SecretResolver(environ={}).resolve("source", AuthConfig(mode="scram", secret_arn=missing_key))


@pytest.mark.parametrize("variable", ["MM2_SOURCE_TLS_CERTIFICATE_CHAIN", "MM2_SOURCE_TLS_PRIVATE_KEY", "MM2_SOURCE_TLS_CA"])
def test_garbage_pem_in_a_tls_variable_is_one_line_naming_the_variable(variable):
    from tests.integration.pki import ThrowawayCA

    pki = ThrowawayCA()
    client = pki.issue("client", server=False)
    env = {"MM2_SOURCE_TLS_CERTIFICATE_CHAIN": client.cert_pem, "MM2_SOURCE_TLS_PRIVATE_KEY": client.key_pem,
           "MM2_SOURCE_TLS_CA": pki.pem}
    endpoint = ClusterEndpoint(alias="s", bootstrap_servers="h:9094", auth=AuthConfig(mode="mtls", secrets_from="env"))
    assert cred.admin_config("source", endpoint, cred.SecretResolver(environ=env))["ssl.key.pem"] == client.key_pem
    env[variable] = "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n"
    with pytest.raises(UsageError) as e:
        cred.admin_config("source", endpoint, cred.SecretResolver(environ=env))
    assert e.value.field == variable and "PEM" in str(e.value) and "\n" not in str(e.value)


def test_missing_secret_names_the_variable_and_the_fix():
    auth = AuthConfig.model_construct(mode="scram", scram_mechanism="SCRAM-SHA-512", tls=True, secret_arn=None, ca_secret_arn=None)
    with pytest.raises(UsageError) as e:
        cred.SecretResolver(environ={}).resolve("source", auth)
    assert "MM2_SOURCE_SASL_USERNAME is not set" in str(e.value) and "--source-secret-arn" in str(e.value)


def test_spark_options_are_kafka_prefixed_and_refuse_security_overrides():
    ep = ClusterEndpoint(alias="s", bootstrap_servers="b:9098", auth=AuthConfig(mode="iam"))
    opts = cred.spark_kafka_options("source", ep, cred.SecretResolver(environ={}), "read_committed", {"fetch.max.bytes": "1"})
    assert opts["kafka.bootstrap.servers"] == "b:9098"
    assert opts["kafka.sasl.mechanism"] == "AWS_MSK_IAM"
    assert opts["kafka.sasl.client.callback.handler.class"].endswith("IAMClientCallbackHandler")
    assert opts["kafka.isolation.level"] == "read_committed" and opts["kafka.fetch.max.bytes"] == "1"
    with pytest.raises(UsageError, match=r"sasl\.jaas\.config cannot be overridden"):
        cred.check_kafka_options({"sasl.jaas.config": "x"})


def test_ca_bundle_can_come_from_the_environment_without_an_arn():
    auth = AuthConfig(mode="iam")
    props = cred.java_client_properties("target", auth, cred.SecretResolver(environ={"MM2_TARGET_TLS_CA": "PEM"}))
    assert props["ssl.truststore.type"] == "PEM" and props["ssl.truststore.certificates"] == "PEM"


def test_msk_iam_token_is_a_presigned_connect_url():
    from botocore.credentials import Credentials

    token, _expiry = cred.msk_iam_token("eu-west-1", Credentials("AKIDEXAMPLE", "secret"))
    url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    parsed = urllib.parse.urlparse(url)
    q = urllib.parse.parse_qs(parsed.query)
    assert parsed.netloc == "kafka.eu-west-1.amazonaws.com"
    assert q["Action"] == ["kafka-cluster:Connect"] and q["X-Amz-Expires"] == ["900"]
    assert "X-Amz-Signature" in q and q["X-Amz-Credential"][0].startswith("AKIDEXAMPLE/")
    assert "=" not in token
    ep = ClusterEndpoint(alias="t", bootstrap_servers="b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098",
                         auth=AuthConfig(mode="iam"))
    conf = cred.admin_config("target", ep, cred.SecretResolver(environ={}))
    assert conf["sasl.mechanism"] == "OAUTHBEARER" and callable(conf["oauth_cb"])
    assert cred.msk_region(ep.bootstrap_servers, {}) == "eu-west-1"


def test_checksum_slices_fold_to_the_sum_modulo_2_64():
    import random

    from msk_migrate.validation.checksum import MASK64

    rnd = random.Random(7)
    values = [rnd.randint(-(2**63), 2**63 - 1) for _ in range(1000)] * 2  # duplicates count twice
    m22 = (1 << 22) - 1
    s0 = sum(v & m22 for v in values)
    s1 = sum(((v & MASK64) >> 22) & m22 for v in values)
    s2 = sum((v & MASK64) >> 44 for v in values)
    assert (s0 + (s1 << 22) + (s2 << 44)) & MASK64 == sum(values) & MASK64


def test_checksum_explanations_name_the_field_that_differs():
    from msk_migrate.validation.checksum import COMPONENTS, Digest, explain_checksum

    a = Digest(10, sums={c: 1 for c in COMPONENTS})
    assert explain_checksum(a, Digest(9, sums=dict(a.sums))) == [
        "target has 1 fewer record(s) than the source (9 vs 10)"
    ]
    b = Digest(10, sums={**a.sums, "fp": 2, "h_headers": 5})
    assert explain_checksum(a, b) == ["header order differs (same headers, different order)"]
    c = Digest(10, sums={**a.sums, "fp": 2, "h_value": 3, "h_ts": 4})
    assert explain_checksum(a, c) == ["values differ", "timestamps differ"]
    d = Digest(10, sums=dict(a.sums), order=99)
    assert explain_checksum(a, d)[0].startswith("records reordered: the same records in a different order")
    assert explain_checksum(a, d, order_checked=False) == []


def _order_digest_by_chunks(fps: list[int], cuts: list[int]) -> int:
    """The order digest as Spark computes it: per task exact sums over 16-bit slices, folded."""
    from msk_migrate.validation.checksum import MASK64, _Chunk, fold_order

    chunks = []
    bounds = [0, *cuts, len(fps)]
    for first, end in itertools.pairwise(bounds):
        part = [f & MASK64 for f in fps[first:end]]
        o = {(j, k): sum(((f >> (16 * j)) & 0xFFFF) * ((i >> (16 * k)) & 0xFFFF) for i, f in enumerate(part))
             for j in range(4) for k in range(2)}
        fp_idx = sum(v << (16 * (j + k)) for (j, k), v in o.items())
        chunks.append(_Chunk(first_offset=first * 10, count=len(part), fp_sum=sum(part), fp_idx_sum=fp_idx))
    chunks.reverse()  # the driver collects tasks in any order
    return fold_order(chunks)


def test_order_digest_is_the_same_however_spark_splits_a_partition_and_catches_every_reordering():
    import random

    from msk_migrate.validation.checksum import MASK64, ORDER_PRIME

    rnd = random.Random(11)
    fps = [rnd.randint(-(2**63), 2**63 - 1) for _ in range(200)]
    whole = _order_digest_by_chunks(fps, [])
    assert whole == sum((f & MASK64) * i for i, f in enumerate(fps)) % ORDER_PRIME
    assert _order_digest_by_chunks(fps, [37, 150]) == whole
    swapped = [*fps[:5], fps[6], fps[5], *fps[7:]]  # adjacent swap
    moved = fps[50:60] + fps[:50] + fps[60:]  # a block moved to the front
    far = list(fps)
    far[0], far[128] = far[128], far[0]  # a swap at a power-of-two distance
    for other in (swapped, moved, far):
        assert sorted(other) == sorted(fps)
        assert _order_digest_by_chunks(other, [64]) != whole
    same = list(fps)
    same[3] = same[4]  # identical records swapped: the same sequence, the same digest
    assert _order_digest_by_chunks([*same[:3], same[4], same[3], *same[5:]], [2]) == _order_digest_by_chunks(same, [])


def test_synced_config_differences_skip_what_mm2_does_not_copy():
    from msk_migrate.validation.kafka_meta import TopicMeta, synced_config_differences

    src = TopicMeta("t", 3, configs={"retention.ms": "1", "min.insync.replicas": "2", "cleanup.policy": "delete"},
                    overrides={"retention.ms": "1", "min.insync.replicas": "2", "max.message.bytes": "9"})
    tgt = TopicMeta("t", 3, configs={"retention.ms": "2", "min.insync.replicas": "1", "max.message.bytes": "9"})
    assert synced_config_differences(src, tgt) == [{"name": "retention.ms", "source": "1", "target": "2"}]
    assert synced_config_differences(src, tgt, ignore=["retention.ms"]) == []


def _report(statuses):
    from msk_migrate.validation.report import PartitionResult, Report, SideDigest, TopicResult

    topics = []
    for i, st in enumerate(statuses):
        side = SideDigest(3, 1, 2, "00000000000000ff", "0000000000000abc", 0, 3, 0, 0)
        t = TopicResult(topic=f"t{i}<b>", target_topic=f"t{i}<b>", source_partitions=1, target_partitions=1,
                        timestamp_type={"source": "CreateTime", "target": "CreateTime"})
        t.partitions.append(PartitionResult(0, side, side, status=st, missing=0, unexpected=0, duplicates=0, changed=0))
        t.finish()
        topics.append(t)
    return Report(
        run={"id": "x", "started_at": "a", "finished_at": "b", "duration_seconds": 1.0, "mode": "auto",
             "compacted": "records", "isolation_level": "read_committed", "allow_duplicates": False,
             "sample_size": 10, "tool_version": "0.1.0", "spark_version": "3.5.7",
             "checksum_engine": "spark"},
        window={"kind": "timestamps", "from_timestamp_ms": None, "until_timestamp_ms": 5, "from": None,
                "until": "u", "timestamp_slack_seconds": 300, "grace_seconds": 300},
        clusters={"source": {"bootstrap_servers": "s:1", "auth_mode": "plaintext"},
                  "target": {"bootstrap_servers": "t:1", "auth_mode": "iam"}},
        topics=topics,
    )


@functools.cache
def _report_schema_validator():
    """One validator for report.schema.json, the schema itself checked once: ``jsonschema.validate`` checks the
    schema against its metaschema on every call, most of a second each."""
    import jsonschema

    from msk_migrate.validation.report import schema

    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    return cls(schema())


def test_verdict_and_exit_code_follow_the_topics():
    ok = _report(["match", "duplicates"])
    assert ok.verdict == "match" and ok.exit_code == 0  # duplicates allowed by --allow-duplicates
    bad = _report(["match", "mismatch"])
    assert bad.verdict == "mismatch" and bad.exit_code == 1
    _report_schema_validator().validate(bad.to_dict())
    page = bad.to_html()
    assert "t1&lt;b&gt;" in page and "t1<b>" not in page  # escaped
    assert page.index('id=\'verdict\'') < page.index("id='summary'") < page.index("id='topics'")


def test_a_report_that_compared_nothing_is_no_evidence_not_match():
    from msk_migrate.validation.report import NO_EVIDENCE

    empty = _report(["match"])
    for p in empty.topics[0].partitions:
        p.source.count = p.target.count = 0  # type: ignore[union-attr]
    assert empty.verdict == NO_EVIDENCE and empty.exit_code == 1
    assert "selected topics hold no record" in empty.verdict_reason()
    empty.topics[0].partitions[0].log_start_offset, empty.topics[0].partitions[0].log_end_offset = 0, 3
    empty.topics[0].partitions[0].status = NO_EVIDENCE
    empty.topics[0].partitions[0].differences.append("the window ends at u, before the partition's records")
    empty.topics[0].finish()
    assert empty.topics[0].status == NO_EVIDENCE and empty.verdict == NO_EVIDENCE
    doc = empty.to_dict()
    _report_schema_validator().validate(doc)
    assert doc["summary"]["partitions_without_evidence"] == 1 and doc["topics_covered"] == ["t0<b>"]
    assert "window ends at u" in doc["verdict_reason"]
    assert "data-verdict='no-evidence'" in empty.to_html()
    mixed = _report(["mismatch"])
    mixed.topics[0].partitions[0].status = NO_EVIDENCE  # a mismatch elsewhere still wins
    mixed.topics.append(_report(["mismatch"]).topics[0])
    assert mixed.verdict == "mismatch"


def test_local_destination_must_be_writable(tmp_path):
    from msk_migrate.validation.report import check_destination

    check_destination(str(tmp_path / "new" / "dir"))
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UsageError, match="exists and is not a directory"):
        check_destination(str(f))
    with pytest.raises(UsageError, match="only local paths and s3://"):
        check_destination("gs://bucket/x")


def test_jar_artifact_names_ignore_versions():
    from msk_migrate.validation.spark_local import artifact_name

    assert artifact_name("/m2/spark-sql-kafka-0-10_2.12-3.5.7.jar") == "spark-sql-kafka-0-10_2.12"
    assert artifact_name("netty-common-4.1.126.Final.jar") == "netty-common"
    assert artifact_name("kafka-clients-3.4.1.jar") == "kafka-clients"
    assert artifact_name("aws-msk-iam-auth-2.3.5.jar") == "aws-msk-iam-auth"


def test_package_builds_the_emr_and_glue_artefacts(tmp_path):
    import zipfile

    from msk_migrate.validation.package import build

    out = build(tmp_path / "dist")
    names = zipfile.ZipFile(out["zip"]).namelist()
    assert "msk_migrate/validation/spark_entry.py" in names and "msk_migrate/validation/report.schema.json" in names
    assert (tmp_path / "dist" / "spark_entry.py").exists()
    jars = out["jars"]
    assert any(j.startswith("spark-sql-kafka-0-10_2.12-") for j in jars)
    assert any(j.startswith("kafka-clients-") for j in jars) and any(j.startswith("aws-msk-iam-auth-") for j in jars)
    assert not any(j.startswith(("jackson-databind-", "hadoop-client-", "scala-library-")) for j in jars)  # Spark has them
    assert any(j.startswith("secretsmanager-") for j in jars) and any(j.startswith("s3-") for j in jars)  # the driver's AWS calls
    assert not (tmp_path / "dist" / "requirements-driver.txt").exists()  # the driver needs no Python package
