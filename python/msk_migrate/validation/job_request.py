"""The request the Spark job runs, as one serialised value.

``msk-migrate validate`` checks every option, resolves the clusters from the environment or flow and
builds a :class:`~.request.ValidationRequest`; the job (``spark_entry.py`` under spark-submit, EMR
Serverless or Glue) receives exactly that request as one JSON document in its ``--request`` argument,
never re-spelled as command-line options. Invariants of the document:

* it names its kind and format version and the msk-migrate version that wrote it; a job of another
  version refuses it (the package in the bucket and the CLI that submits to it are one release);
* the job has no environment file, no flow and no local secret: each cluster's credentials come from
  Secrets Manager (``secret_arn`` / ``ca_secret_arn``), so a SCRAM or mTLS cluster without an ARN is
  refused on the submitting side, and ``secrets_from`` is always ``secrets_manager`` in the document;
* nothing read from a local file travels (an offsets snapshot is refused by the caller);
* a ``follow`` section (:class:`FollowTarget`) asks for one chained follower run instead of a batch
  validation: the mark is an ``s3://`` object (the job has no local disk that outlives it) and the run's
  result is written beside the report location (:data:`.follow.chained.RESULT_NAME`);
* a chained run touches its own migration's places only: the mark under ``proof/<migration>/`` and the report
  under ``validation/reports/`` of one bucket (:mod:`msk_migrate.bucket_layout`), which is what the job's
  execution role is granted; a document asking for more is refused before anything is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..bucket_layout import ALIAS, REPORTS_PREFIX, proof_prefix, within
from ..errors import UsageError
from ..s3uri import is_s3_uri, split_s3_uri
from .endpoint import Endpoint
from .request import ValidationRequest

KIND = "msk-migrate/validation-request"
FORMAT_VERSION = 1
#: The job's one argument (EMR ``entryPointArguments``, Glue job argument, spark-submit by hand).
ARGUMENT = "--request"


@dataclass(frozen=True)
class FollowTarget:
    """The chained follower run a document asks for: the mark to continue (``s3://``) and the migration it
    belongs to (a mark of another migration is refused by the run, exit 2)."""

    mark: str
    migration: str

    def __post_init__(self) -> None:
        if not is_s3_uri(self.mark):
            raise UsageError("--mark", f"{self.mark!r}: a job run keeps its mark in S3 only",
                             "give s3://<bucket>/proof/<migration>/ (the default on --on)")
        if not self.migration:
            raise UsageError("--mark", "the mark's migration is missing", "name the flow (--env, --config or --local)")


@dataclass(frozen=True)
class JobRequest:
    """What the job runs: the checked request and, for a chained follower run, its mark."""

    request: ValidationRequest
    follow: FollowTarget | None = None


def _cluster(role: str, endpoint: Endpoint) -> dict[str, Any]:
    auth = endpoint.auth
    if auth.mode in ("scram", "mtls") and not auth.secret_arn:
        raise UsageError(f"{role}.auth.secret_arn", f"the Spark job reads {auth.mode} credentials from Secrets Manager only",
                         "name the secret's ARN in the environment file")
    doc = endpoint.to_dict()
    doc["auth"] = {**doc["auth"], "secrets_from": "secrets_manager", "secrets_file": None}
    return doc


def document(request: ValidationRequest, follow: FollowTarget | None = None) -> dict[str, Any]:
    """The request as the job receives it (a JSON-ready dict); ``follow``: a chained follower run instead of a batch one."""
    if request.offsets_snapshot:
        raise UsageError("--offsets-snapshot", "the Spark job reads no local file", "validate without it, or run locally")
    if request.engine == "native":
        raise UsageError("--engine native", "is computed by the native pass on the submitting machine, not by the Spark job",
                         "drop --engine native, or validate locally")
    body = request.to_dict()
    body["engine"] = "spark"  # the job's pass is Spark's whatever "auto" would choose elsewhere
    body["source"] = _cluster("source", request.source)
    body["target"] = _cluster("target", request.target)
    doc: dict[str, Any] = {"kind": KIND, "format": FORMAT_VERSION, "tool_version": __version__, "request": body}
    if follow is not None:
        doc["follow"] = {"mark": follow.mark, "migration": follow.migration}
    return doc


def encode(request: ValidationRequest, follow: FollowTarget | None = None) -> str:
    """:func:`document` as compact JSON (one argument)."""
    return json.dumps(document(request, follow), separators=(",", ":"), sort_keys=True)


def decode(text: str) -> JobRequest:
    """The job side: the document back to the request (and its follow section); UsageError naming ``--request``
    (and the field's place in the document) for anything else."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(ARGUMENT, f"not JSON: {exc.msg} at character {exc.pos}", "pass the document `validate --job-request` writes") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or not isinstance(doc.get("request"), dict):
        raise UsageError(ARGUMENT, f"not a {KIND} document", "pass the document `validate --job-request` writes")
    if doc.get("format") != FORMAT_VERSION:
        raise UsageError(ARGUMENT, f"format {doc.get('format')!r}; this job reads format {FORMAT_VERSION}",
                         "write the request with the msk-migrate of this job package")
    if doc.get("tool_version") != __version__:
        raise UsageError(ARGUMENT, f"written by msk-migrate {doc.get('tool_version')}, this job package is {__version__}",
                         "ship the package of the submitting version: ./build_images.py ACCOUNT REGION --env ENV")
    try:
        request = ValidationRequest.from_dict(doc["request"])
    except UsageError as exc:  # named by its place in the document (sample_size, source.auth.mode), not by an option
        where = getattr(exc, "key", None) or exc.field or "request"
        raise UsageError(f"{ARGUMENT} {where}", exc.message, exc.fix) from None
    follow = doc.get("follow")
    if follow is None:
        return JobRequest(request)
    if not isinstance(follow, dict) or set(follow) != {"mark", "migration"} or not all(isinstance(v, str) for v in follow.values()):
        raise UsageError(f"{ARGUMENT} follow", "must hold exactly mark and migration (strings)",
                         "pass the document `validate --follow --on` builds")
    if not is_s3_uri(str(request.report_dir or "")):
        raise UsageError(f"{ARGUMENT} report_dir", "a chained run writes its result to S3 only",
                         "pass the document `validate --follow --on` builds")
    try:
        target = FollowTarget(follow["mark"], follow["migration"])
    except UsageError as exc:
        raise UsageError(f"{ARGUMENT} follow.mark", exc.message, exc.fix) from None
    _own_places(str(request.report_dir), target)
    return JobRequest(request, target)


def _own_places(report_dir: str, follow: FollowTarget) -> None:
    """A chained run reads and replaces its own migration's mark and writes its report only: the mark under
    ``proof/<migration>/``, the report under ``validation/reports/``, both in one bucket. The execution role
    allows no more; this refuses the document before anything is read (one line naming its place)."""
    fix = "pass the document `validate --follow --on` builds"
    if not ALIAS.match(follow.migration):
        raise UsageError(f"{ARGUMENT} follow.migration", f"{follow.migration!r} is not a migration name", fix)
    mark_bucket, mark_key = split_s3_uri(follow.mark, f"{ARGUMENT} follow.mark", fix)
    report_bucket, report_key = split_s3_uri(report_dir, f"{ARGUMENT} report_dir", fix)
    if not within(report_key, REPORTS_PREFIX):
        raise UsageError(f"{ARGUMENT} report_dir", f"{report_dir!r} is not under s3://{report_bucket}/{REPORTS_PREFIX}", fix)
    home = proof_prefix(follow.migration)
    if mark_bucket != report_bucket or not within(mark_key, home):
        raise UsageError(f"{ARGUMENT} follow.mark", f"{follow.mark!r} is not under s3://{report_bucket}/{home}, "
                         f"where migration {follow.migration}'s mark is kept", fix)


def argument_value(argv: list[str]) -> str | None:
    """The value of ``--request`` among the job's arguments (``--request V`` or ``--request=V``); the
    platform's own arguments (Glue's ``--JOB_NAME``, ``--TempDir`` ...) are ignored."""
    for i, arg in enumerate(argv):
        if arg == ARGUMENT and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(ARGUMENT + "="):
            return arg.split("=", 1)[1]
    return None
