"""checkov skips, written next to the resource they concern.

checkov reads ``#checkov:skip=`` comments in HCL, but the CDKTF output is JSON, which has no comments,
and checkov ignores the ``"//"`` key Terraform offers JSON authors for comments (terraform-cdk#3609).
So a skip is recorded on the resource itself, as a Terraform JSON comment property::

    "aws_lb": {"operator_alb": {"//": {"checkov:skip=CKV_AWS_91": "<reason>", ...}, ...}}

Terraform ignores ``"//"`` in any block. The checkov test (tests/infra/test_infra_checkov.py) reads
these lines and accepts a failed check only when the failing resource carries a skip for that check
with a reason; a skip whose check no longer fails is an error too, so skips cannot outlive their cause.
"""

from __future__ import annotations

import copy
import re

from cdktf import TerraformElement

_KEY = re.compile(r"^checkov:skip=(CKV2?_[A-Z0-9]+_\d+)$")


def skip(resource: TerraformElement, check_id: str, reason: str) -> None:
    """Record that ``check_id`` does not apply to ``resource``, and why (one sentence)."""
    reason = " ".join(reason.split())
    if not _KEY.match(f"checkov:skip={check_id}") or len(reason) < 20:
        raise ValueError(f"checkov skip {check_id!r} needs a check id and a real reason, got {reason!r}")
    # One key per check under "//" (cdktf merges overrides of the same path, so each skip gets its own).
    resource.add_override(f"//.checkov:skip={check_id}", reason)


def skips_of(block: dict) -> dict[str, str]:
    """``{check id: reason}`` recorded on one synthesized resource block."""
    comment = block.get("//")
    if not isinstance(comment, dict):
        return {}
    out = {}
    for key, reason in comment.items():
        m = _KEY.match(key)
        if m and isinstance(reason, str):
            out[m.group(1)] = reason
    return out


def scan_input(stack: dict) -> dict:
    """What checkov reads instead of a synthesized stack (``cdk.tf.json``), which Terraform reads unchanged.

    The one place that adapts the synthesized JSON to checkov's Terraform JSON parser (``make scan``,
    infra/scan.py, and tests/infra/test_infra_checkov.py both use it). That parser expects every
    ``terraform`` block attribute to be an object and stops at ``"required_version": ">= 1.5.0"`` (a
    string, as Terraform defines it) with a parse error, then reports 0 passed / 0 failed and exit 0; it
    crashes on the ``removed`` blocks (a list: ``'list' object has no attribute 'items'``). The copy drops
    ``required_version`` (no check reads it), the ``ephemeral`` block (checkov has no notion of ephemeral
    resources; they create nothing) and the ``removed { destroy = false }`` blocks (no resource, nothing
    to check). Everything else, including the ``"//"`` skip comments, is passed on unchanged.
    """
    out = copy.deepcopy(stack)
    out.get("terraform", {}).pop("required_version", None)
    out.pop("ephemeral", None)
    out.pop("removed", None)
    return out

