"""The Spark job's request travels as one JSON document: what `validate` checked is what the job runs, and
anything else is refused by name before Spark starts."""

from __future__ import annotations

import dataclasses
import json

import pytest

from msk_migrate import __version__
from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint
from msk_migrate.errors import UsageError
from msk_migrate.validation import job_request as jr
from msk_migrate.validation.request import ValidationRequest

ARN = "arn:aws:secretsmanager:eu-west-1:111111111111:secret:AmazonMSK_src-AbCdEf"


def _request(**kw) -> ValidationRequest:
    source = ClusterEndpoint(alias="source", bootstrap_servers="a.example:9096", auth=AuthConfig(mode="scram", secret_arn=ARN))
    target = ClusterEndpoint(alias="target", bootstrap_servers="b.example:9098", auth=AuthConfig(mode="iam"))
    return ValidationRequest(source=source, target=target, **{"topics": ["orders"], "report_dir": "s3://b/validation/reports/r/", **kw})


def test_the_job_reads_back_the_request_validate_checked_with_spark_as_its_engine() -> None:
    request = _request(topic_map={"orders": "orders.v2"}, mode="full", sample_size=3)
    back = jr.decode(jr.encode(request))
    assert back.request == dataclasses.replace(request, engine="spark") and back.follow is None


def test_a_marked_two_origin_comparison_travels_to_the_job_whose_spark_pass_computes_it() -> None:
    from msk_migrate.validation.request import CopyMarks

    request = _request(compare="multiset", marks=CopyMarks(source_alias="onprem", target_alias="msk"))
    back = jr.decode(jr.encode(request)).request
    assert (back.compare, back.marks, back.engine) == ("multiset", request.marks, "spark")


def test_platform_arguments_around_the_request_are_ignored() -> None:
    text = jr.encode(_request())
    argv = ["--JOB_NAME", "j", "--TempDir", "s3://t/", jr.ARGUMENT, text, "--enable-metrics", "true"]
    assert jr.argument_value(argv) == text
    assert jr.argument_value([f"{jr.ARGUMENT}={text}"]) == text
    assert jr.argument_value(["--JOB_NAME", "j"]) is None


def test_no_local_secret_source_travels_the_job_reads_secrets_manager_only() -> None:
    doc = jr.document(_request())
    assert doc["request"]["source"]["auth"] == {**doc["request"]["source"]["auth"], "secrets_from": "secrets_manager", "secrets_file": None}
    env_source = ClusterEndpoint(alias="source", bootstrap_servers="a.example:9096", auth=AuthConfig(mode="scram", secrets_from="env"))
    with pytest.raises(UsageError, match=r"^source\.auth\.secret_arn: the Spark job reads scram credentials from Secrets Manager only"):
        jr.document(dataclasses.replace(_request(), source=env_source))


@pytest.mark.parametrize("update, field", [({"engine": "native"}, "--engine native"),
                                           ({"offsets_snapshot": {"orders": {}}}, "--offsets-snapshot")])
def test_what_the_job_cannot_run_is_refused_on_the_submitting_side(update, field) -> None:
    with pytest.raises(UsageError) as exc:
        jr.document(dataclasses.replace(_request(), **update))
    assert exc.value.field == field


@pytest.mark.parametrize("text, message", [
    ("{not json", "not JSON"),
    (json.dumps({"kind": "other", "request": {}}), "not a msk-migrate/validation-request document"),
    (json.dumps({"kind": jr.KIND, "format": 99, "tool_version": __version__, "request": {}}), "format 99"),
    (json.dumps({"kind": jr.KIND, "format": 1, "tool_version": "0.0.1", "request": {}}), "written by msk-migrate 0.0.1"),
])
def test_a_document_the_job_cannot_trust_is_one_line_naming_the_request(text: str, message: str) -> None:
    with pytest.raises(UsageError) as exc:
        jr.decode(text)
    assert exc.value.field == "--request" and message in str(exc.value)


def test_a_field_the_request_model_refuses_names_its_place_in_the_document() -> None:
    doc = jr.document(_request())
    doc["request"]["sample_size"] = -1
    with pytest.raises(UsageError) as exc:
        jr.decode(json.dumps(doc))
    assert exc.value.field == "--request sample_size"


def test_a_follow_document_carries_its_s3_mark_and_migration_to_the_job() -> None:
    follow = jr.FollowTarget("s3://b/proof/orders/proof-mark.json", "orders")
    back = jr.decode(jr.encode(_request(), follow))
    assert back.follow == follow and back.request.report_dir == "s3://b/validation/reports/r/"


def test_a_follow_mark_that_is_not_in_s3_is_refused_on_the_submitting_side() -> None:
    with pytest.raises(UsageError, match=r"^--mark: '/tmp/m.json': a job run keeps its mark in S3 only"):
        jr.FollowTarget("/tmp/m.json", "orders")


@pytest.mark.parametrize("follow, report_dir, field", [
    ({"mark": "s3://b/proof/o/", "migration": "o", "extra": "x"}, "s3://b/validation/reports/r/", "--request follow"),
    ({"mark": "/var/tmp/mark.json", "migration": "o"}, "s3://b/validation/reports/r/", "--request follow.mark"),
    ({"mark": "s3://b/proof/o/", "migration": "o"}, "/var/tmp/reports", "--request report_dir"),
    # what a caller who may start job runs could ask of the job, tried as such: another bucket, another migration's
    # mark, a traversal out of the prefix, a name that is a path, a report written over the job's package
    ({"mark": "s3://other/proof/o/proof-mark.json", "migration": "o"}, "s3://b/validation/reports/r/", "--request follow.mark"),
    ({"mark": "s3://b/proof/p/proof-mark.json", "migration": "o"}, "s3://b/validation/reports/r/", "--request follow.mark"),
    ({"mark": "s3://b/proof/o/../p/proof-mark.json", "migration": "o"}, "s3://b/validation/reports/r/", "--request follow.mark"),
    ({"mark": "s3://b/proof/o//proof-mark.json", "migration": "o"}, "s3://b/validation/reports/r/", "--request follow.mark"),
    ({"mark": "s3://b/proof/../ledger/x.json", "migration": ".."}, "s3://b/validation/reports/r/", "--request follow.migration"),
    ({"mark": "s3://b/proof/o/proof-mark.json", "migration": "o"}, "s3://b/validation/job/0.1.0/", "--request report_dir"),
    ({"mark": "s3://b/proof/o/proof-mark.json", "migration": "o"}, "s3://b/validation/reports/../job/", "--request report_dir"),
])
def test_a_follow_section_the_job_cannot_run_names_its_place_in_the_document(follow, report_dir, field) -> None:
    doc = jr.document(_request(report_dir=report_dir))
    doc["follow"] = follow
    with pytest.raises(UsageError) as exc:
        jr.decode(json.dumps(doc))
    assert exc.value.field == field
