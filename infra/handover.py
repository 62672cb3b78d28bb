#!/usr/bin/env python3
"""Hand-over gate: plan the destroy of ``migration-<env>`` and prove the kept cluster survives it.

    .venv/bin/python infra/handover.py dev            # plan + check, writes handover.tfplan
    .venv/bin/python infra/handover.py dev --apply    # ... then applies that very plan
    .venv/bin/python infra/handover.py dev --adopt    # first move an older layout's cluster into target-dev

Older layouts kept the cluster in ``migration-<env>``'s state. ``--adopt`` moves every resource that
``target-<env>`` now owns from that state into ``target-<env>``'s (``terraform state pull`` / ``state mv``
/ ``state push``, same addresses, nothing in AWS changes). Without it such a state is refused: a destroy
plan would delete the cluster (``removed`` blocks protect normal plans only, not ``plan -destroy``).

After cutover, the migration tooling (Connect, monitoring, ECR, config bucket) goes and the created MSK
cluster stays in ``target-<env>`` with its KMS key, security group and client rules, broker log group,
configuration, SCRAM association and storage autoscaling. This command synthesizes the environment,
checks that ``target-<env>`` holds the cluster, runs ``terraform plan -destroy`` on ``migration-<env>``
and refuses (exit 1) if that plan would delete, replace or modify anything ``target-<env>`` owns. An
environment that did not create its cluster (``target.existing_cluster_arn``) has nothing to hand over:
one line, exit 2.

Exit codes: 0 safe (and applied with ``--apply``), 1 unsafe or a terraform step failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: Terraform types whose every instance a hand-over must leave alone when target-<env> owns them.
KEPT_TYPES = (
    "aws_msk_cluster",
    "aws_msk_configuration",
    "aws_msk_scram_secret_association",
    "aws_kms_key",
    "aws_kms_alias",
    "aws_security_group",  # only target-<env>'s (by address); migration-<env>'s own groups go
    "aws_cloudwatch_log_group",
    "aws_appautoscaling_target",
)


def parser() -> argparse.ArgumentParser:
    """The command line (a bad one raises UsageError: one line through the error boundary)."""
    from msk_migrate.cliutil import ArgumentParser

    ap = ArgumentParser(prog="infra/handover.py", description=__doc__.splitlines()[0])
    ap.add_argument("env", help="environment name (infra/environments/<env>.yaml)")
    ap.add_argument("--environments", type=Path, default=HERE / "environments", help="directory of <env>.yaml files")
    ap.add_argument("--outdir", type=Path, default=REPO_ROOT / "cdktf.out", help="synth output (default ./cdktf.out)")
    ap.add_argument("--state-dir", type=Path, default=Path(os.environ.get("MSK_MIGRATE_STATE_DIR", REPO_ROOT / ".local" / "terraform")))
    ap.add_argument("--build-dir", type=Path, default=Path(os.environ.get("MSK_MIGRATE_BUILD_DIR", REPO_ROOT / "build")))
    ap.add_argument("--skip-synth", action="store_true", help="use the stacks already in --outdir")
    ap.add_argument("--apply", action="store_true", help="apply the checked destroy plan")
    ap.add_argument("--adopt", action="store_true", help="move an older migration state's cluster resources into target-<env> first")
    ap.add_argument("--no-refresh", action="store_true", help="plan with -refresh=false (tests against a stub API)")
    return ap


def _parse(argv: list[str] | None) -> argparse.Namespace:
    return parser().parse_args(argv)


def _terraform(stack_dir: Path, *args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("terraform")
    if not exe:
        from msk_migrate.errors import UsageError

        raise UsageError("terraform", "not found on PATH", "install Terraform >= 1.11 (1.11.x is tested)")
    return subprocess.run([exe, f"-chdir={stack_dir}", *args], capture_output=True, text=True)


def _state_list(stack_dir: Path) -> list[str] | subprocess.CompletedProcess:
    """Addresses in a stack's state ([] when it has none yet)."""
    listed = _terraform(stack_dir, "state", "list")
    if listed.returncode == 0:
        return listed.stdout.split()
    return [] if "No state file" in listed.stderr else listed


def _fail(step: str, proc: subprocess.CompletedProcess) -> int:
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
    print(f"handover: {step} failed (exit {proc.returncode}):", *tail, sep="\n  ", file=sys.stderr)
    return 1


def unsafe_changes(plan: dict, kept_addresses: set[str]) -> list[str]:
    """Planned changes of a ``migration-<env>`` destroy plan that touch what ``target-<env>`` owns.

    Everything that would be deleted, replaced or updated at a kept address, and any deletion of an MSK
    cluster, configuration or SCRAM association at all (whatever its address). ``forget`` (a
    ``removed`` block with ``destroy = false``) is safe: the object stays in AWS.
    """
    bad = []
    for rc in plan.get("resource_changes", []):
        actions = set(rc["change"]["actions"])
        touches = actions & {"delete", "update", "create"}
        if not touches:
            continue
        base = rc["address"].split("[", 1)[0]
        if base in kept_addresses or (
            "delete" in actions and rc["type"] in ("aws_msk_cluster", "aws_msk_configuration", "aws_msk_scram_secret_association")
        ):
            bad.append(f"{rc['address']} ({'/'.join(sorted(touches))})")
    return bad


def adopt(mig: Path, tgt: Path, kept: set[str], work: Path) -> list[str] | subprocess.CompletedProcess:
    """Move ``kept`` addresses from ``mig``'s state into ``tgt``'s (both already initialized)."""
    listed = _state_list(mig)
    if isinstance(listed, subprocess.CompletedProcess):
        return listed
    moving = [a for a in listed if a.split("[", 1)[0] in kept]
    if not moving:
        return []
    work.mkdir(parents=True, exist_ok=True)
    m_file, t_file = work / "migration.tfstate", work / "target.tfstate"
    for d, f in ((mig, m_file), (tgt, t_file)):
        pulled = _terraform(d, "state", "pull")
        if pulled.returncode:
            return pulled
        if pulled.stdout.strip():
            f.write_text(pulled.stdout)
        else:
            f.unlink(missing_ok=True)
    for address in moving:
        moved = subprocess.run(
            [shutil.which("terraform"), "state", "mv", f"-state={m_file}", f"-state-out={t_file}", address, address],
            cwd=work, capture_output=True, text=True,
        )
        if moved.returncode:
            return moved
    # The target first: the resources are never in neither state.
    for d, f in ((tgt, t_file), (mig, m_file)):
        pushed = _terraform(d, "state", "push", str(f))
        if pushed.returncode:
            return pushed
    return moving


def main(argv: list[str] | None = None) -> int:
    """Behind the one error boundary (cliutil.run_guarded): bad input -> one line on stderr, exit 2."""
    from msk_migrate.cliutil import run_guarded

    return run_guarded(lambda: _handover(_parse(argv)))


def _handover(args: argparse.Namespace) -> int:
    from msk_migrate.config.environment import load_environment
    from msk_migrate.errors import UsageError

    path = args.environments / f"{args.env}.yaml"
    if not path.is_file():
        raise UsageError("env", f"no {path}", f"choose one of {', '.join(sorted(p.stem for p in args.environments.glob('*.yaml')))}")
    cfg = load_environment(path)
    if not cfg.target.create:
        raise UsageError(
            f"{path.name}: target.existing_cluster_arn",
            f"{cfg.stack_name} did not create its cluster, so there is nothing to hand over",
            f"tear the migration down with `npx cdktf destroy {cfg.stack_name}` (the cluster is not in its state)",
        )
    if not args.skip_synth:
        import main as app

        rc = app.main(["--environments", str(args.environments), "--env", cfg.name, "--outdir", str(args.outdir),
                       "--state-dir", str(args.state_dir), "--build-dir", str(args.build_dir)])
        if rc:
            return rc

    stacks = args.outdir / "stacks"
    mig, tgt = stacks / cfg.stack_name, stacks / cfg.target_stack_name
    migration_json = json.loads((mig / "cdk.tf.json").read_text())
    kept = {r["from"] for r in migration_json.get("removed", [])}
    target_json = json.loads((tgt / "cdk.tf.json").read_text())
    kept |= {f"{t}.{n}" for t, rs in target_json.get("resource", {}).items() for n in rs}

    for d in (tgt, mig):
        init = _terraform(d, "init", "-input=false", "-no-color")
        if init.returncode:
            return _fail(f"terraform init of {d.name}", init)
    if args.adopt:
        moved = adopt(mig, tgt, kept, args.outdir / "handover-state")
        if isinstance(moved, subprocess.CompletedProcess):
            return _fail("moving the state into the target stack", moved)
        print(f"adopted into {cfg.target_stack_name}: {len(moved)} resources" + (
            f" (deploy {cfg.target_stack_name} next: `npx cdktf deploy {cfg.target_stack_name}`)" if moved else ""))
    refresh = ["-refresh=false"] if args.no_refresh else []
    plan = _terraform(mig, "plan", "-destroy", "-input=false", "-no-color", *refresh, "-out", "handover.tfplan")
    if plan.returncode:
        return _fail(f"terraform plan -destroy of {cfg.stack_name}", plan)
    shown = _terraform(mig, "show", "-json", "handover.tfplan")
    if shown.returncode:
        return _fail("terraform show", shown)
    changes = json.loads(shown.stdout)
    bad = unsafe_changes(changes, kept)
    deleted = [rc["address"] for rc in changes.get("resource_changes", []) if "delete" in rc["change"]["actions"]]
    forgotten = [rc["address"] for rc in changes.get("resource_changes", []) if "forget" in rc["change"]["actions"]]
    if bad:
        print(f"handover: REFUSED: the destroy plan of {cfg.stack_name} touches what {cfg.target_stack_name} owns:", file=sys.stderr)
        for b in bad:
            print(f"  {b}", file=sys.stderr)
        print(f"fix: move them into {cfg.target_stack_name}'s state first: .venv/bin/python infra/handover.py {cfg.name} --adopt",
              file=sys.stderr)
        return 1
    held = _state_list(tgt)
    if isinstance(held, subprocess.CompletedProcess):
        return _fail(f"terraform state list of {cfg.target_stack_name}", held)
    clusters = [a for a in held if a.startswith("aws_msk_cluster.")]
    if not clusters:
        print(f"handover: {cfg.target_stack_name} holds no MSK cluster: deploy it (`npx cdktf deploy {cfg.target_stack_name}`), "
              f"or move an older state's cluster into it (--adopt), then run this again", file=sys.stderr)
        return 1
    print(f"hand-over of {cfg.name}: {clusters[0]} stays in {cfg.target_stack_name} with {len(held)} resources")
    print(f"  {cfg.stack_name}: {len(deleted)} resources to destroy, {len(forgotten)} forgotten (kept in AWS), "
          f"0 of {len(kept)} kept resources touched")
    if not args.apply:
        print(f"  apply: terraform -chdir={mig} apply handover.tfplan")
        return 0
    applied = subprocess.run([shutil.which("terraform"), f"-chdir={mig}", "apply", "-input=false", "handover.tfplan"])
    return 0 if applied.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
