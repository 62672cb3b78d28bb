"""``msk-migrate acls plan``: the source's ACLs as MSK IAM policies, per principal."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..cliutil import human, output_option
from ..errors import UsageError
from ..outcome import Outcome, View, col
from ..render import render
from .flow import announce, flow_from_kwargs, flow_options, talked_to
from .options import MSK_CLUSTER_ARN, WRITE_DIR


@click.group("acls")
def acls() -> None:
    """Move applications from SCRAM users and Kafka ACLs to MSK IAM."""


def _cluster_arn(given: str | None, kw: dict) -> str:
    """``--cluster-arn`` (checked while parsing), else the environment's ``target.existing_cluster_arn``."""
    from ..acls.plan import CLUSTER_ARN

    arn = given
    if not arn and kw.get("env"):
        from ..config.environment import load_environment
        from ..config.environment_files import environment_path

        arn = load_environment(environment_path(kw["env"])).target.existing_cluster_arn
    if not arn:
        raise UsageError("--cluster-arn", "the target MSK cluster's ARN is needed for the policies' resources",
                         "pass --cluster-arn (stack output target_cluster_arn)")
    if not CLUSTER_ARN.fullmatch(arn):
        raise UsageError("--cluster-arn", f"{arn!r} is not an MSK cluster ARN",
                         "pass arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID (stack output target_cluster_arn)")
    return arn


def _actions(p) -> str:
    return ", ".join(a.removeprefix("kafka-cluster:") for a in sorted({a for s in p.document["Statement"] for a in s["Action"]}))


@acls.command("plan")
@flow_options
@click.option("--cluster-arn", type=MSK_CLUSTER_ARN, help="Target MSK cluster ARN (stack output target_cluster_arn; default: "
              "the environment's target.existing_cluster_arn).")
@click.option("--out-dir", type=WRITE_DIR,
              help="Write policies/<principal>.json, acls.tf.json (aws_iam_policy per principal) and plan.json here.")
@click.option("--strict", is_flag=True, help="Exit 2, writing nothing, when an ACL cannot be carried over one to one.")
@output_option
def plan_cmd(cluster_arn: str | None, out_dir: Path | None, strict: bool, output: str, **kw) -> None:
    """Read the source's ACLs and SCRAM users; write per principal the MSK IAM policy granting the same, the
    ACLs that did not map (DENY, User:*, host-restricted, no IAM action) and the client settings per library.

    Exit 0: every ACL carried over; 1: the plan has findings to review; 2: bad input, unreachable, or --strict
    with an ACL the IAM model cannot express."""
    from ..access.admin import AdminSession
    from ..acls.clients import client_settings
    from ..acls.plan import CLUSTER_ARN, build_plan, terraform_json
    from ..acls.source import read_acls, read_scram_users

    arn = _cluster_arn(cluster_arn, kw)
    flow = flow_from_kwargs(kw)
    announce(flow, output)
    with human(output).status(f"reading ACLs and SCRAM users of the source {flow.source.bootstrap_servers}"):
        session = AdminSession.for_endpoint("source", flow.source)
        acl_list = read_acls(session)
        users = read_scram_users(session)
    plan = build_plan(acl_list, users or [], arn)
    if not acl_list:
        raise UsageError("source", f"the source ({flow.source.bootstrap_servers}) returned no ACL: nothing to plan from",
                         "check that the source user may DESCRIBE the cluster's ACLs")
    review = [f for f in plan.findings if f.kind in plan.REVIEW]
    if strict and review:
        raise UsageError("--strict", f"{len(review)} ACL(s) not carried over one to one, first: {review[0].detail}",
                         "review them in the plan without --strict")
    region = CLUSTER_ARN.fullmatch(arn).group(2)  # type: ignore[union-attr]
    o = Outcome(
        "acls plan", "complete" if plan.complete else "review", 0 if plan.complete else 1,
        rows=[p.to_dict() for p in plan.policies], talked_to=talked_to(flow),
        extra={"cluster_arn": arn, "acls": plan.acl_count, "scram_users": users,
               "findings": [f.to_dict() for f in plan.findings], "client_settings": client_settings(region),
               "ok": plan.complete, "exit_meaning": "0 every ACL carried over; 1 findings to review; 2 bad input or unreachable"},
        views=[View(f"IAM policies for {arn}", [col("principal", lambda r: r.principal), col("ACLs", lambda r: r.acls, numeric=True),
                                                 col("actions", _actions)], plan.policies)],
    )
    if plan.findings:
        o.views.append(View("not carried over one to one (review)", [col("kind", "kind"), col("detail", "detail")],
                            [f.to_dict() for f in plan.findings]))
    if out_dir:
        (out_dir / "policies").mkdir(parents=True, exist_ok=True)
        for p in plan.policies:
            (out_dir / "policies" / f"{p.name}.json").write_text(json.dumps(p.document, indent=2, sort_keys=True) + "\n")
        (out_dir / "acls.tf.json").write_text(json.dumps(terraform_json(plan), indent=2, sort_keys=True) + "\n")
        (out_dir / "plan.json").write_text(json.dumps(o.document(), indent=2, sort_keys=True) + "\n")
        o.notes.append(f"written: {out_dir}/policies/*.json, {out_dir}/acls.tf.json, {out_dir}/plan.json")
    o.notes.append("client settings per library: --output json (client_settings) or docs/acls.md")
    render(o, output)
