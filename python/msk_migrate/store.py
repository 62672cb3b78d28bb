"""Where reports and certificates live: one local file or one S3 object, read and written the same way.

A location is what an operator types after ``--validation-report`` or ``--certificate``:

- a ``.json`` path or an existing file: that document;
- a directory (existing or not): the document's default name inside it;
- ``s3://bucket/key.json``: that object; ``s3://bucket/prefix`` (or ``s3://bucket``): the default name under it.

Invariants: every failure is a :class:`~msk_migrate.errors.UsageError` naming the option the location came
from (``field``), never a traceback; a companion document (the HTML next to the JSON) is in the same directory
or prefix as its main document; only local paths and ``s3://`` are accepted. boto3 is imported on first use
of an S3 location, so local-only runs (and the unit tests) never pay its import.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from .errors import UsageError
from .s3uri import SCHEME, is_s3_uri, split_s3_uri


@dataclass(frozen=True)
class Place:
    """One document: ``bucket`` and ``name`` (the key) for S3, or ``name`` as a local path when ``bucket`` is None."""

    field: str  #: the option the location came from; every error names it
    name: str
    bucket: str | None = None

    @property
    def is_s3(self) -> bool:
        return self.bucket is not None

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.name}" if self.is_s3 else self.name

    def sibling(self, name: str) -> Place:
        """Another document in the same directory or prefix."""
        parent = PurePosixPath(self.name).parent if self.is_s3 else Path(self.name).parent
        joined = str(parent / name) if str(parent) not in ("", ".") else name
        return replace(self, name=joined)

    def with_suffix(self, suffix: str) -> Place:
        """The companion document of the same stem (``report.json`` -> ``report.html``)."""
        return self.sibling(PurePosixPath(self.name).stem + suffix)

    def read_bytes(self, missing_fix: str, s3: Any = None) -> bytes:
        """The document's bytes; absent: ``UsageError`` with ``missing_fix``; unreadable: ``UsageError`` saying why.
        ``s3``: the S3 client to read with (boto3's by default; the Spark job passes its JVM's, same calls)."""
        body = self.read_if_present(s3)
        if body is None:
            raise UsageError(self.field, f"{self} not found", missing_fix)
        return body

    def read_if_present(self, s3: Any = None) -> bytes | None:
        """The document's bytes, None when there is no such document (key or file); any other failure (access
        denied, no such bucket, a directory) is a ``UsageError`` saying why, never taken for an absent document."""
        try:
            if self.is_s3:
                return (s3 or _s3_client()).get_object(Bucket=self.bucket, Key=self.name)["Body"].read()
            return Path(self.name).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise UsageError(self.field, f"cannot read {self}: {exc.strerror or exc}", "give a readable file") from None
        except Exception as exc:
            if _s3_error_code(exc) in ("NoSuchKey", "404"):
                return None
            raise UsageError(self.field, f"cannot read {self}: {_first_line(exc)}",
                             "check the S3 URI and your credentials (s3:GetObject)") from None

    def write(self, body: str | bytes, content_type: str, s3: Any = None) -> str:
        """Write the document (parent directories created); returns where it went, as an operator would type it.
        ``s3``: the S3 client to write with (boto3's by default; the Spark job passes its JVM's, same calls)."""
        data = body.encode() if isinstance(body, str) else body
        try:
            if self.is_s3:
                (s3 or _s3_client()).put_object(Bucket=self.bucket, Key=self.name, Body=data, ContentType=content_type)
            else:
                path = Path(self.name)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        except OSError as exc:
            raise UsageError(self.field, f"cannot write {self}: {exc.strerror or exc}", "give a writable path") from None
        except Exception as exc:
            raise UsageError(self.field, f"cannot write {self}: {_first_line(exc)}", "check the S3 URI and your credentials (s3:PutObject)") from None
        return str(self)

    def check_writable(self, s3: Any = None) -> None:
        """Refuse, before anything else happens, a place that cannot be written: a bucket prefix that cannot be
        listed, a path under a file, or a nearest existing directory that is not writable. The S3 check lists
        the document's own prefix (one key at most): a role scoped to that prefix passes it, where HeadBucket
        would need ListBucket on the whole bucket (the validation job's role has it for its prefixes only)."""
        if self.is_s3:
            prefix = str(PurePosixPath(self.name).parent)
            try:
                (s3 or _s3_client()).list_objects_v2(Bucket=self.bucket, Prefix="" if prefix == "." else prefix + "/", MaxKeys=1)
            except Exception as exc:
                raise UsageError(self.field, f"cannot write to bucket {self.bucket!r}: {_first_line(exc)}",
                                 "check the bucket name and s3:ListBucket/s3:PutObject access to the prefix") from None
            return
        parent = Path(self.name).parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise UsageError(self.field, f"{parent} exists and is not a directory", "give a directory")
        if not os.access(parent, os.W_OK):
            raise UsageError(self.field, f"{parent} is not a writable directory", "choose a writable location")


def document(location: str, field: str, default_name: str) -> Place:
    """The document a location names: a ``.json`` path/key or an existing file as given; otherwise
    ``default_name`` inside the directory or under the prefix."""
    if is_s3_uri(location):
        bucket, key = split_s3_uri(location, field)
        if key.endswith(".json"):
            return Place(field, key, bucket)
        prefix = key.strip("/")
        return Place(field, f"{prefix}/{default_name}" if prefix else default_name, bucket)
    _refuse_other_schemes(location, field)
    path = Path(location)
    if path.suffix == ".json" or path.is_file():
        return Place(field, str(path))
    return Place(field, str(path / default_name))


def in_directory(location: str, field: str, name: str) -> Place:
    """``name`` inside a location that is always a directory or prefix (``--validation-report``)."""
    if is_s3_uri(location):
        bucket, key = split_s3_uri(location, field)
        prefix = key.strip("/")
        return Place(field, f"{prefix}/{name}" if prefix else name, bucket)
    _refuse_other_schemes(location, field)
    path = Path(location)
    if path.exists() and not path.is_dir():
        raise UsageError(field, f"{location} exists and is not a directory", "give a directory")
    return Place(field, str(path / name))


def _refuse_other_schemes(location: str, field: str) -> None:
    if "://" in location:
        raise UsageError(field, f"{location!r}: only local paths and s3:// are supported", "give a path or s3://bucket/prefix")


def _s3_client() -> Any:
    # Imported here: boto3 costs about half a second to import, which local paths should not pay.
    import boto3

    return boto3.client("s3")


def _s3_error_code(exc: Exception) -> str | None:
    response = getattr(exc, "response", None)
    return response.get("Error", {}).get("Code") if isinstance(response, dict) else None


def _first_line(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__
