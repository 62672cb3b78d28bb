"""AWS Glue Schema Registry cannot keep the records' schema ids: a Glue registry given to `schemas` is refused
before any request, and preflight says so for a flow that names one (issue 31)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from msk_migrate.errors import UsageError
from msk_migrate.runbook.preflight import Preflight, PreflightReport, check_schema_registry
from msk_migrate.schemas.client import check_registry_url
from msk_migrate.schemas.glue import is_glue


@pytest.mark.parametrize("url", ["https://glue.eu-west-1.amazonaws.com", "https://glue-fips.us-east-1.amazonaws.com/",
                                 "glue:registry/payments", "arn:aws:glue:eu-west-1:123456789012:registry/payments"])
def test_glue_endpoints_and_references_are_recognised(url: str) -> None:
    assert is_glue(url)


@pytest.mark.parametrize("url", ["https://registry.example:8081", "http://127.0.0.1:8080/apis/ccompat/v7",
                                 "https://glue.example.com"])
def test_confluent_compatible_registries_are_not_glue(url: str) -> None:
    assert not is_glue(url)


def test_a_glue_registry_given_to_schemas_is_refused_naming_the_option_and_why() -> None:
    with pytest.raises(UsageError) as err:
        check_registry_url("https://glue.eu-west-1.amazonaws.com", "--target-registry")
    assert err.value.field == "--target-registry" and "AWS Glue" in str(err.value) and "cannot keep the schema ids" in str(err.value)


def _preflight(registries: dict[str, str] | None) -> Preflight:
    session = SimpleNamespace(flow=SimpleNamespace(registry_urls=lambda: registries))
    return Preflight(session, PreflightReport())  # type: ignore[arg-type]


def test_preflight_fails_a_glue_target_registry_and_names_a_confluent_compatible_pair() -> None:
    p = _preflight({"source": "https://registry.corp:8081", "target": "arn:aws:glue:eu-west-1:123456789012:registry/shop"})
    check_schema_registry(p)
    (c,) = p.report.checks
    assert c.status == "fail" and "target registry is AWS Glue" in c.detail and "schemas copy" in c.detail
    p = _preflight({"source": "https://registry.corp:8081", "target": "https://registry.msk:8081"})
    check_schema_registry(p)
    assert p.report.checks[0].status == "ok" and "https://registry.msk:8081" in p.report.checks[0].detail
    p = _preflight(None)
    check_schema_registry(p)
    assert p.report.checks[0].status == "skip"
