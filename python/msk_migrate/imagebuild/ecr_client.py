"""ECR through boto3 (no AWS CLI needed): repositories check, login token, pushed-image lookup.

The endpoint is boto3's own (``AWS_ENDPOINT_URL_ECR`` / ``AWS_ENDPOINT_URL`` are honoured), or the
hidden ``--ecr-endpoint-url`` option; tests point it at moto's ECR server.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import UnreachableError, UsageError

T = TypeVar("T")


@dataclass(frozen=True)
class LoginToken:
    username: str
    password: str
    proxy_endpoint: str


class Ecr:
    def __init__(self, account: str, region: str, endpoint_url: str | None = None):
        self.account = account
        self.region = region
        self.endpoint_url = endpoint_url
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.session.Session().client(
                "ecr",
                region_name=self.region,
                endpoint_url=self.endpoint_url or None,
                config=Config(retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=10, read_timeout=60),
            )
        return self._client

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError

        try:
            return fn()
        except NoCredentialsError:
            raise UsageError("AWS credentials", "none found", "set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run `aws sso login`)") from None
        except EndpointConnectionError as exc:
            raise UnreachableError(f"ECR in {self.region}: {exc}") from None
        except ClientError as exc:
            err = exc.response.get("Error", {})
            code, message = err.get("Code", "Error"), err.get("Message", str(exc))
            if code in ("AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException", "InvalidSignatureException"):
                raise UsageError(
                    "AWS credentials",
                    f"{what} was refused ({code}: {message})",
                    f"use credentials of account {self.account} (or ones its ECR policy trusts) with ecr:{what}",
                ) from None
            raise UnreachableError(f"ECR {what} in {self.account}/{self.region} failed: {code}: {message}") from None
        except BotoCoreError as exc:
            raise UnreachableError(f"ECR {what} in {self.region} failed: {exc}") from None

    def repository_uris(self, names: list[str]) -> dict[str, str]:
        """``{name: repositoryUri}``; a UsageError naming every missing repository."""
        found: dict[str, str] = {}
        missing: list[str] = []
        for name in names:
            repos = self._call("DescribeRepositories", functools.partial(self._describe, name))
            if repos:
                found[name] = repos[0]["repositoryUri"]
            else:
                missing.append(name)
        if missing:
            plural = "repositories" if len(missing) > 1 else "repository"
            raise UsageError(
                "ECR",
                f"{plural} {', '.join(missing)} not found in account {self.account} region {self.region}",
                "run `cdktf deploy migration-<env>` first, or pass the --env / --repository-prefix the stack used",
            )
        return found

    def _describe(self, name: str) -> list[dict[str, Any]]:
        try:
            return self.client.describe_repositories(registryId=self.account, repositoryNames=[name])["repositories"]
        except self.client.exceptions.RepositoryNotFoundException:
            return []

    def login_token(self) -> LoginToken:
        data = self._call("GetAuthorizationToken", lambda: self.client.get_authorization_token(registryIds=[self.account]))
        auth = data["authorizationData"][0]
        username, _, password = base64.b64decode(auth["authorizationToken"]).decode().partition(":")
        return LoginToken(username, password, auth.get("proxyEndpoint", ""))

    def pushed_digest(self, repository: str, *, digest: str | None = None, tag: str | None = None) -> str | None:
        """Digest of the image in ECR, looked up by digest (verification) or by tag (fallback)."""
        image_id: dict[str, str] = {"imageDigest": digest} if digest else {"imageTag": tag or ""}

        def describe() -> list[dict[str, Any]]:
            try:
                return self.client.describe_images(registryId=self.account, repositoryName=repository, imageIds=[image_id])["imageDetails"]
            except self.client.exceptions.ImageNotFoundException:
                return []

        details = self._call("DescribeImages", describe)
        return details[0]["imageDigest"] if details else None

    def add_tag(self, repository: str, digest: str, tag: str) -> None:
        """Tags an image already in ECR (no docker pull/push): PutImage with its own manifest."""
        image = self._call(
            "BatchGetImage",
            lambda: self.client.batch_get_image(registryId=self.account, repositoryName=repository, imageIds=[{"imageDigest": digest}])["images"],
        )
        if not image:
            raise UnreachableError(f"ECR {repository}@{digest} disappeared while adding tag {tag}")
        kwargs = {"imageManifestMediaType": image[0]["imageManifestMediaType"]} if image[0].get("imageManifestMediaType") else {}
        self._call(
            "PutImage",
            lambda: self.client.put_image(registryId=self.account, repositoryName=repository, imageManifest=image[0]["imageManifest"],
                                          imageTag=tag, imageDigest=digest, **kwargs),
        )
