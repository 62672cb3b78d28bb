#!/usr/bin/env python3
"""spark-submit / AWS Glue entry point of the validation job.

    spark-submit --jars <spark-sql-kafka jars> --py-files msk_migrate.zip \
        spark_entry.py --source-bootstrap-servers ... --target-bootstrap-servers ... --topics orders \
        --report-dir s3://bucket/validation/run-1

Takes exactly the options of ``msk-migrate validate`` and uses the job's SparkSession. Arguments the
platform adds (Glue's --JOB_NAME, --TempDir, --job-bookmark-option, ...) are dropped. Exits 0 (match),
1 (mismatch: the step/job run fails on purpose), 2 (bad input / unreachable cluster).
"""

from __future__ import annotations

import os
import sys

# Run as a script, this file's directory is sys.path[0]; the package must come from --py-files
# (or site-packages), never from sibling modules imported as top-level ones.
_here = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _here:
    sys.path.pop(0)


def known_args(argv: list[str]) -> list[str]:
    """Keep the arguments ``validate`` understands; drop platform ones (and their values)."""
    from msk_migrate.validation.cli import validate

    takes_value: dict[str, bool] = {}
    for param in validate.params:
        for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
            takes_value[opt] = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if name in takes_value:
            if takes_value[name]:
                out.append(arg)
                if "=" not in arg and i + 1 < len(argv):
                    out.append(argv[i + 1])
                    i += 1
            else:  # a flag; Glue job parameters always carry a value: "--allow-duplicates true"
                value = arg.split("=", 1)[1] if "=" in arg else None
                if value is None and i + 1 < len(argv) and argv[i + 1].lower() in ("true", "false"):
                    value = argv[i + 1]
                    i += 1
                if value is None or value.lower() == "true":
                    out.append(name)
        elif arg.startswith("--") and "=" not in arg and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            i += 1  # skip the foreign option's value
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    from pyspark.sql import SparkSession

    from msk_migrate.access.spark_options import REDACTION_REGEX
    from msk_migrate.validation.cli import run_cli

    spark = (
        SparkSession.builder.appName("msk-migrate-validate")
        .config("spark.redaction.regex", REDACTION_REGEX)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel(os.environ.get("MSK_MIGRATE_SPARK_LOG_LEVEL", "WARN"))
    return run_cli(known_args(sys.argv[1:] if argv is None else argv), spark=spark)


if __name__ == "__main__":
    sys.exit(main())
