"""Where connector configs come from besides the renderer: a directory, or S3 (as uploaded by the CDKTF
stack). Both yield ``{name: config}``. Only the *direct* children of the S3 prefix are read: the rollback
templates under ``connectors/reverse/`` are never applied by ``connectors apply --from-s3 .../connectors/``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import UnreachableError, UsageError
from ..s3uri import split_s3_uri


def _normalize(name_hint: str, data: object, origin: str) -> tuple[str, dict[str, str]]:
    if not isinstance(data, dict):
        raise UsageError(origin, "connector JSON must be an object", "use {\"name\": ..., \"config\": {...}} or a flat config")
    config = data.get("config", data)
    name = data.get("name") or config.get("name") or name_hint
    if "connector.class" not in config:
        raise UsageError(f"{origin}: connector.class", "missing", "render the configs with `msk-migrate connectors render`")
    return name, {k: str(v) for k, v in config.items()}


def from_dir(path: str | Path) -> dict[str, dict[str, str]]:
    path = Path(path)
    files = sorted(path.glob("*.json"))
    if not files:
        raise UsageError(str(path), "no *.json connector configs found", "point --from-dir at the rendered configs")
    out = {}
    for f in files:
        try:
            name, cfg = _normalize(f.stem, json.loads(f.read_text()), str(f))
        except json.JSONDecodeError as exc:
            raise UsageError(str(f), f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
        out[name] = cfg
    return out


def from_s3(uri: str, endpoint_url: str | None = None) -> dict[str, dict[str, str]]:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    bucket, prefix = split_s3_uri(uri, "--from-s3", "use s3://bucket/prefix/")
    s3 = boto3.client("s3", endpoint_url=endpoint_url)
    out = {}
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        keys = [o["Key"] for p in pages for o in p.get("Contents", [])
                if o["Key"].endswith(".json") and "/" not in o["Key"][len(prefix):].lstrip("/")]
        if not keys:
            raise UsageError("--from-s3", f"no *.json objects under {uri}", "deploy the stack first (cdktf deploy)")
        for key in sorted(keys):
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise UsageError(f"s3://{bucket}/{key}", f"not valid JSON ({exc})", "re-deploy the stack") from None
            name, cfg = _normalize(Path(key).stem, data, f"s3://{bucket}/{key}")
            out[name] = cfg
    except ClientError as exc:
        raise UnreachableError(f"S3 {uri}: {exc.response['Error'].get('Message') or exc}") from None
    except BotoCoreError as exc:
        raise UnreachableError(f"S3 {uri}: {exc}") from None
    return out


def check_no_plaintext_secrets(configs: dict[str, dict[str, str]]) -> None:
    """Refuse configs that carry a secret value instead of a ${provider:...} reference."""
    for name, cfg in configs.items():
        for key, value in cfg.items():
            if "jaas" in key and re.search(r'password="(?!\$\{)', value):
                raise UsageError(f"{name}: {key}", "contains a plaintext password",
                                 "reference it as ${env:VAR} and inject VAR from Secrets Manager")
            if key.endswith(("ssl.keystore.key", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password")) and value and not value.startswith("${"):  # noqa: E501
                raise UsageError(f"{name}: {key}", "contains a plaintext secret",
                                 "reference it as ${env:VAR} or ${file:PATH:KEY}")
