#!/usr/bin/env python3
"""``make scan``: the pinned checkov over freshly synthesized stacks, the way a user's CI runs it.

    .venv/bin/python infra/scan.py                 # synth every environment afresh (a temporary cdktf.out), scan it
    .venv/bin/python infra/scan.py --no-synth      # scan what ./cdktf.out (or --outdir) holds

A CI runs ``checkov -d cdktf.out --framework terraform_json``. On the raw synth output that reads
nothing (``required_version`` stops checkov's parser: 0 passed, 0 failed, exit 0) or crashes (the
``removed`` blocks), so this runs the same command over a copy of every ``cdktf.out/stacks/*/cdk.tf.json``
adapted by :func:`mskinfra.checkov.scan_input` (the one place that knows what checkov cannot read; the
checkov test uses it too). checkov ignores the ``"//"`` comments in which the constructs record their
skips, so a failed check is accepted here only when the failing resource carries a skip for exactly
that check (:func:`mskinfra.checkov.skips_of`); a skip whose check passes is reported as stale.

Exit 0: every stack parsed, checks ran, no failure without a skip, no stale skip. Exit 1 otherwise,
with one line per finding. checkov comes from scripts/setup-checkov.sh (``make setup``), pinned in
scripts/checkov.lock; ``MSK_MIGRATE_CHECKOV`` points at another binary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # the mskinfra package beside this file

from mskinfra.checkov import scan_input, skips_of  # noqa: E402

CHECKOV = Path(os.environ.get("MSK_MIGRATE_CHECKOV", REPO_ROOT / ".local" / "checkov-venv" / "bin" / "checkov"))


def checkov_argv(directory: Path) -> list[str]:
    """The user's command (``-d DIR --framework terraform_json``), with a JSON report to judge the skips by."""
    return [str(CHECKOV), "--directory", str(directory), "--framework", "terraform_json", "--output", "json",
            "--compact", "--skip-download", "--soft-fail"]


def stacks_of(outdir: Path) -> dict[str, dict]:
    """``{stack name: synthesized document}`` of every stack under ``outdir/stacks``."""
    return {f.parent.name: json.loads(f.read_text()) for f in sorted((outdir / "stacks").glob("*/cdk.tf.json"))}


def run_checkov(stacks: dict[str, dict], work: Path) -> dict:
    for name, doc in stacks.items():
        (work / name).mkdir(parents=True)
        (work / name / "cdk.tf.json").write_text(json.dumps(scan_input(doc), indent=1))
    proc = subprocess.run(checkov_argv(work), capture_output=True, text=True, timeout=900,
                          env={**os.environ, "BC_SKIP_MAPPING": "TRUE", "LOG_LEVEL": "WARNING"})
    if not proc.stdout.strip():
        raise RuntimeError(f"checkov printed nothing (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    report = json.loads(proc.stdout)
    return report[0] if isinstance(report, list) else report


def _block(doc: dict, address: str) -> dict:
    """The resource block of a checkov address: ``<type>.<name>`` or ``resource.<name>`` (CDKTF names are unique)."""
    rtype, name = address.split(".", 1)
    blocks = doc.get("resource", {})
    if rtype != "resource":
        return blocks.get(rtype, {}).get(name, {})
    return next((b[name] for b in blocks.values() if name in b), {})


def findings(stacks: dict[str, dict], report: dict) -> tuple[list[str], dict[str, dict[str, int]]]:
    """(problems, per-stack counts): parse errors, stacks checkov did not evaluate, failures without a skip,
    stale skips."""
    results = report.get("results", {})
    problems = [f"{p}: checkov could not parse it" for p in results.get("parsing_errors", [])]
    counts = {name: {"passed": 0, "failed": 0, "skipped": 0} for name in stacks}
    failed: set[tuple[str, str, str]] = set()
    for c in results.get("passed_checks", []):
        counts[Path(c["file_path"]).parent.name]["passed"] += 1
    for c in results.get("failed_checks", []):
        stack, address, check = Path(c["file_path"]).parent.name, c["resource"], c["check_id"]
        failed.add((stack, address.split(".", 1)[1], check))
        if check in skips_of(_block(stacks[stack], address)):
            counts[stack]["skipped"] += 1
        else:
            counts[stack]["failed"] += 1
            problems.append(f"{stack}: {address}: {check} failed ({c.get('check_name', '')}); fix it or record a "
                            "skip with its reason beside the resource (mskinfra.checkov.skip)")
    for stack, doc in stacks.items():
        if counts[stack]["passed"] == 0:
            problems.append(f"{stack}: checkov evaluated no check (did it read the stack?)")
        for rtype, blocks in doc.get("resource", {}).items():
            for name, block in blocks.items():
                for check in skips_of(block):
                    if (stack, name, check) not in failed:
                        problems.append(f"{stack}: {rtype}.{name}: skip of {check} is stale (the check passes); remove it")
    return problems, counts


def scan(outdir: Path, synth: bool) -> int:
    if not CHECKOV.is_file():
        print(f"error: checkov not found at {CHECKOV} (fix: run scripts/setup-checkov.sh; make setup does)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="msk-migrate-scan-") as tmp:
        if synth:  # into an empty directory: no stack left over from an earlier synth is scanned
            outdir = Path(tmp) / "cdktf.out"
            code = subprocess.run([sys.executable, str(HERE / "main.py"), "--outdir", str(outdir)]).returncode
            if code != 0:
                return code
        stacks = stacks_of(outdir)
        if not stacks:
            print(f"error: {outdir}/stacks has no cdk.tf.json (fix: run make synth, or drop --no-synth)", file=sys.stderr)
            return 2
        report = run_checkov(stacks, Path(tmp) / "checkov")
    problems, counts = findings(stacks, report)
    for name, c in counts.items():
        print(f"{name:<24} passed {c['passed']:>4}  failed {c['failed']:>3}  skipped (reason beside the resource) {c['skipped']:>3}")
    for line in problems:
        print(f"  {line}")
    print(f"checkov {CHECKOV.parent.parent.name}: {'FAILED' if problems else 'passed'} over {len(stacks)} stack(s)")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="make scan", description=__doc__.splitlines()[0])
    ap.add_argument("--outdir", type=Path, default=REPO_ROOT / "cdktf.out", help="with --no-synth: the synth output to scan (default ./cdktf.out)")
    ap.add_argument("--no-synth", action="store_true", help="scan what --outdir holds instead of synthesizing afresh")
    args = ap.parse_args(argv)
    return scan(args.outdir, not args.no_synth)


if __name__ == "__main__":
    sys.exit(main())
