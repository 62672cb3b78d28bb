"""A RECORDING stand-in for the docker CLI (there is no Docker engine on the test machine).

It builds nothing. Each call appends {"argv": [...], "stdin": ...} to $FAKE_DOCKER_LOG and answers
like docker would, enough for build_images.py to proceed:

- ``buildx version`` / ``info`` / ``buildx inspect --bootstrap``: healthy answers, unless
  FAKE_DOCKER_NO_BUILDX / FAKE_DOCKER_NO_ENGINE are set; FAKE_DOCKER_PLATFORMS overrides the builder's
  platform list.
- ``login --password-stdin``: records the password read on stdin; FAKE_DOCKER_LOGIN_FAIL fails it.
- ``buildx build ... --metadata-file F (--push|--load)``: with --push, "pushes" by putting an image
  manifest for every --tag into the ECR endpoint (moto: FAKE_DOCKER_ECR_ENDPOINT or
  AWS_ENDPOINT_URL_ECR), then writes F with the
  containerimage.digest ECR assigned. FAKE_DOCKER_FAIL_IMAGE=<name> fails images/<name>/Dockerfile;
  FAKE_DOCKER_NO_METADATA_DIGEST omits the digest from F.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys


def record(argv: list[str], stdin: str | None) -> None:
    with open(os.environ["FAKE_DOCKER_LOG"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"argv": argv, "stdin": stdin}) + "\n")


def opt_values(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == name]


def push_to_ecr(tags: list[str], seed: str) -> str:
    import boto3

    registry, _, first = tags[0].partition("/")
    region = registry.split(".")[3]
    ecr = boto3.client("ecr", region_name=region, endpoint_url=os.environ.get("FAKE_DOCKER_ECR_ENDPOINT") or None)
    layer = "sha256:" + hashlib.sha256(seed.encode()).hexdigest()
    image_manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "size": 1, "digest": layer},
        "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "size": 1, "digest": layer}],
    })
    repository = first.rsplit(":", 1)[0]
    immutable = ecr.describe_repositories(repositoryNames=[repository])["repositories"][0].get("imageTagMutability") == "IMMUTABLE"
    for ref in tags:
        tag = ref.rsplit(":", 1)[1]
        if immutable and any(i.get("imageTag") == tag for i in ecr.list_images(repositoryName=repository)["imageIds"]):
            raise SystemExit(f"ERROR: failed to push {ref}: tag invalid: The image tag '{tag}' already exists in the "
                             f"'{repository}' repository and cannot be overwritten because the repository is immutable.")
    for ref in tags:
        ecr.put_image(repositoryName=repository, imageManifest=image_manifest, imageTag=ref.rsplit(":", 1)[1])
    tag = tags[0].rsplit(":", 1)[1]
    return ecr.describe_images(repositoryName=repository, imageIds=[{"imageTag": tag}])["imageDetails"][0]["imageDigest"]


def main() -> int:
    argv = sys.argv[1:]
    stdin = sys.stdin.read() if "--password-stdin" in argv else None
    record(argv, stdin)
    env = os.environ
    if argv[:1] == ["buildx"] and env.get("FAKE_DOCKER_NO_BUILDX"):
        print("docker: 'buildx' is not a docker command.", file=sys.stderr)
        return 1
    if argv[:2] == ["buildx", "version"]:
        print("github.com/docker/buildx v0.20.0 fake-recording-docker")
        return 0
    if argv[:1] == ["info"]:
        if env.get("FAKE_DOCKER_NO_ENGINE"):
            print("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", file=sys.stderr)
            return 1
        print("27.5.1")
        return 0
    if argv[:2] == ["buildx", "inspect"]:
        platforms = env.get("FAKE_DOCKER_PLATFORMS", "linux/arm64, linux/amd64*, linux/amd64/v2")
        print(f"Name:   default\nDriver: docker\n\nNodes:\nName:      default\nStatus:    running\nPlatforms: {platforms}")
        return 0
    if argv[:1] == ["login"]:
        if env.get("FAKE_DOCKER_LOGIN_FAIL"):
            print("Error response from daemon: login attempt failed with status: 400 Bad Request", file=sys.stderr)
            return 1
        print("Login Succeeded")
        return 0
    if argv[:2] == ["buildx", "build"]:
        dockerfile = opt_values(argv, "--file")[0]
        tags = opt_values(argv, "--tag")
        metadata_file = opt_values(argv, "--metadata-file")[0]
        print(f"#0 building with \"default\" instance using docker driver\n#1 [internal] load build definition from {dockerfile}")
        if env.get("FAKE_DOCKER_FAIL_IMAGE") and f"/{env['FAKE_DOCKER_FAIL_IMAGE']}/" in dockerfile:
            print("#9 ERROR: process \"/bin/sh -c mvn ...\" did not complete successfully: exit code: 1")
            print("ERROR: failed to solve: process \"/bin/sh -c mvn ...\" did not complete successfully: exit code: 1", file=sys.stderr)
            return 1
        seed = dockerfile + "|" + ",".join(tags)
        digest = push_to_ecr(tags, seed) if "--push" in argv else "sha256:" + hashlib.sha256(("local|" + seed).encode()).hexdigest()
        metadata = {"image.name": ",".join(tags), "buildx.build.ref": "default/default/fake"}
        if not env.get("FAKE_DOCKER_NO_METADATA_DIGEST"):
            metadata["containerimage.digest"] = digest
        with open(metadata_file, "w", encoding="utf-8") as fh:
            json.dump(metadata, fh)
        print("#12 exporting to image\n#12 DONE 0.1s")
        return 0
    print(f"fake docker: unsupported command {argv}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
