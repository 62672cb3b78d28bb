"""Secrets Manager and S3 for the Spark job, through the AWS SDK for Java v2 in the job's own JVM (py4j).

The job runs on a release's image without boto3; its jars hold the SDK (the one aws-msk-iam-auth brings,
plus its Secrets Manager and S3 clients: jvm/classpaths/spark-kafka). These adapters answer the few
boto3 calls the job makes, with boto3's names and shapes, so the secret resolver
(:class:`msk_migrate.access.secrets.SecretResolver`) and the report's store (:mod:`msk_migrate.store`)
run unchanged: ``get_secret_value(SecretId=...)``, ``put_object(Bucket=, Key=, Body=, ContentType=)``,
``list_objects_v2(Bucket=, Prefix=, MaxKeys=)``, ``get_object(Bucket=, Key=)`` (the proof mark a chained
run continues). Credentials and region come from the SDK's default chains (the job run's
execution role and region); an endpoint override (``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT_URL_S3``) is the
SDK's own, with path-style S3 addressing under it. Standard library and pyspark only.
"""

from __future__ import annotations

from typing import Any


class JvmAwsError(Exception):
    """An AWS call failed; the message is the SDK's own (its first line). ``response`` carries the service's
    error code in botocore's shape (``{"Error": {"Code": "NoSuchKey"}}``), so callers tell an absent object
    from a refused one exactly as they do with boto3."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.response = {"Error": {"Code": code}} if code else {}


def _error_code(exc: BaseException) -> str | None:
    """The AWS error code of a failed SDK call (``NoSuchKey``, ``AccessDenied``), or its HTTP status."""
    java = getattr(exc, "java_exception", None)
    while java is not None:
        try:
            details = java.awsErrorDetails()
            code = details.errorCode() if details is not None else None
            return str(code) if code else str(java.statusCode())
        except Exception:  # not an AwsServiceException: its cause may be
            java = java.getCause()
    return None


def _cause(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    while java is not None and java.getCause() is not None:
        java = java.getCause()
    if java is not None:
        return str(java.getMessage() or java.getClass().getSimpleName()).splitlines()[0]
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _endpoint_override(jvm: Any, service: str) -> str | None:
    """The SDK's endpoint override for ``service`` as the JVM sees it (its environment or system properties)."""
    system = jvm.java.lang.System
    return (system.getenv(f"AWS_ENDPOINT_URL_{service.upper()}") or system.getenv("AWS_ENDPOINT_URL")
            or system.getProperty(f"aws.endpointUrl{service}") or system.getProperty("aws.endpointUrl"))


def _region_of_arn(arn: str) -> str | None:
    parts = arn.split(":")
    return parts[3] if len(parts) >= 7 and parts[3] else None


class JvmSecretsManager:
    """``boto3.client("secretsmanager")``'s ``get_secret_value``, one SDK client per region (an ARN names its own)."""

    def __init__(self, jvm: Any):
        self._jvm = jvm
        self._clients: dict[str | None, Any] = {}

    def _client(self, region: str | None) -> Any:
        if region not in self._clients:
            builder = self._jvm.software.amazon.awssdk.services.secretsmanager.SecretsManagerClient.builder()
            if region:
                builder = builder.region(self._jvm.software.amazon.awssdk.regions.Region.of(region))
            self._clients[region] = builder.build()
        return self._clients[region]

    def get_secret_value(self, SecretId: str) -> dict[str, Any]:
        request_class = self._jvm.software.amazon.awssdk.services.secretsmanager.model.GetSecretValueRequest
        try:
            response = self._client(_region_of_arn(SecretId)).getSecretValue(request_class.builder().secretId(SecretId).build())
        except Exception as exc:
            raise JvmAwsError(_cause(exc), _error_code(exc)) from None
        return {"SecretString": response.secretString()}


class _Body:
    """``get_object``'s ``Body``: the object's bytes, read once."""

    def __init__(self, data: bytes):
        self._data = data

    def read(self) -> bytes:
        return self._data


class JvmS3:
    """``boto3.client("s3")``'s ``get_object``, ``put_object`` and ``list_objects_v2``."""

    def __init__(self, jvm: Any):
        self._jvm = jvm
        s3 = jvm.software.amazon.awssdk.services.s3
        builder = s3.S3Client.builder().crossRegionAccessEnabled(True)
        if _endpoint_override(jvm, "S3"):
            builder = builder.forcePathStyle(True)  # an S3-compatible endpoint names no bucket host
        self._client = builder.build()
        self._model = s3.model

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        request = self._model.GetObjectRequest.builder().bucket(Bucket).key(Key).build()
        try:
            found = self._client.getObjectAsBytes(request)
        except Exception as exc:
            raise JvmAwsError(_cause(exc), _error_code(exc)) from None
        return {"Body": _Body(bytes(found.asByteArray())), "ContentType": found.response().contentType()}

    def put_object(self, Bucket: str, Key: str, Body: bytes, ContentType: str = "application/octet-stream") -> dict[str, Any]:
        request = self._model.PutObjectRequest.builder().bucket(Bucket).key(Key).contentType(ContentType).build()
        body = self._jvm.software.amazon.awssdk.core.sync.RequestBody.fromBytes(bytearray(Body))
        try:
            response = self._client.putObject(request, body)
        except Exception as exc:
            raise JvmAwsError(_cause(exc), _error_code(exc)) from None
        return {"ETag": response.eTag()}

    def list_objects_v2(self, Bucket: str, Prefix: str = "", MaxKeys: int = 1000) -> dict[str, Any]:
        request = self._model.ListObjectsV2Request.builder().bucket(Bucket).prefix(Prefix).maxKeys(MaxKeys).build()
        try:
            response = self._client.listObjectsV2(request)
        except Exception as exc:
            raise JvmAwsError(_cause(exc), _error_code(exc)) from None
        return {"KeyCount": response.keyCount(), "Contents": [{"Key": o.key()} for o in response.contents()]}


def driver_jvm(spark: Any) -> Any:
    """The py4j view of the job's driver JVM."""
    return spark.sparkContext._jvm
