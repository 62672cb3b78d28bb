"""Where a ledger's files live: a local directory or an S3 prefix, behind one small interface.

The ledger needs four operations, and one of them is the whole of its concurrency control:

- :meth:`LedgerStorage.create` writes a file **only if no file of that name exists** and says whether it did.
  On S3 that is ``PutObject`` with ``If-None-Match: *`` (S3 conditional writes, 2024; a second writer of the
  same key gets ``412 PreconditionFailed``; two racing writers: one gets ``409 ConditionalRequestConflict``);
  in a directory it is ``os.link`` of a fully written temporary file to the final name, which fails with
  ``EEXIST`` when the name exists (atomic on a local filesystem; so a reader never sees half a file).
- :meth:`LedgerStorage.put` overwrites (the current view, a cache a reader can always rebuild from events).
- :meth:`LedgerStorage.read` returns a file's text or ``None`` when absent.
- :meth:`LedgerStorage.names` lists the files under a sub-prefix after a given name, in name order.

:meth:`LedgerStorage.identity` says who is writing: the AWS caller (STS ``GetCallerIdentity``) for S3, the
OS ``user@host`` for a directory. Inside the operator ECS task that caller is the task role, so the person who
started the task is passed in :data:`STARTED_BY_ENV` (the task's ``msk-migrate:started-by`` tag, which IAM
forces to the starter's ``aws:userid``: msk_migrate.aws.ecs_task) and :func:`started_by` returns it.
Every failure to reach the store is a :class:`~msk_migrate.errors.UsageError` naming the ledger (exit 2),
never a traceback.

On S3 every write carries a SHA-256 checksum (``ChecksumAlgorithm``, whatever the SDK's default): the stack's
config bucket is under S3 Object Lock, and S3 refuses a PutObject to such a bucket without ``Content-MD5`` or
an ``x-amz-checksum-*`` header. The bucket also refuses an event written without ``If-None-Match``
(infra/mskinfra/config_bucket.py), so :meth:`S3Storage.create` is the only way an event is written there.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import socket
import tempfile
from pathlib import Path
from typing import Any, Protocol

from ..errors import UsageError
from ..s3uri import is_s3_uri, split_s3_uri

FIELD = "ledger"
#: The person who started the command, when a process other than theirs runs it (the operator ECS task):
#: their ``aws:userid`` as the task's started-by tag holds it. Set by msk_migrate.aws.operator_entry.
STARTED_BY_ENV = "MSK_MIGRATE_STARTED_BY"
#: An ``aws:userid``: ``AIDA…`` (IAM user), ``AROA…:<role session name>`` (assumed role, SSO), an account id
#: (root), or ``<account>:<federated name>``; at most 256 characters (an ECS tag value).
_USER_ID = re.compile(r"^[\w+=,.@:/-]{1,256}$")
#: Every S3 write's checksum (Object Lock requires one; see the module docstring).
CHECKSUM = "SHA256"


def started_by(environ: Any = None) -> str | None:
    """The person named by :data:`STARTED_BY_ENV` (None when unset or empty). A value that is not an
    ``aws:userid`` is refused (UsageError, exit 2) before the ledger is read, so no event names a mangled person."""
    value = (os.environ if environ is None else environ).get(STARTED_BY_ENV, "").strip()
    if not value:
        return None
    if not _USER_ID.match(value):
        raise UsageError(STARTED_BY_ENV, f"{value[:80]!r} is not an AWS user id (aws:userid)",
                         "unset it: the operator task sets it from its msk-migrate:started-by tag")
    return value


class LedgerStorage(Protocol):
    """What :class:`~msk_migrate.ledger.book.Ledger` needs from a store (see the module docstring)."""

    location: str

    def read(self, name: str) -> str | None: ...
    def create(self, name: str, text: str) -> bool: ...
    def put(self, name: str, text: str, content_type: str = "application/json") -> None: ...
    def names(self, prefix: str, after: str) -> list[str]: ...
    def identity(self) -> str: ...
    def where(self, name: str) -> str: ...


def os_identity() -> str:
    """``user@host`` of this process."""
    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry (a container's numeric uid)
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


class DirectoryStorage:
    """A ledger in a local directory (``--local``, ``--config``, or a path given explicitly)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.location = str(self.root)

    def _fail(self, what: str, exc: OSError) -> UsageError:
        return UsageError(f"ledger {self.location}", f"cannot {what} it: {exc.strerror or exc}",
                          "make the directory writable by this user, or point MSK_MIGRATE_LEDGER elsewhere")

    def read(self, name: str) -> str | None:
        try:
            return (self.root / name).read_text()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._fail("read", exc) from None

    def _temp(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        return Path(tmp)

    def create(self, name: str, text: str) -> bool:
        try:
            tmp = self._temp(name, text)
            try:
                os.link(tmp, self.root / name)  # EEXIST when another writer made it first: the atomic step
                return True
            except FileExistsError:
                return False
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise self._fail("write", exc) from None

    def put(self, name: str, text: str, content_type: str = "application/json") -> None:
        try:
            os.replace(self._temp(name, text), self.root / name)
        except OSError as exc:
            raise self._fail("write", exc) from None

    def names(self, prefix: str, after: str) -> list[str]:
        folder = self.root / prefix
        try:
            found = sorted(f"{prefix}{p.name}" for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._fail("list", exc) from None
        return [n for n in found if n > after]

    def identity(self) -> str:
        return os_identity()

    def where(self, name: str) -> str:
        """Where file ``name`` of the ledger is, as an operator would type it."""
        return str(self.root / name)


def _code(exc: Exception) -> str | None:
    response = getattr(exc, "response", None)
    return response.get("Error", {}).get("Code") if isinstance(response, dict) else None


def _line(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


class S3Storage:
    """A ledger under ``s3://bucket/prefix/`` (an environment's: the stack's bucket, see :mod:`.location`)."""

    def __init__(self, uri: str):
        bucket, key = split_s3_uri(uri, FIELD, "use s3://bucket/prefix")
        self.bucket, self.prefix = bucket, (key.strip("/") + "/") if key.strip("/") else ""
        self.location = f"s3://{self.bucket}/{self.prefix}"
        self._client: Any = None
        self._who: str | None = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3  # imported on first use: local ledgers never pay for it

            self._client = boto3.client("s3")
        return self._client

    def _fail(self, what: str, exc: Exception) -> UsageError:
        return UsageError(f"ledger {self.location}", f"cannot {what} it: {_line(exc)}",
                          f"check the bucket and your credentials (s3:GetObject, s3:PutObject, s3:ListBucket on {self.location})")

    def read(self, name: str) -> str | None:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.prefix + name)["Body"].read().decode()
        except Exception as exc:
            if _code(exc) in ("NoSuchKey", "404"):
                return None
            raise self._fail("read", exc) from None

    def create(self, name: str, text: str) -> bool:
        try:
            self.client.put_object(Bucket=self.bucket, Key=self.prefix + name, Body=text.encode(),
                                   ContentType="application/json", IfNoneMatch="*", ChecksumAlgorithm=CHECKSUM)
            return True
        except Exception as exc:
            if _code(exc) in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
                return False
            raise self._fail("write", exc) from None

    def put(self, name: str, text: str, content_type: str = "application/json") -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=self.prefix + name, Body=text.encode(), ContentType=content_type,
                                   ChecksumAlgorithm=CHECKSUM)
        except Exception as exc:
            raise self._fail("write", exc) from None

    def names(self, prefix: str, after: str) -> list[str]:
        out: list[str] = []
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix + prefix, StartAfter=self.prefix + after)
            for page in pages:
                out += [o["Key"][len(self.prefix):] for o in page.get("Contents", [])]
        except Exception as exc:
            raise self._fail("list", exc) from None
        return sorted(n for n in out if n > after)

    def where(self, name: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{name}"

    def identity(self) -> str:
        if self._who is None:
            try:
                import boto3

                self._who = str(boto3.client("sts").get_caller_identity()["Arn"])
            except Exception as exc:
                # The write itself proves S3 access; STS alone failing leaves the OS user as the best name.
                self._who = f"{os_identity()} (AWS identity unknown: {_line(exc)})"
        return self._who


def storage_for(location: str) -> LedgerStorage:
    """The store of ``location``: ``s3://bucket/prefix`` or a directory path."""
    if is_s3_uri(location):
        return S3Storage(location)
    if "://" in location:
        raise UsageError(FIELD, f"{location!r}: a ledger lives in a directory or under s3://", "give a path or s3://bucket/prefix")
    path = Path(location)
    with contextlib.suppress(OSError):
        if path.exists() and not path.is_dir():
            raise UsageError(FIELD, f"{location} exists and is not a directory", "give the ledger's directory")
    return DirectoryStorage(path)
