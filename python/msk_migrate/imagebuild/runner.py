"""The ordered steps of a build: validate -> preflight docker -> check the ECR repositories and the
tags already there -> log in -> build and push each image -> verify each digest in ECR -> write the
manifest.

Nothing reaches AWS or docker before every argument, the git checkout and docker itself have been
checked, so bad input never leaves a half-pushed set of images. A dry run stops after
:func:`prepare` and prints :meth:`Plan.commands`.

The stacks create the repositories with IMMUTABLE tags, so a tag is pushed at most once: an image
whose commit tag is already in ECR (a rerun, or a retry after a failed build) is reused, not
rebuilt; a release tag is added to it through the ECR API; a release tag that already names a
different image is refused before anything is built.
"""

from __future__ import annotations

import datetime as dt
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from .. import versions
from ..config import environment as envconfig
from ..errors import UnreachableError, UsageError
from . import builders, gitinfo, inputs, manifest
from . import docker as dockercli
from .bases import read_bases
from .buildah import Store
from .ecr_client import Ecr
from .images import IMAGES, PLATFORM
from .registry import Registry


@dataclass
class Request:
    account: str
    region: str
    root: Path
    local_dir: Path
    images: tuple[str, ...] = ()
    env: str = "dev"
    repository_prefix: str | None = None
    repositories: dict[str, str] | None = None  # from --env-file; wins over env/prefix
    release_tag: str | None = None
    kafka_version: str | None = None
    push: bool = True
    ecr_endpoint_url: str | None = None
    #: auto (docker when a daemon answers, else buildah), docker or buildah.
    builder: str = "auto"
    #: Build against local images named like the pinned bases minus their digests; never pull.
    local_bases: bool = False
    #: Push to this registry (host[:port]) instead of the host ECR reports; ECR still names the
    #: repositories and issues the login token. The manifest then goes under <local dir>/images/.
    registry: str | None = None
    #: CA certificate of --registry (a directory holding it is passed to buildah as --cert-dir).
    registry_ca: Path | None = None


@dataclass
class ImagePlan:
    name: str
    dockerfile: str
    repository: str
    repository_uri: str  # <registry>/<repository>; replaced by ECR's repositoryUri once described
    commit_tag: str
    release_tag: str | None
    build_args: dict[str, str]
    labels: dict[str, str]
    metadata_file: Path
    log_file: Path
    #: Set when the commit tag is already in ECR: the image is reused, not rebuilt.
    reuse_digest: str | None = None
    #: Base images that must already be in local storage (--local-bases).
    local_bases: list[str] = field(default_factory=list)

    @property
    def tags(self) -> list[str]:
        return [self.commit_tag] + ([self.release_tag] if self.release_tag else [])

    @property
    def primary_tag(self) -> str:
        return self.release_tag or self.commit_tag

    @property
    def uri(self) -> str:
        return f"{self.repository_uri}:{self.primary_tag}"


@dataclass
class Plan:
    account: str
    region: inputs.Region
    root: Path
    git_commit: str
    push: bool
    images: list[ImagePlan]
    manifest_path: Path
    ecr: Ecr
    builder: builders.Builder
    #: Where pushed images are looked up: ECR itself, or the --registry that replaces its host.
    images_store: Ecr | Registry
    #: Repository name of every image (built or not) in this environment: a partial build keeps the
    #: previous manifest's entry of an image only when it names the same repository.
    repositories: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def registry(self) -> str:
        if isinstance(self.images_store, Registry):
            return self.images_store.host
        return self.region.registry(self.account)

    def commands(self) -> list[str]:
        """Every command a real run would execute, in order (the dry run's output)."""
        region = f"  # boto3 ecr client, region {self.region.name}"
        out = [shlex.join(c) for c in self.builder.preflight_commands()]
        for img in self.images:
            for ref in img.local_bases:
                out.append(f"{self.builder.name}: {ref} must be in local storage (--local-bases: never pulled)")
        if self.push:
            for img in self.images:
                out.append(f"ecr.describe_repositories(registryId={self.account!r}, repositoryNames=[{img.repository!r}]){region}")
            for img in self.images:
                for tag in img.tags:
                    out.append(
                        f"ecr.describe_images(registryId={self.account!r}, repositoryName={img.repository!r}, "
                        f"imageIds=[{{'imageTag': {tag!r}}}]){region}; already there -> reuse, do not rebuild"
                    )
            out.append(f"ecr.get_authorization_token(registryIds=[{self.account!r}]){region}")
            out.append(shlex.join(self.builder.login(self.registry)) + "  # password on stdin, from the token")
        for img in self.images:
            out += [shlex.join(step) for step in self.builder.steps(img, self.push)]
            if self.push:
                out.append(
                    f"ecr.describe_images(registryId={self.account!r}, repositoryName={img.repository!r}, "
                    f"imageIds=[{{'imageDigest': <containerimage.digest from {img.metadata_file.name}>}}]){region}"
                )
        if self.push:
            out.append(f"write {self.manifest_path}")
        return out

    def summary(self, digests: dict[str, str | None] | None = None) -> dict[str, Any]:
        digests = digests or {}
        return {
            "account": self.account,
            "region": self.region.name,
            "git_commit": self.git_commit,
            "images": {
                img.name: {"repository": img.repository, "uri": img.uri, "tag": img.primary_tag, "digest": digests.get(img.name)}
                for img in self.images
            },
        }


def default_repositories(env: str, prefix: str | None) -> dict[str, str]:
    """The stacks' naming (config.environment): ``<prefix>-<image>``, prefix ``msk-migrate-<env>``."""
    env = inputs.env_name(env)
    names = envconfig.ecr_repository_names(prefix if prefix is not None else envconfig.default_prefix(env))
    return {name: inputs.repository_name(repo) for name, repo in names.items()}


def prepare(req: Request, now: dt.datetime | None = None) -> Plan:
    """Validates everything that can be validated without docker or AWS and lays out the commands."""
    account = inputs.account_id(req.account)
    region = inputs.region(req.region)
    names = inputs.image_names(req.images)
    release = inputs.release_tag(req.release_tag)
    kafka_version = inputs.kafka_version(req.kafka_version)
    repositories = req.repositories or default_repositories(req.env, req.repository_prefix)
    builder_name = builders.resolve(req.builder)
    registry_host = inputs.registry_host(req.registry) if req.registry else None
    if req.registry_ca is not None and not req.registry_ca.is_file():
        raise UsageError("--registry-ca", f"{req.registry_ca} is not a file", "give the PEM CA certificate of --registry")
    for name in names:
        if name not in repositories:
            raise UsageError("--env-file", f"no ECR repository name for image {name!r}")
        inputs.repository_name(repositories[name], "repository name")
        if not (req.root / IMAGES[name].dockerfile).is_file():
            raise UsageError(IMAGES[name].dockerfile, "not found", f"run from the msk-migrate repository (root {req.root})")

    commit = gitinfo.head_commit(req.root)
    warnings: list[str] = []
    commit_tag = commit[:12]
    dirty = gitinfo.dirty_paths(req.root, sorted({p for n in names for p in IMAGES[n].inputs}))
    if dirty:
        # Unique per build: the repositories' tags are immutable, and this content has no commit.
        stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
        commit_tag = f"{commit_tag}-dirty-{stamp}"
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        warnings.append(f"uncommitted changes go into the images ({shown}); tagging {commit_tag}")
    pinned_kafka = versions.checkout_kafka_version(req.root) if "kafka-connect" in names else None
    if kafka_version and "kafka-connect" not in names:
        warnings.append("--kafka-version only applies to kafka-connect, which is not being built")

    registry = registry_host or region.registry(account)
    build_dir = req.local_dir / "build"
    plans: list[ImagePlan] = []
    for name in names:
        spec = IMAGES[name]
        tag = commit_tag
        build_args: dict[str, str] = {}
        local_bases: list[str] = []
        for base in read_bases(req.root / spec.dockerfile):
            if req.local_bases:
                build_args[base.arg] = base.by_tag
                local_bases.append(base.by_tag)
            elif base.digest is None:
                warnings.append(f"{name}: base image {base.pinned} is pinned by tag only (a tag can move; add @sha256:… in {spec.dockerfile})")
        if spec.kafka_version_arg:
            build_args["KAFKA_VERSION"] = kafka_version or pinned_kafka or ""
            if kafka_version and kafka_version != pinned_kafka:
                tag = f"{commit_tag}-kafka{kafka_version}"  # same commit, different runtime: another image
        plans.append(
            ImagePlan(
                name=name,
                dockerfile=spec.dockerfile,
                repository=repositories[name],
                repository_uri=f"{registry}/{repositories[name]}",
                commit_tag=tag,
                release_tag=release,
                build_args=build_args,
                labels={"org.opencontainers.image.revision": commit, "org.opencontainers.image.version": release or tag},
                metadata_file=build_dir / f"{name}.metadata.json",
                log_file=build_dir / f"{name}.log",
                local_bases=local_bases,
            )
        )
    ecr = Ecr(account, region.name, req.ecr_endpoint_url)
    builder: builders.Builder
    if builder_name == "buildah":
        cert_dir = None
        if req.registry_ca is not None:
            cert_dir = req.local_dir / "images" / "certs.d" / (registry_host or "registry")
        builder = builders.Buildah(Store(req.local_dir / "images"), cert_dir=cert_dir, pull_never=req.local_bases)
    else:
        builder = builders.Docker()
    images_store: Ecr | Registry = Registry(registry_host, req.registry_ca) if registry_host else ecr
    manifest_file = manifest.manifest_path(req.root, account, region.name)
    if registry_host:
        # Never overwrite the manifest the stacks deploy from with one that points at a test registry.
        manifest_file = req.local_dir / "images" / manifest_file.name
    return Plan(
        account=account,
        region=region,
        root=req.root,
        git_commit=commit,
        push=req.push,
        images=plans,
        manifest_path=manifest_file,
        ecr=ecr,
        builder=builder,
        images_store=images_store,
        repositories=dict(repositories),
        warnings=warnings,
    )


def _check_existing_tags(plan: Plan) -> None:
    """Marks images whose commit tag is already pushed for reuse; refuses a release tag that already
    names another image (immutable tags: the push would fail half-way)."""
    store = plan.images_store
    for img in plan.images:
        img.reuse_digest = store.pushed_digest(img.repository, tag=img.commit_tag)
        if not img.release_tag:
            continue
        released = store.pushed_digest(img.repository, tag=img.release_tag)
        if released and released != img.reuse_digest:
            raise UsageError(
                "--tag",
                f"{img.release_tag} already names another image in {img.repository} ({released})",
                "tags are immutable: choose a new release tag",
            )


def _check_local_bases(plan: Plan) -> None:
    """--local-bases: every base must already be in the builder's storage (pulls are disabled)."""
    wanted = sorted({ref for img in plan.images if not img.reuse_digest for ref in img.local_bases})
    missing = plan.builder.missing_images(wanted) if wanted else []
    if missing:
        raise UsageError(
            "--local-bases",
            f"base image {missing[0]} is not in {plan.builder.name}'s local storage and pulls are disabled"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            "build the stand-ins (`make images` does: python -m msk_migrate.imagebuild.standins), or drop --local-bases to pull the pinned bases",
        )


def _login(plan: Plan, console: Console, registry: str) -> None:
    token = plan.ecr.login_token()
    if isinstance(plan.images_store, Registry):
        plan.images_store.check(token.username, token.password)
        if isinstance(plan.builder, builders.Buildah) and plan.builder.cert_dir is not None and plan.images_store.ca_file:
            plan.builder.cert_dir.mkdir(parents=True, exist_ok=True)
            (plan.builder.cert_dir / "ca.crt").write_bytes(plan.images_store.ca_file.read_bytes())
    console.print(f"[bold]{plan.builder.name} login[/] {registry} (token from ecr:GetAuthorizationToken)", soft_wrap=True)
    code, tail = dockercli.run(plan.builder.executable(), plan.builder.login(registry), cwd=plan.root,
                               stdin_text=token.password, env=plan.builder.env())
    if code != 0:
        raise UnreachableError(f"{plan.builder.name} login to {registry} failed: {tail[-1] if tail else f'exit code {code}'}")


def execute(plan: Plan, console: Console) -> dict[str, Any]:
    """Runs the plan. Returns the summary (with digests) plus where the manifest went."""
    try:
        return _execute(plan, console)
    finally:
        plan.builder.cleanup()


def _execute(plan: Plan, console: Console) -> dict[str, Any]:
    builder = plan.builder
    console.print(f"[bold]{builder.name}[/]: checking the builder and {PLATFORM} support", soft_wrap=True)
    builder.preflight()
    exe = builder.executable()

    digests: dict[str, str | None] = {}
    logged_in = False
    if plan.push:
        console.print(f"[bold]ecr[/]: checking repositories and tags in {plan.account} / {plan.region.name}", soft_wrap=True)
        uris = plan.ecr.repository_uris([img.repository for img in plan.images])
        if isinstance(plan.images_store, Registry):
            # The ECR repositories exist; their images go to --registry under the same names.
            _login(plan, console, plan.registry)
            logged_in = True
        else:
            for img in plan.images:
                if uris[img.repository] != img.repository_uri:
                    plan.warnings.append(f"ECR reports {uris[img.repository]} (expected {img.repository_uri}); pushing there")
                    img.repository_uri = uris[img.repository]
        _check_existing_tags(plan)
        for img in plan.images:
            if img.reuse_digest:
                if img.release_tag and plan.images_store.pushed_digest(img.repository, tag=img.release_tag) != img.reuse_digest:
                    plan.images_store.add_tag(img.repository, img.reuse_digest, img.release_tag)
                digests[img.name] = img.reuse_digest
                console.print(f"{img.name}: {img.repository}:{img.commit_tag} is already in {_where(plan)}; reusing {img.reuse_digest}", soft_wrap=True, highlight=False)  # noqa: E501
    _check_local_bases(plan)
    if plan.push and not logged_in and any(not img.reuse_digest for img in plan.images):
        _login(plan, console, plan.images[0].repository_uri.split("/", 1)[0])

    to_build = [img for img in plan.images if not img.reuse_digest]
    action = "build + push" if plan.push else "build (local, no push)"
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=False) as progress:
        tasks = {img.name: progress.add_task(f"{img.name}: waiting", total=1) for img in to_build}
        for img in to_build:
            task = tasks[img.name]
            progress.update(task, description=f"{img.name}: {action}")
            img.metadata_file.parent.mkdir(parents=True, exist_ok=True)
            img.metadata_file.unlink(missing_ok=True)
            for stale in img.metadata_file.parent.glob(img.metadata_file.name.replace(".metadata.json", ".digest*")):
                stale.unlink()

            def on_line(line: str, task: Any = task, name: str = img.name) -> None:
                progress.update(task, description=f"{name}: {line.strip()[:90]}")

            img.log_file.unlink(missing_ok=True)
            for argv in builder.steps(img, plan.push):
                code, tail = dockercli.run(exe, argv, cwd=plan.root, log_file=img.log_file, on_line=on_line, env=builder.env(), append=True)
                if code != 0:
                    progress.update(task, description=f"{img.name}: [red]failed[/]")
                    last = next((line for line in reversed(tail) if line.strip()), f"exit code {code}")
                    done = [n for n, d in digests.items() if d]
                    pushed = f"; in {_where(plan)} already: {', '.join(done)} (no manifest written; a rerun reuses them)" if plan.push and done else ""
                    raise dockercli.BuildError(f"{img.name}: {builder.name} {' '.join(argv[1:3]) if builder.name == 'docker' else _verb(argv)} failed: {last.strip()} (full log: {img.log_file}){pushed}")  # noqa: E501
            digest = builder.digest(img)
            if plan.push:
                digest = _verify_pushed(plan, img, digest)
            digests[img.name] = digest
            progress.update(task, completed=1, description=f"{img.name}: [green]{'pushed' if plan.push else 'built'}[/] {digest or ''}")

    result = plan.summary(digests)
    result["builder"] = builder.name
    result["manifest_path"] = None
    if plan.push:
        data, kept = manifest.merge(
            manifest.read(plan.manifest_path), plan.account, plan.region.name, plan.git_commit, result["images"], plan.repositories
        )
        kept_previous = manifest.write(plan.manifest_path, data)
        result["images"] = data["images"]
        result["manifest_path"] = str(plan.manifest_path)
        result["previous_manifest_path"] = str(kept_previous) if kept_previous else None
        if kept:
            plan.warnings.append(f"kept {', '.join(kept)} from the previous manifest (not rebuilt)")
    return result


def _where(plan: Plan) -> str:
    return "ECR" if isinstance(plan.images_store, Ecr) else f"registry {plan.registry}"


def _verb(argv: list[str]) -> str:
    """``buildah bud`` / ``buildah push`` out of a buildah argv (past its global storage options)."""
    return next((f"buildah {a}" for a in argv[1:] if a in ("bud", "push", "login")), "buildah")


def _verify_pushed(plan: Plan, img: ImagePlan, digest: str | None) -> str:
    """The digest the manifest pins must exist in the registry under this repository."""
    where = _where(plan)
    if digest:
        found = plan.images_store.pushed_digest(img.repository, digest=digest)
        if found != digest:
            raise dockercli.BuildError(f"{img.name}: {plan.builder.name} reported {digest} but {where} {img.repository} has no such image")
        return digest
    found = plan.images_store.pushed_digest(img.repository, tag=img.commit_tag)
    if not found:
        raise dockercli.BuildError(f"{img.name}: pushed, but neither {plan.builder.name} nor {where} ({img.repository}:{img.commit_tag}) gives a digest")
    return found
