"""The Spark job reads its clusters' secrets and writes its report through the AWS SDK for Java in its own JVM
(it has no boto3): against moto's Secrets Manager and S3, the adapters answer as boto3 does, and a failure
is the SDK's own one line."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest

from msk_migrate.access.secrets import SecretResolver
from msk_migrate.errors import UsageError
from msk_migrate.validation.jvm_aws import JvmAwsError, JvmS3, JvmSecretsManager, driver_jvm
from msk_migrate.validation.report import check_destination

REGION = "eu-west-1"


@pytest.fixture
def moto_url():
    """moto over plain HTTP behind the one shim the Java SDK's S3 uploads need (tests/infra/moto_shims.py)."""
    from tests.infra.moto_shims import PlainHttp, S3AwsChunkedPut

    with PlainHttp(S3AwsChunkedPut) as url:
        yield url


@pytest.fixture
def jvm_on_moto(spark, moto_url):
    """The session JVM pointed at moto through the SDK's own system properties (its environment is fixed at start)."""
    jvm = driver_jvm(spark)
    system = jvm.java.lang.System
    props = {"aws.endpointUrl": moto_url, "aws.accessKeyId": "testing", "aws.secretAccessKey": "testing", "aws.region": REGION}
    before = {k: system.getProperty(k) for k in props}
    for k, v in props.items():
        system.setProperty(k, v)
    clients = {name: boto3.client(name, region_name=REGION, endpoint_url=moto_url, aws_access_key_id="testing",
                                  aws_secret_access_key="testing") for name in ("s3", "secretsmanager")}
    yield jvm, clients
    for k, v in before.items():
        if v is None:
            system.clearProperty(k)
        else:
            system.setProperty(k, v)


def test_the_secret_resolver_reads_a_scram_secret_through_the_jvm(jvm_on_moto):
    from msk_migrate.config.auth import AuthConfig

    jvm, clients = jvm_on_moto
    arn = clients["secretsmanager"].create_secret(Name=f"AmazonMSK_src-{uuid.uuid4().hex[:6]}",
                                                  SecretString=json.dumps({"username": "mm2", "password": "s3cr3t"}))["ARN"]
    resolver = SecretResolver(environ={}, secretsmanager=lambda: JvmSecretsManager(jvm))
    assert resolver.resolve("source", AuthConfig(mode="scram", secret_arn=arn)) == {"username": "mm2", "password": "s3cr3t"}

    missing = arn.rsplit(":", 1)[0] + ":AmazonMSK_gone-AbCdEf"
    with pytest.raises(UsageError) as exc:
        SecretResolver(environ={}, secretsmanager=lambda: JvmSecretsManager(jvm)).resolve("source", AuthConfig(mode="scram", secret_arn=missing))
    assert exc.value.field == "source.auth.secret_arn" and "cannot read" in str(exc.value) and "\n" not in str(exc.value)


def test_the_report_is_written_to_s3_through_the_jvm_and_a_missing_bucket_is_refused_first(jvm_on_moto):
    jvm, clients = jvm_on_moto
    bucket = f"reports-{uuid.uuid4().hex[:8]}"
    clients["s3"].create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3 = JvmS3(jvm)
    check_destination(f"s3://{bucket}/validation/reports/r1/", s3)
    s3.put_object(Bucket=bucket, Key="validation/reports/r1/report.json", Body=b'{"verdict": "match"}', ContentType="application/json")
    got = clients["s3"].get_object(Bucket=bucket, Key="validation/reports/r1/report.json")
    assert got["Body"].read() == b'{"verdict": "match"}' and got["ContentType"] == "application/json"

    with pytest.raises(UsageError) as exc:
        check_destination("s3://no-such-bucket-here/validation/reports/r1/", s3)
    assert exc.value.field == "--validation-report" and "no-such-bucket-here" in str(exc.value)
    with pytest.raises(JvmAwsError):
        s3.put_object(Bucket="no-such-bucket-here", Key="k", Body=b"x")


def test_the_proof_mark_is_read_and_replaced_through_the_jvm_and_an_unreadable_one_is_never_taken_for_none(jvm_on_moto):
    """A chained run on a job home continues the mark in S3: absent is "no mark yet" (NoSuchKey, as boto3 says
    it), present is read back as written, and a bucket that is not there is refused, never started over."""
    from msk_migrate.validation.follow.mark import Mark
    from msk_migrate.validation.follow.store import MarkStore

    jvm, clients = jvm_on_moto
    bucket = f"configs-{uuid.uuid4().hex[:8]}"
    clients["s3"].create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3 = JvmS3(jvm)
    with pytest.raises(JvmAwsError) as exc:
        s3.get_object(Bucket=bucket, Key="proof/mm2/proof-mark.json")
    assert exc.value.response == {"Error": {"Code": "NoSuchKey"}}
    store = MarkStore(f"s3://{bucket}/proof/mm2/", s3=s3)
    assert store.load() is None
    mark = Mark("mm2", "SRC", "TGT", {}, updated_ms=7)
    store.save(mark)
    assert store.load().to_dict() == mark.to_dict()
    assert json.loads(clients["s3"].get_object(Bucket=bucket, Key="proof/mm2/proof-mark.json")["Body"].read()) == mark.to_dict()
    with pytest.raises(UsageError) as refused:
        MarkStore(f"s3://no-such-{bucket}/proof/mm2/", s3=s3).load()
    assert refused.value.field == "--mark" and "cannot read" in str(refused.value)
