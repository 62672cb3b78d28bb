"""checkov on every synthesized stack and on every Dockerfile: everything parses, nothing fails.

checkov (pinned in scripts/checkov.lock, its own venv from scripts/setup-checkov.sh) runs once per
session over a copy of the synthesized stacks (see :func:`checkov_input`) and once over images/.
A failed check is accepted only when the failing resource carries a skip for exactly that check with
a reason, written next to the resource in the construct (mskinfra.checkov.skip); Dockerfile skips are
``# checkov:skip=`` comments in the Dockerfile. A skip without a failing check is stale and fails too.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from infra_helpers import ALL_ENVS, REPO, Synth

from mskinfra.checkov import scan_input, skips_of

CHECKOV = Path(os.environ.get("MSK_MIGRATE_CHECKOV", REPO / ".local" / "checkov-venv" / "bin" / "checkov"))
#: A run that evaluates fewer checks than this did not really look at the stacks (checkov reports 0 passed, 0 failed
#: and exits 0 when it finds nothing it can parse).
MIN_PASSED_PER_STACK = 150


def checkov_bin() -> str:
    if not CHECKOV.is_file():
        pytest.fail(f"checkov not found at {CHECKOV}: run scripts/setup-checkov.sh (make setup does)")
    return str(CHECKOV)


def normalized_stack(stack: dict) -> dict:
    """What checkov reads instead of the synthesized JSON (:func:`mskinfra.checkov.scan_input`, the one
    place that adapts it; ``make scan`` uses it too)."""
    return scan_input(stack)


@pytest.fixture(scope="session")
def checkov_report(synth: Synth, tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("checkov")
    for env, stack in synth.stacks.items():
        d = root / env
        d.mkdir()
        (d / "main.tf.json").write_text(json.dumps(normalized_stack(stack), indent=1))
    proc = subprocess.run(
        [checkov_bin(), "--directory", str(root), "--framework", "terraform_json", "--output", "json",
         "--compact", "--skip-download", "--soft-fail"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "BC_SKIP_MAPPING": "TRUE", "LOG_LEVEL": "WARNING"},
    )
    assert proc.stdout.strip(), f"checkov printed nothing (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    report = json.loads(proc.stdout)
    report = report[0] if isinstance(report, list) else report
    return {"report": report, "root": root}


def resource_block(synth: Synth, env: str, address: str) -> dict:
    """The synthesized block of a checkov resource address: ``aws_s3_bucket.<name>`` (graph checks) or
    ``resource.<name>`` (attribute checks of the terraform_json runner; CDKTF names are unique)."""
    rtype, name = address.split(".", 1)
    if rtype != "resource":
        return synth.resources(env, rtype)[name]
    (block,) = [blocks[name] for blocks in synth.stacks[env]["resource"].values() if name in blocks]
    return block


def failed_checks(checkov_report: dict) -> list[tuple[str, str, str]]:
    """``(env, canonical address, check id)`` of every failed check."""
    return [(Path(c["file_path"]).parent.name, c["resource"], c["check_id"]) for c in checkov_report["report"]["results"]["failed_checks"]]


def test_checkov_parses_every_stack_without_an_error(checkov_report: dict) -> None:
    report = checkov_report["report"]
    summary = report["summary"]
    assert summary["parsing_errors"] == 0, report.get("results", {}).get("parsing_errors") or summary
    files = {Path(c["file_path"]).parent.name for c in report["results"]["passed_checks"]}
    assert files == set(ALL_ENVS), f"checkov evaluated only {sorted(files)}"
    per_stack = {env: 0 for env in ALL_ENVS}
    for c in report["results"]["passed_checks"]:
        per_stack[Path(c["file_path"]).parent.name] += 1
    assert min(per_stack.values()) >= MIN_PASSED_PER_STACK, per_stack


def test_checkov_has_no_failed_check_without_a_justified_skip_beside_the_resource(synth: Synth, checkov_report: dict) -> None:
    failures: dict[tuple[str, str], set[str]] = {}
    for env, address, check in failed_checks(checkov_report):
        failures.setdefault((env, address), set()).add(check)
    unexplained = []
    for (env, address), checks in sorted(failures.items()):
        skips = skips_of(resource_block(synth, env, address))
        unexplained += [f"{env}: {address}: {check}" for check in sorted(checks - set(skips))]
    assert not unexplained, "checkov failures without a skip in the construct:\n  " + "\n  ".join(unexplained)


def test_every_skip_still_matches_a_check_that_fails_without_it(synth: Synth, checkov_report: dict) -> None:
    failed = {(env, address.split(".", 1)[1], check) for env, address, check in failed_checks(checkov_report)}
    stale = []
    for env in ALL_ENVS:
        for rtype, blocks in synth.stacks[env].get("resource", {}).items():
            for name, block in blocks.items():
                for check, reason in skips_of(block).items():
                    assert len(reason) >= 20, (env, rtype, name, check)
                    if (env, name, check) not in failed:
                        stale.append(f"{env}: {rtype}.{name}: {check}")
    assert not stale, "skips whose check passes (remove them):\n  " + "\n  ".join(stale)


def test_the_normalized_copy_differs_only_where_checkov_cannot_parse(synth: Synth) -> None:
    stack = synth.stacks["dev"]
    copy_ = normalized_stack(stack)
    assert isinstance(stack["terraform"]["required_version"], str) and "required_version" not in copy_["terraform"]
    assert "ephemeral" in stack and "ephemeral" not in copy_
    assert copy_["resource"] == stack["resource"] and copy_["data"] == stack["data"]


def test_checkov_finds_nothing_in_the_dockerfiles() -> None:
    dockerfiles = sorted((REPO / "images").glob("*/Dockerfile"))
    assert len(dockerfiles) >= 3
    proc = subprocess.run(
        [checkov_bin(), *[a for f in dockerfiles for a in ("--file", str(f))], "--framework", "dockerfile",
         "--output", "json", "--compact", "--skip-download", "--soft-fail"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "BC_SKIP_MAPPING": "TRUE", "LOG_LEVEL": "WARNING"},
    )
    report = json.loads(proc.stdout)
    report = report[0] if isinstance(report, list) else report
    summary = report["summary"]
    assert summary["parsing_errors"] == 0 and summary["passed"] > 0, summary
    failed = [f"{Path(c['file_path']).parent.name}: {c['check_id']} {c['check_name']}" for c in report["results"]["failed_checks"]]
    assert not failed, "\n".join(failed)
    skipped = report["results"].get("skipped_checks", [])
    # per Dockerfile: CKV_DOCKER_2 (ECS health check instead) and CKV_DOCKER_7 (FROM is a digest-pinned ARG)
    assert summary["skipped"] == 2 * len(dockerfiles), "two justified skips per Dockerfile, nothing else"
    for c in skipped:
        reason = (c.get("check_result") or {}).get("suppress_comment") or ""
        assert len(reason.strip()) >= 20, f"{c['file_path']}: {c['check_id']} skipped without a reason"
