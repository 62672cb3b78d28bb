"""``msk-migrate build-images`` and ``./build_images.py``: one click command, two entry points."""

from __future__ import annotations

from pathlib import Path

import click

from .. import paths
from ..cliutil import human, output_option, run_click
from ..clivalues import Checked
from ..errors import UsageError
from ..imagebuild.images import IMAGE_NAMES
from ..outcome import Outcome, View, col
from ..render import render
from .options import READ_FILE


def _repositories_from_env_file(env_file: Path, account: str, region: str) -> dict[str, str]:
    """ECR repository names from infra/environments/<env>.yaml (the stack's own naming); the file's
    account and region must be the ones given on the command line."""
    from ..config.environment import load_environment
    from ..imagebuild import inputs

    inputs.account_id(account)
    inputs.region(region)
    cfg = load_environment(env_file)
    for field, given, configured in (("ACCOUNT", account, cfg.account_id), ("REGION", region, cfg.region)):
        if given.strip() != configured:
            raise UsageError(field, f"{given!r} differs from {env_file.name}'s {configured!r}", "build for the account and region of that environment")
    return dict(cfg.ecr_repository_names())


def _job_package_home(env_file: Path | None, env_name: str, account: str, region: str) -> tuple[object | None, str]:
    """The environment whose bucket receives the validation job package, or None and why not. An explicit
    --env-file was checked against ACCOUNT/REGION already; the repository's own <env>.yaml ships the package
    only when it describes that account and region (another account's build pushes its images only)."""
    from ..config.environment import load_environment
    from ..config.environment_files import ENVIRONMENTS_DIR

    path = env_file or ENVIRONMENTS_DIR / f"{env_name}.yaml"
    if not path.is_file():
        return None, f"no environment file {path}: the validation job package was not shipped (give --env-file)"
    cfg = load_environment(path)
    if (cfg.account_id, cfg.region) != (account.strip(), region.strip()):
        return None, (f"{path.name} is account {cfg.account_id}, {cfg.region}: the validation job package was not shipped "
                      "(give --env-file of this account's environment)")
    return cfg, ""


def ship_job_package(cfg, console) -> dict:
    """Build the validation job for the stack's EMR release and ship it to the environment's bucket (the build
    module's last step; the deploy rehearsal runs it against the applied stacks)."""
    import boto3

    from ..validation import job_package

    s3 = boto3.session.Session(region_name=cfg.region).client("s3")
    manifest, uploaded = job_package.ship(s3, cfg.config_bucket_name, lambda m: console.print(m, soft_wrap=True, highlight=False))
    return {"bucket": cfg.config_bucket_name, "prefix": manifest.prefix(), "digest": manifest.digest,
            "release_label": manifest.release_label, "spark_version": manifest.spark_version, "uploaded": uploaded}


def _builder(value: str) -> str:
    from ..imagebuild.builders import BUILDERS

    if value.strip().lower() not in BUILDERS:
        raise ValueError(f"unknown builder {value!r}")
    return value.strip().lower()


def _checked(check):
    """An ``imagebuild.inputs`` check as a parse-time type (its UsageError renamed to the option given)."""
    def run(value: str):
        from ..imagebuild import inputs

        return getattr(inputs, check)(value)
    return run


ACCOUNT = Checked("account", _checked("account_id"), metavar="ACCOUNT")
REGION = Checked("region", lambda v: _checked("region")(v).name, metavar="REGION")
ENV_NAME = Checked("env", _checked("env_name"), metavar="NAME")
REPOSITORY = Checked("repository", _checked("repository_name"), metavar="PREFIX")
IMAGES = Checked("images", lambda v: _checked("image_names")((v,)) and v, metavar="NAMES")
TAG = Checked("tag", _checked("release_tag"), metavar="TAG")
KAFKA_VERSION = Checked("version", _checked("kafka_version"), metavar="VERSION")
BUILDER = Checked("builder", _builder, "choose one of auto, docker, buildah", "auto|docker|buildah")
REGISTRY = Checked("registry", _checked("registry_host"), metavar="HOST[:PORT]")


@click.command(
    "build-images",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.argument("account", type=ACCOUNT)
@click.argument("region", type=REGION)
@click.option("--env", "env_name", type=ENV_NAME, default="dev", show_default=True, help="Environment name: repositories are msk-migrate-<env>-<image>.")
@click.option("--env-file", type=READ_FILE, help="infra/environments/<env>.yaml: take the repository names from it.")
@click.option("--repository-prefix", type=REPOSITORY, help="Repositories are <prefix>-<image> [default: msk-migrate-<env>].")
@click.option("--images", "images", multiple=True, type=IMAGES, help=f"Comma-separated subset of {', '.join(IMAGE_NAMES)} [default: all].")
@click.option("--tag", "release_tag", type=TAG, help="Release tag added next to the git commit tag, e.g. v1.4.0.")
@click.option("--kafka-version", type=KAFKA_VERSION,
              help="Kafka Connect runtime for the kafka-connect image (KAFKA_VERSION build arg) [default: jvm/pom.xml].")
@click.option("--no-push", is_flag=True, help="Build and load locally; no ECR, no manifest.")
@click.option("--dry-run", is_flag=True, help="Print every command and AWS call; run none of them.")
@click.option("--builder", default="auto", show_default=True, type=BUILDER,
              help="docker buildx (needs a Docker daemon) or buildah (daemonless); auto = docker when a daemon answers, else buildah.")
@click.option("--local-bases", is_flag=True,
              help="Build against local images named like the pinned bases minus their digests (the stand-ins of `make images`); never pull.")
@click.option("--registry", "registry", type=REGISTRY,
              help="Push to this registry instead of ECR's host (ECR still names the repositories and issues the token); the manifest goes to .local/images/.")
@click.option("--registry-ca", type=READ_FILE, help="PEM CA certificate of --registry.")
@output_option
@click.option("--ecr-endpoint-url", hidden=True, help="ECR endpoint override (tests: moto). AWS_ENDPOINT_URL_ECR works too.")
def build_images_cmd(
    account: str,
    region: str,
    env_name: str,
    env_file: Path | None,
    repository_prefix: str | None,
    images: tuple[str, ...],
    release_tag: str | None,
    kafka_version: str | None,
    no_push: bool,
    dry_run: bool,
    builder: str,
    local_bases: bool,
    registry: str | None,
    registry_ca: Path | None,
    output: str,
    ecr_endpoint_url: str | None,
) -> None:
    """Build the images for linux/amd64 (docker buildx or buildah), push them to ECR and write build/manifest-ACCOUNT-REGION.json.

    ACCOUNT and REGION are where `cdktf deploy` created the ECR repositories. Images: kafka-connect
    (Connect + MirrorMaker 2 + the replication policy JAR), prometheus, grafana. Tags: the git
    commit (12 characters, "-dirty" when image inputs have uncommitted changes) and --tag. The
    manifest pins each image by digest for the ECS task definitions.
    """
    from ..imagebuild import runner

    console = human(output)
    if env_file is not None and repository_prefix is not None:
        raise UsageError("--env-file", "conflicts with --repository-prefix", "give one of them")
    request = runner.Request(
        account=account,
        region=region,
        root=paths.REPO_ROOT,
        local_dir=paths.LOCAL_DIR,
        images=images,
        env=env_name,
        repository_prefix=repository_prefix,
        repositories=_repositories_from_env_file(env_file, account, region) if env_file is not None else None,
        release_tag=release_tag,
        kafka_version=kafka_version,
        push=not no_push,
        ecr_endpoint_url=ecr_endpoint_url,
        builder=builder,
        local_bases=local_bases,
        registry=registry,
        registry_ca=registry_ca,
    )
    plan = runner.prepare(request)
    job_home, job_note = _job_package_home(env_file, env_name, account, region) if not no_push else (None, "")
    for warning in plan.warnings:
        console.print(f"[yellow]warning[/]: {warning}", soft_wrap=True)
    printed = len(plan.warnings)
    if dry_run:
        summary = plan.summary()
        commands = plan.commands()
        if job_home is not None:
            commands.append(f"build the validation job for {_release()} and upload it to "
                            f"s3://{job_home.config_bucket_name}/validation/job/<version>/<digest>/ (+ manifest.json)")  # type: ignore[attr-defined]
        render(Outcome("build-images", "planned", 0, rows=_image_rows(summary), talked_to=_talked(summary),
                       extra={**summary, "dry_run": True, "pushed": False, "commands": commands,
                              "manifest_path": str(plan.manifest_path) if plan.push else None, "warnings": plan.warnings},
                       views=[View("images (dry run: nothing is executed)", [col("image", "image"), col("uri", "uri"), col("tag", "tag")])],
                       notes=["a real run would do, in order:", *(f"  {command}" for command in commands)]), output)
    result = runner.execute(plan, console)
    result.update({"dry_run": False, "pushed": plan.push, "warnings": plan.warnings})
    if job_home is not None:
        result["validation_job"] = ship_job_package(job_home, console)
    for warning in plan.warnings[printed:]:
        console.print(f"[yellow]warning[/]: {warning}", soft_wrap=True)
    notes = []
    if result.get("manifest_path"):
        previous = f" (previous kept as {result['previous_manifest_path']})" if result.get("previous_manifest_path") else ""
        notes += [f"manifest: {result['manifest_path']}{previous}",
                  "next: `cdktf deploy migration-<env>` pins these digests (docs/runbooks/build-and-roll.md)"]
    else:
        notes.append("built locally (--no-push): nothing pushed, no manifest written")
    job = result.get("validation_job")
    if job:
        notes.append(f"validation job: s3://{job['bucket']}/{job['prefix']} ({job['release_label']}, "
                     f"{'uploaded' if job['uploaded'] else 'already there'})")
    elif job_note:
        notes.append(job_note)
    render(Outcome("build-images", "built", 0, rows=_image_rows(result), talked_to=_talked(result), extra=result,
                   views=[View("images", [col("image", "image"), col("uri", "uri"),
                                          col("digest", lambda r: r.get("digest") or "no registry digest (not pushed)")])],
                   notes=notes), output)


def _release() -> str:
    from ..aws.emr_serverless import RELEASE_LABEL, RELEASE_SPARK

    return f"{RELEASE_LABEL} (Spark {RELEASE_SPARK})"


def main(argv: list[str] | None = None) -> None:
    """``./build_images.py`` behind the one error boundary (cliutil.run_guarded): bad input -> one line,
    exit 2; a failed build (BuildError) -> one line, exit 1."""
    run_click(build_images_cmd, argv, "build_images.py")


def _talked(summary: dict) -> dict:
    """``talked_to`` of the JSON document: the account and region whose registry the images go to."""
    return {"account": summary.get("account"), "region": summary.get("region")}


def _image_rows(summary: dict) -> list[dict]:
    return [{"image": name, **entry} for name, entry in (summary.get("images") or {}).items()]

