"""Where the mark lives: one JSON document at a local path or an S3 object (``--mark``).

Writes are atomic: a local mark is written to a temporary file in the same directory and renamed over
the old one (a reader or a killed follower sees the old mark or the new one, never half of one); an S3
PutObject replaces the object whole. A document that is not a mark is refused (exit 2), never overwritten.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ... import store
from ...errors import UsageError
from .mark import Mark

DEFAULT_NAME = "proof-mark.json"


class MarkStore:
    """The mark document at ``location`` (a ``.json`` path, a directory, or ``s3://bucket/prefix``)."""

    def __init__(self, location: str, field: str = "--mark", s3: Any = None):
        """``s3``: the S3 client (boto3's by default; the Spark job passes its JVM's, same calls)."""
        self.place = store.document(location, field, DEFAULT_NAME)
        self.field = field
        self._s3 = s3

    def __str__(self) -> str:
        return str(self.place)

    def load(self) -> Mark | None:
        """The stored mark, or None when there is none yet; anything else there, or a location that cannot be
        read (access denied, no such bucket): exit 2, left as it is (never taken for "no mark yet", which would
        start over and replace a mark it could not read)."""
        body = self.place.read_if_present(self._s3)
        if body is None:
            return None
        try:
            return Mark.from_dict(json.loads(body))
        except ValueError as exc:
            raise UsageError(self.field, f"{self.place} is not a usable proof mark: {str(exc).splitlines()[0]}",
                             "give the mark written by `msk-migrate validate --follow`, or a new location") from None

    def save(self, mark: Mark) -> None:
        body = json.dumps(mark.to_dict(), sort_keys=True).encode()
        if self.place.is_s3:
            self.place.write(body, "application/json", self._s3)
            return
        path = Path(self.place.name)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(body)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise UsageError(self.field, f"cannot write {self.place}: {exc.strerror or exc}", "give a writable path") from None

    def check_writable(self) -> None:
        self.place.check_writable(self._s3)
