"""The validation job: prove the migrated topics hold the same records (PySpark + confluent-kafka).

Entry points:
- ``run_validation(ValidationRequest) -> Report`` (``report.verdict``, ``report.exit_code``) for the
  rehearsal and other Python callers;
- ``msk-migrate validate`` (``commands/validate.py``) locally;
- ``spark_entry.py`` for spark-submit (EMR) and Glue.
See docs/validation.md.
"""

from __future__ import annotations

from .request import PartitionRange, ValidationRequest

__all__ = ["PartitionRange", "Report", "ValidationRequest", "run_validation"]


def __getattr__(name: str):  # lazy: importing the package must not import pyspark
    if name == "run_validation":
        from .job import run_validation

        return run_validation
    if name == "Report":
        from .report import Report

        return Report
    raise AttributeError(name)
