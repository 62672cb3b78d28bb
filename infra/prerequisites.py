#!/usr/bin/env python3
"""Check that what ``<env>.yaml`` names exists before the first deploy (describe calls only).

    .venv/bin/python infra/prerequisites.py dev        # AWS credentials of the environment's account

Checks the VPC, its subnets, the operator certificate (ISSUED), an existing hosted zone (private, of the
VPC) and an existing MSK cluster with its broker security groups (:mod:`mskinfra.prerequisites`).
A missing one prints one line naming the field and the fix, exit code 2, and nothing is created.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def parser() -> argparse.ArgumentParser:
    """The command line (a bad one raises UsageError: one line through the error boundary)."""
    from msk_migrate.cliutil import ArgumentParser

    ap = ArgumentParser(prog="infra/prerequisites.py", description=__doc__.splitlines()[0])
    ap.add_argument("env", help="environment name (<env>.yaml)")
    ap.add_argument("--environments", type=Path, default=HERE / "environments", help="directory of <env>.yaml files")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Behind the one error boundary (cliutil.run_guarded): bad input or a missing prerequisite -> one line, exit 2."""
    from msk_migrate.cliutil import run_guarded

    def run() -> int:
        import boto3

        from main import environment_files
        from msk_migrate.config.environment import load_environment
        from msk_migrate.config.identifiers import check_env_name
        from msk_migrate.errors import UsageError
        from mskinfra.prerequisites import check_prerequisites

        args = parser().parse_args(argv)
        try:
            check_env_name(args.env)
        except ValueError as exc:
            raise UsageError("env", str(exc), "give the name of an <env>.yaml") from None
        (path,) = environment_files([args.environments], [args.env])
        cfg = load_environment(path)
        session = boto3.session.Session(region_name=cfg.region)
        for line in check_prerequisites(cfg, path.name, session.client):
            print(f"ok: {line}")
        print(f"{cfg.name}: every prerequisite exists in account {cfg.account_id}, {cfg.region}")
        return 0

    return run_guarded(run)


if __name__ == "__main__":
    sys.exit(main())
