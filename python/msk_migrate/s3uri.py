"""``s3://bucket/key-or-prefix`` URIs: the one parser (validation reports, connector configs, cutover)."""

from __future__ import annotations

from .errors import UsageError

SCHEME = "s3://"


def is_s3_uri(location: str) -> bool:
    return location.startswith(SCHEME)


def split_s3_uri(uri: str, field: str, fix: str = "use s3://bucket/prefix") -> tuple[str, str]:
    """``(bucket, rest)`` of ``s3://bucket/rest``; ``rest`` as written (callers strip or extend it).

    Not an s3:// URI, or no bucket: :class:`UsageError` naming ``field`` (the option the URI came from)."""
    if not is_s3_uri(uri):
        raise UsageError(field, f"{uri!r} is not an s3:// URI", fix)
    bucket, _, rest = uri[len(SCHEME):].partition("/")
    if not bucket:
        raise UsageError(field, f"{uri!r} has no bucket", fix)
    return bucket, rest
