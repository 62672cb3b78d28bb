#!/usr/bin/env python3
"""CDKTF app: per ``infra/environments/<env>.yaml`` the stack ``migration-<env>``, plus ``target-<env>``
(the created MSK cluster and what it needs to keep serving) when the environment creates its cluster.

    .venv/bin/python infra/main.py                      # synth every environment into ./cdktf.out
    .venv/bin/python infra/main.py --env dev            # only target-dev + migration-dev
    npx cdktf deploy target-dev --skip-provider-lock    # the cdktf CLI runs this file (cdktf.json "app")
    npx cdktf deploy migration-dev --skip-provider-lock
    terraform -chdir=cdktf.out/stacks/target-dev init && ... plan/apply   # without the cdktf CLI

Each synthesized stack directory gets a copy of the committed provider lock file, infra/.terraform.lock.hcl
(hashicorp/aws 5.100.0 and its checksums): ``terraform init`` there installs only a provider whose checksum
the lock records and fails otherwise (docs/infra.md, "The provider lock file").

Every environment file is validated before anything is synthesized (and before the slow jsii runtime
starts); a bad file prints one line ``error: <file>: <field>: <problem> (fix: ...)`` and exits 2.
After cutover, ``infra/handover.py`` destroys ``migration-<env>`` and proves the cluster stays.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
#: Terraform's dependency lock file for the stacks' provider, committed; copied next to every synthesized stack.
PROVIDER_LOCK = HERE / ".terraform.lock.hcl"
LOCK_FILE_NAME = ".terraform.lock.hcl"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # the mskinfra package beside this file


def parser() -> argparse.ArgumentParser:
    """The command line (a bad one raises UsageError: one line through the error boundary)."""
    from msk_migrate.cliutil import ArgumentParser

    ap = ArgumentParser(prog="infra/main.py", description=__doc__.splitlines()[0])
    ap.add_argument(
        "--environments",
        type=Path,
        action="append",
        help="directory of <env>.yaml files, repeatable (env MSK_MIGRATE_ENVIRONMENTS=dir[:dir]; "
        "default infra/environments)",
    )
    ap.add_argument(
        "--env",
        action="append",
        default=[e for e in os.environ.get("MSK_MIGRATE_ENV", "").split(",") if e],
        help="synthesize only this environment (repeatable; env MSK_MIGRATE_ENV=dev,prod)",
    )
    ap.add_argument(
        "--outdir",
        type=Path,
        default=Path(os.environ.get("CDKTF_OUTDIR") or REPO_ROOT / "cdktf.out"),
        help="synth output (the cdktf CLI sets CDKTF_OUTDIR; default ./cdktf.out)",
    )
    ap.add_argument(
        "--build-dir",
        type=Path,
        default=Path(os.environ.get("MSK_MIGRATE_BUILD_DIR", REPO_ROOT / "build")),
        help="where build_images.py wrote manifest-<account>-<region>.json (env MSK_MIGRATE_BUILD_DIR)",
    )
    ap.add_argument(
        "--state-dir",
        type=Path,
        default=Path(os.environ.get("MSK_MIGRATE_STATE_DIR", REPO_ROOT / ".local" / "terraform")),
        help="local state directory for environments without a backend (default .local/terraform)",
    )
    ap.add_argument("--check", action="store_true", help="validate the environment files and exit (no synth)")
    return ap


def _parse(argv: list[str] | None) -> argparse.Namespace:
    args = parser().parse_args(argv)
    if not args.environments:
        env_dirs = os.environ.get("MSK_MIGRATE_ENVIRONMENTS")
        args.environments = [Path(d) for d in env_dirs.split(os.pathsep) if d] if env_dirs else [HERE / "environments"]
    return args


def environment_files(directories: list[Path], only: list[str]) -> list[Path]:
    from msk_migrate.errors import UsageError

    files: list[Path] = []
    for directory in directories:
        if not directory.is_dir():
            raise UsageError(str(directory), "not a directory", "pass --environments DIR with <env>.yaml files")
        files += sorted(directory.glob("*.yaml"))
    where = ", ".join(map(str, directories))
    if only:
        by_name = {f.stem: f for f in files}
        missing = [e for e in only if e not in by_name]
        if missing:
            raise UsageError("--env", f"no {missing[0]}.yaml in {where}", f"choose one of {', '.join(sorted(by_name)) or '(none)'}")
        files = [by_name[e] for e in dict.fromkeys(only)]
    if not files:
        raise UsageError(where, "no <env>.yaml files", "add one (see infra/environments/dev.yaml)")
    return files


def main(argv: list[str] | None = None) -> int:
    """Behind the one error boundary (cliutil.run_guarded): bad input -> one line on stderr, exit 2."""
    from msk_migrate.cliutil import run_guarded

    return run_guarded(lambda: _synth(_parse(argv)))


def _synth(args: argparse.Namespace) -> int:
    from msk_migrate.config.environment import load_environments

    files = environment_files(args.environments, args.env)
    envs = load_environments(files)
    from mskinfra.checks import check_shared_target
    from mskinfra.images import choose_images

    for path, env in zip(files, envs, strict=False):
        check_shared_target(env, path)

    images = {env.name: choose_images(env, args.build_dir) for env in envs}
    if args.check:
        for env in envs:
            print(f"{env.stack_name}: ok")
        return 0

    if not PROVIDER_LOCK.is_file():
        from msk_migrate.errors import UsageError

        raise UsageError(str(PROVIDER_LOCK), "missing (the committed provider lock file)",
                         "restore it from git: `git checkout -- infra/.terraform.lock.hcl`")
    from cdktf import App  # the jsii runtime starts here (slow)

    from mskinfra.stack import MigrationStack
    from mskinfra.target_stack import TargetStack

    if any(env.backend is None for env in envs):
        args.state_dir.mkdir(parents=True, exist_ok=True)
    app = App(outdir=str(args.outdir))
    stack_names: list[str] = []
    for env in envs:
        kept: list[str] = []
        if env.target.create:
            # Deployed before migration-<env> (its outputs are read there). No cdktf stack dependency:
            # `cdktf deploy migration-<env>` must work alone once the target exists.
            kept = TargetStack(app, env, outdir=args.outdir, local_state_dir=args.state_dir).resource_addresses()
            stack_names.append(str(env.target_stack_name))
        MigrationStack(
            app, env, images=images[env.name], outdir=args.outdir, local_state_dir=args.state_dir, kept_addresses=kept
        )
        stack_names.append(env.stack_name)
    app.synth()
    install_provider_lock(args.outdir, stack_names)
    return 0


def install_provider_lock(outdir: Path, stack_names: list[str]) -> list[Path]:
    """Copy the committed lock file next to each synthesized stack (``<outdir>/stacks/<stack>/``), replacing
    whatever an earlier ``init`` left there: every ``terraform init`` of a stack then checks the provider
    against the committed checksums, and never picks another version (no ``-upgrade`` anywhere)."""
    written = []
    for name in stack_names:
        stack_dir = outdir / "stacks" / name
        if not (stack_dir / "cdk.tf.json").is_file():
            raise RuntimeError(f"{stack_dir}: no cdk.tf.json after synth")
        shutil.copyfile(PROVIDER_LOCK, stack_dir / LOCK_FILE_NAME)
        written.append(stack_dir / LOCK_FILE_NAME)
    return written


if __name__ == "__main__":
    sys.exit(main())
