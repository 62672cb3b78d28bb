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

from ... import store
from ...errors import UsageError
from .mark import Mark

DEFAULT_NAME = "proof-mark.json"


class MarkStore:
    """The mark document at ``location`` (a ``.json`` path, a directory, or ``s3://bucket/prefix``)."""

    def __init__(self, location: str, field: str = "--mark"):
        self.place = store.document(location, field, DEFAULT_NAME)
        self.field = field

    def __str__(self) -> str:
        return str(self.place)

    def exists(self) -> bool:
        if self.place.is_s3:
            try:
                self.place.read_bytes("")
                return True
            except UsageError:
                return False
        return Path(self.place.name).is_file()

    def load(self) -> Mark | None:
        """The stored mark, or None when there is none yet; anything else there: exit 2, left as it is."""
        if not self.exists():
            return None
        body = self.place.read_bytes("pass the location of the mark written by `msk-migrate validate --follow`")
        try:
            return Mark.from_dict(json.loads(body))
        except ValueError as exc:
            raise UsageError(self.field, f"{self.place} is not a usable proof mark: {str(exc).splitlines()[0]}",
                             "give the mark written by `msk-migrate validate --follow`, or a new location") from None

    def save(self, mark: Mark) -> None:
        body = json.dumps(mark.to_dict(), sort_keys=True).encode()
        if self.place.is_s3:
            self.place.write(body, "application/json")
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
        self.place.check_writable()
