"""A registry other than ECR's own host, reached through the Docker Registry HTTP API v2.

``--registry HOST:PORT`` (``make images``, tests) pushes to that registry instead of the host ECR
reports. ECR is still asked which repositories exist and for the login token (GetAuthorizationToken);
the pushed images are looked up in the registry itself, with the same token as basic-auth
credentials. This is the same contract as ECR: the local test registry (Debian's docker-registry)
accepts exactly the credentials moto's ECR issues.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UnreachableError, UsageError

ACCEPT = ", ".join(
    (
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.oci.image.index.v1+json",
    )
)


class Registry:
    def __init__(self, host: str, ca_file: Path | None = None):
        self.host = host
        self.ca_file = ca_file
        self.auth: tuple[str, str] | None = None

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        import requests

        url = f"https://{self.host}/v2/{path}"
        verify: str | bool = str(self.ca_file) if self.ca_file else True
        try:
            resp = requests.request(method, url, auth=self.auth, verify=verify, timeout=30, **kwargs)
        except requests.RequestException as exc:
            raise UnreachableError(f"registry {self.host} is unreachable ({type(exc).__name__}: {str(exc)[:160]})") from None
        if resp.status_code == 401:
            raise UsageError(
                f"registry {self.host}",
                "refused the ECR token's credentials (401)",
                "give the registry the credentials ECR's GetAuthorizationToken issues for this account",
            )
        return resp

    def check(self, username: str, password: str) -> None:
        """Logs in (GET /v2/ with the credentials): unreachable or refusing -> one line, exit 2."""
        self.auth = (username, password)
        resp = self._request("GET", "")
        if resp.status_code != 200:
            raise UnreachableError(f"registry {self.host} answered {resp.status_code} to GET /v2/")

    def pushed_digest(self, repository: str, *, digest: str | None = None, tag: str | None = None) -> str | None:
        if self.auth is None:
            return None  # not logged in yet: nothing can be verified, so nothing is reused
        resp = self._request("HEAD", f"{repository}/manifests/{digest or tag}", headers={"Accept": ACCEPT})
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise UnreachableError(f"registry {self.host}: HEAD {repository}/manifests/{digest or tag} answered {resp.status_code}")
        return resp.headers.get("Docker-Content-Digest")

    def add_tag(self, repository: str, digest: str, tag: str) -> None:
        got = self._request("GET", f"{repository}/manifests/{digest}", headers={"Accept": ACCEPT})
        if got.status_code != 200:
            raise UnreachableError(f"registry {self.host}: {repository}@{digest} disappeared while adding tag {tag}")
        put = self._request("PUT", f"{repository}/manifests/{tag}", data=got.content,
                            headers={"Content-Type": got.headers.get("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")})
        if put.status_code not in (200, 201):
            raise UnreachableError(f"registry {self.host}: tagging {repository}@{digest} as {tag} answered {put.status_code}")
