#!/usr/bin/env python3
"""spark-submit / EMR Serverless / AWS Glue entry point of the validation job.

    spark-submit --jars <jars/*.jar> --py-files msk_migrate.zip spark_entry.py --request '<document>'

The job runs one request: the JSON document ``msk-migrate validate`` built and checked
(:mod:`msk_migrate.validation.job_request`; ``validate --job-request FILE`` writes it for a
spark-submit by hand). Arguments the platform adds (Glue's ``--JOB_NAME``, ``--TempDir`` ...) are
ignored. A batch request's report goes where the request says (``report_dir``: a path or ``s3://``);
a follow request (``validate --follow --engine spark --on``) runs one chained follower run on its
``s3://`` mark and writes the result (``follow.json``) under ``report_dir``. Either JSON is printed on
stdout. Exits 0 (match / proven), 1 (mismatch: the job run fails on purpose), 2 (bad request or an
unreachable cluster: one line on stderr), 3 (a bug: the trace in the driver log, then one line). The
entry is its own error boundary with the same mapping as ``cliutil.error_exit_code``, without click or
rich (the job needs neither).
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from msk_migrate.validation.job_request import JobRequest

# Run as a script, this file's directory is sys.path[0]; the package must come from --py-files
# (or site-packages), never from sibling modules imported as top-level ones.
_here = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _here:
    sys.path.pop(0)


def _writes_to_s3(request: object) -> bool:
    return str(getattr(request, "report_dir", "") or "").startswith("s3://")


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _follow(job: JobRequest, spark: Any, resolver: Any, s3: Any) -> int:
    """One chained follower run on the request's mark; its result beside the report location."""
    from msk_migrate.store import in_directory
    from msk_migrate.validation.follow.chained import RESULT_NAME, chained_run
    from msk_migrate.validation.jvm_meta import jvm_metadata

    request, follow = job.request, job.follow
    assert follow is not None
    result = chained_run(request, follow.mark, follow.migration, spark, jvm_metadata(spark), resolver, s3, _say,
                         mark_field="--request follow.mark")
    body = json.dumps(result.to_dict(), sort_keys=True)
    in_directory(str(request.report_dir), "--request report_dir", RESULT_NAME).write(body, "application/json", s3)
    print(body)
    return result.exit_code


def main(argv: list[str] | None = None) -> int:
    from msk_migrate.errors import UnreachableError, UsageError
    from msk_migrate.validation.job_request import ARGUMENT, argument_value, decode

    args = sys.argv[1:] if argv is None else argv
    try:
        text = argument_value(args)
        if text is None:
            raise UsageError(ARGUMENT, "missing: the job runs one request document",
                             "pass --request '<document>' (`msk-migrate validate --job-request FILE` writes it)")
        job = decode(text)
        request = job.request
        from pyspark.sql import SparkSession

        from msk_migrate.access.secrets import SecretResolver
        from msk_migrate.access.spark_options import REDACTION_REGEX
        from msk_migrate.validation.jvm_aws import JvmS3, JvmSecretsManager, driver_jvm
        from msk_migrate.validation.jvm_meta import jvm_metadata

        spark = (SparkSession.builder.appName("msk-migrate-validate")
                 .config("spark.redaction.regex", REDACTION_REGEX).getOrCreate())
        spark.sparkContext.setLogLevel(os.environ.get("MSK_MIGRATE_SPARK_LOG_LEVEL", "WARN"))
        jvm = driver_jvm(spark)
        # Everything the job asks goes through its own JVM: the clusters (Kafka's Java admin), their secrets
        # (the request's Secrets Manager ARNs only: no environment variable stands in) and S3.
        resolver = SecretResolver(environ={}, secretsmanager=lambda: JvmSecretsManager(jvm))
        s3 = JvmS3(jvm) if _writes_to_s3(request) else None
        if job.follow is not None:
            return _follow(job, spark, resolver, s3)
        from msk_migrate.validation.job import run_validation

        report = run_validation(request, spark=spark, progress=_say, resolver=resolver, metadata=jvm_metadata(spark), s3=s3)
    except (UsageError, UnreachableError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: never exit 1, which means "mismatch"; the driver log keeps the trace
        import traceback

        traceback.print_exc()
        print(f"error: internal error ({type(exc).__name__}): {str(exc).splitlines()[0] if str(exc) else ''}", file=sys.stderr)
        return 3
    print(json.dumps({**report.to_dict(), "locations": report.locations}, default=str))
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
