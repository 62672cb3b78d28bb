"""msk_migrate.store on local paths: which document a location names, reading, writing, refusing."""

from __future__ import annotations

import os

import pytest

from msk_migrate import store
from msk_migrate.errors import UsageError


def test_a_directory_names_the_default_document_and_a_json_path_names_itself(tmp_path):
    assert str(store.document(str(tmp_path), "--certificate", "c.json")) == str(tmp_path / "c.json")
    assert str(store.document(str(tmp_path / "new"), "--certificate", "c.json")) == str(tmp_path / "new" / "c.json")
    assert str(store.document(str(tmp_path / "x.json"), "--certificate", "c.json")) == str(tmp_path / "x.json")
    existing = tmp_path / "report.txt"
    existing.write_text("{}")
    assert str(store.document(str(existing), "--validation-report", "report.json")) == str(existing)


def test_written_documents_read_back_with_their_companion_beside_them(tmp_path):
    place = store.in_directory(str(tmp_path / "a" / "b"), "--validation-report", "report.json")
    assert place.write('{"verdict": "match"}\n', "application/json") == str(tmp_path / "a" / "b" / "report.json")
    page = place.with_suffix(".html")
    assert page.write("<html/>", "text/html") == str(tmp_path / "a" / "b" / "report.html")
    assert place.read_bytes("unused") == b'{"verdict": "match"}\n'
    assert page.read_bytes("unused") == b"<html/>"


def test_a_missing_document_is_one_usage_error_naming_the_option_and_the_fix(tmp_path):
    with pytest.raises(UsageError) as err:
        store.document(str(tmp_path / "nope.json"), "--validation-report", "report.json").read_bytes("pass report.json")
    assert err.value.field == "--validation-report"
    assert "not found" in err.value.message and err.value.fix == "pass report.json"


def test_other_schemes_and_files_in_place_of_directories_are_refused(tmp_path):
    with pytest.raises(UsageError, match="only local paths and s3://"):
        store.document("https://example.com/r.json", "--certificate", "c.json")
    a_file = tmp_path / "f"
    a_file.write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        store.in_directory(str(a_file), "--validation-report", "report.json")
    with pytest.raises(UsageError, match="not a directory") as err:
        store.document(str(a_file / "sub"), "--certificate", "c.json").check_writable()
    assert err.value.field == "--certificate"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through directory permissions")
def test_an_unwritable_directory_is_refused_before_writing(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(UsageError, match="not a writable directory"):
        store.in_directory(str(locked / "out"), "--validation-report", "report.json").check_writable()


def test_s3_locations_resolve_to_keys_without_touching_the_network():
    assert str(store.document("s3://b/p/", "--certificate", "c.json")) == "s3://b/p/c.json"
    assert str(store.document("s3://b", "--certificate", "c.json")) == "s3://b/c.json"
    assert str(store.document("s3://b/p/x.json", "--certificate", "c.json").with_suffix(".html")) == "s3://b/p/x.html"
    assert str(store.in_directory("s3://b/runs/1", "--validation-report", "report.json")) == "s3://b/runs/1/report.json"
    with pytest.raises(UsageError, match="has no bucket") as err:
        store.document("s3:///k.json", "--validation-report", "report.json")
    assert err.value.field == "--validation-report"


@pytest.fixture
def bucket(moto_url, monkeypatch, unique):
    """A fresh bucket on moto's server, reached through the same default boto3 client the product uses."""
    import boto3

    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_ENDPOINT_URL": moto_url, "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(key, value)
    name = f"store-{unique}"
    boto3.client("s3").create_bucket(Bucket=name)
    return name


def test_s3_documents_are_written_read_back_and_refused_like_local_ones(bucket):
    place = store.document(f"s3://{bucket}/runs/1/", "--certificate", "c.json")
    place.check_writable()
    assert place.write("{}", "application/json") == f"s3://{bucket}/runs/1/c.json"
    assert place.with_suffix(".html").write("<html/>", "text/html") == f"s3://{bucket}/runs/1/c.html"
    assert store.document(f"s3://{bucket}/runs/1/c.json", "--certificate", "x.json").read_bytes("unused") == b"{}"
    with pytest.raises(UsageError, match="not found") as err:
        store.document(f"s3://{bucket}/runs/2", "--certificate", "c.json").read_bytes("pass the certificate")
    assert err.value.field == "--certificate" and err.value.fix == "pass the certificate"
    with pytest.raises(UsageError, match="cannot write to bucket") as err:
        store.document(f"s3://{bucket}-absent/x", "--validation-report", "report.json").check_writable()
    assert err.value.field == "--validation-report"
