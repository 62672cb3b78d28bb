"""Fixtures of the infra tests live in infra_helpers.py (importable by the test modules too)."""

from infra_helpers import moto_endpoint, synth, terraform_bin, terraform_env  # noqa: F401
