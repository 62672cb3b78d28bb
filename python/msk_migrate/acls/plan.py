"""``acls plan``: the source's ACLs and SCRAM users -> one MSK IAM policy per principal, plus what did not map.

Input: the ACL bindings (DescribeAcls, every resource and pattern type) and the SCRAM users
(DescribeUserScramCredentials) of the source. Output (:class:`AclPlan`): per Kafka principal an IAM policy
document granting on the target cluster's ARNs what its ALLOW ACLs granted (literal names -> exact ARNs,
prefixed patterns -> ``name*``, the literal ``*`` -> every resource of that type), and a list of findings
for everything the IAM model does not carry one to one, never dropped silently:

- ``deny``: a DENY ACL. Translated to a ``Deny`` statement of the ACL's own actions (an explicit deny wins in
  IAM as in Kafka) and reported for review: Kafka's DENY of an implied operation is narrower than IAM's.
- ``all-principals``: an ACL for ``User:*``: IAM policies attach to identities; there is no "every caller".
  Not granted; attach its statements to each application's role by hand if that is what you want.
- ``host``: an ACL restricted to a client host. IAM for MSK has no client-address condition: not granted
  (granting it everywhere would widen it).
- ``not-expressible``: an operation with no IAM action (CLUSTER_ACTION, delegation tokens, USER resources),
  or a literal group/transactional id containing ``*`` or ``?`` (IAM would read them as wildcards).
- ``needs-group``: a principal reads topics but holds no group READ: IAM's ReadData requires AlterGroup.
- ``no-acls``: a SCRAM user with no ACL: gets no policy (on MSK IAM it can do nothing).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from . import mapping
from .mapping import ARN_TYPE, NOT_EXPRESSIBLE, ON_OTHER_RESOURCE, PREFIX, actions_for, closure

#: arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID
CLUSTER_ARN = re.compile(r"arn:(aws[a-z-]*):kafka:([a-z0-9-]+):(\d{12}):cluster/([A-Za-z0-9-]+)/([A-Za-z0-9-]+)")


@dataclass(frozen=True)
class Acl:
    """One ACL binding, with Kafka's names (``ResourceType``/``AclOperation``/... enum names)."""

    principal: str
    resource_type: str
    name: str
    pattern: str  #: LITERAL or PREFIXED
    operation: str
    permission: str  #: ALLOW or DENY
    host: str = "*"

    def describe(self) -> str:
        return (f"{self.permission} {self.principal} {self.operation} on {self.resource_type} "
                f"{self.pattern.lower()} {self.name!r}" + (f" from host {self.host}" if self.host != "*" else ""))

    def to_dict(self) -> dict[str, str]:
        return {"principal": self.principal, "resource_type": self.resource_type, "name": self.name,
                "pattern": self.pattern, "operation": self.operation, "permission": self.permission, "host": self.host}


@dataclass
class Finding:
    kind: str
    detail: str
    acl: Acl | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "detail": self.detail, "acl": self.acl.to_dict() if self.acl else None}


@dataclass
class PrincipalPolicy:
    principal: str
    acls: int
    document: dict[str, Any]

    @property
    def name(self) -> str:
        """A policy/Terraform name for the principal (User:orders-app -> msk-orders-app)."""
        return "msk-" + re.sub(r"[^A-Za-z0-9_-]", "-", self.principal.split(":", 1)[-1])[:100]

    def to_dict(self) -> dict[str, Any]:
        return {"principal": self.principal, "policy_name": self.name, "acls": self.acls, "policy": self.document}


@dataclass
class AclPlan:
    cluster_arn: str
    policies: list[PrincipalPolicy] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    acl_count: int = 0

    #: findings that mean an ACL was not carried over as it was (review before cutover)
    REVIEW = ("deny", "all-principals", "host", "not-expressible", "needs-group")

    @property
    def complete(self) -> bool:
        """Every ACL carried over one to one (findings of kind ``no-acls`` are informational)."""
        return self.acl_count > 0 and not any(f.kind in self.REVIEW for f in self.findings)


class Arns:
    """ARNs of the target cluster's resources (AWS: cluster/NAME/UUID, topic/NAME/UUID/TOPIC, ...)."""

    def __init__(self, cluster_arn: str) -> None:
        m = CLUSTER_ARN.fullmatch(cluster_arn)
        if not m:
            raise ValueError(cluster_arn)
        partition, region, account, name, uuid = m.groups()
        self.cluster = cluster_arn
        self._base = f"arn:{partition}:kafka:{region}:{account}"
        self._path = f"{name}/{uuid}"

    def of(self, arn_type: str, name: str, pattern: str) -> str:
        if arn_type == "cluster":
            return self.cluster
        if pattern == "PREFIXED":
            name = f"{name}*"
        return f"{self._base}:{arn_type}/{self._path}/{name}"

    def every(self, arn_type: str) -> str:
        return f"{self._base}:{arn_type}/{self._path}/*"


def _not_expressible(acl: Acl) -> str | None:
    if acl.resource_type in ("DELEGATION_TOKEN", "USER"):
        return NOT_EXPRESSIBLE[(acl.resource_type, "*")]
    if (acl.resource_type, acl.operation) in NOT_EXPRESSIBLE:
        return NOT_EXPRESSIBLE[(acl.resource_type, acl.operation)]
    if acl.resource_type not in ARN_TYPE or actions_for(acl.resource_type, acl.operation) is None:
        return f"no MSK IAM action for {acl.operation} on {acl.resource_type}"
    if acl.pattern not in ("LITERAL", "PREFIXED"):
        return f"pattern type {acl.pattern} is not a stored ACL pattern"
    if acl.resource_type in ("GROUP", "TRANSACTIONAL_ID") and acl.name != "*" and any(c in acl.name for c in "*?"):
        return f"the name {acl.name!r} contains '*' or '?', which IAM reads as wildcards (it would grant more)"
    return None


def _grants(acl: Acl, arns: Arns) -> list[tuple[str, str]]:
    """(action, resource ARN) pairs of one expressible ACL, without IAM's required actions."""
    out: list[tuple[str, str]] = []
    arn_type = ARN_TYPE[acl.resource_type]
    resource = arns.every(arn_type) if acl.name == "*" and acl.pattern == "LITERAL" and arn_type != "cluster" \
        else arns.of(arn_type, acl.name, acl.pattern)
    for action in actions_for(acl.resource_type, acl.operation) or ():
        out.append((action, resource))
    if (acl.resource_type, acl.operation) in ON_OTHER_RESOURCE:
        other, extra = ON_OTHER_RESOURCE[(acl.resource_type, acl.operation)]
        out += [(a, arns.every(other)) for a in extra]
    return out


def _statements(grants: set[tuple[str, str]], effect: str, arns: Arns) -> list[dict[str, Any]]:
    """One statement per resource type, actions grouped by their resource set (stable order)."""
    by_action: dict[str, set[str]] = {}
    for action, resource in grants:
        by_action.setdefault(action, set()).add(resource)
    if effect == "Allow":
        # What AWS requires beside each action, on the same kind of resource (Connect on the cluster).
        for action in closure(set(by_action)) - set(by_action):
            kind = mapping.RESOURCE_OF[action]
            related = {r for a, rs in by_action.items() if mapping.RESOURCE_OF[a] == kind for r in rs}
            by_action[action] = related or {arns.cluster if kind == "cluster" else arns.every(kind)}
    groups: dict[tuple[str, ...], list[str]] = {}
    for action, resources in by_action.items():
        groups.setdefault(tuple(sorted(resources)), []).append(PREFIX + action)
    statements = []
    for i, (arns_of, actions) in enumerate(sorted(groups.items(), key=lambda kv: (sorted(kv[1]), kv[0]))):
        statements.append({"Sid": f"{effect}{i + 1}", "Effect": effect, "Action": sorted(actions),
                           "Resource": list(arns_of) if len(arns_of) > 1 else arns_of[0]})
    return statements


def build_plan(acls: list[Acl], scram_users: list[str], cluster_arn: str) -> AclPlan:
    """The plan for ``acls`` (every binding of the source) and the source's SCRAM users."""
    arns = Arns(cluster_arn)
    plan = AclPlan(cluster_arn=cluster_arn, acl_count=len(acls))
    allow: dict[str, set[tuple[str, str]]] = {}
    deny: dict[str, set[tuple[str, str]]] = {}
    counted: dict[str, int] = {}
    for acl in sorted(acls, key=lambda a: (a.principal, a.resource_type, a.name, a.operation, a.permission)):
        why = _not_expressible(acl)
        if why:
            plan.findings.append(Finding("not-expressible", f"{acl.describe()}: {why}; not granted", acl))
            continue
        if acl.principal in ("User:*", "*"):
            plan.findings.append(Finding("all-principals", f"{acl.describe()}: IAM policies attach to identities, "
                                         "there is no 'every principal'; not granted (attach it to each role that needs it)", acl))
            continue
        if acl.host != "*":
            plan.findings.append(Finding("host", f"{acl.describe()}: MSK IAM cannot restrict by client host; not granted "
                                         "(granting it from everywhere would widen it)", acl))
            continue
        target = deny if acl.permission == "DENY" else allow
        target.setdefault(acl.principal, set()).update(_grants(acl, arns))
        counted[acl.principal] = counted.get(acl.principal, 0) + 1
        if acl.permission == "DENY":
            plan.findings.append(Finding("deny", f"{acl.describe()}: written as an IAM Deny of the same actions; "
                                         "review (a Kafka DENY of an implied operation is narrower)", acl))
    for principal in sorted(set(allow) | set(deny)):
        statements = _statements(allow.get(principal, set()), "Allow", arns) + _statements(deny.get(principal, set()), "Deny", arns)
        doc = {"Version": "2012-10-17", "Statement": statements}
        plan.policies.append(PrincipalPolicy(principal, counted[principal], doc))
        actions = {a for a, _ in allow.get(principal, set())}
        if "ReadData" in actions and "AlterGroup" not in actions:
            plan.findings.append(Finding("needs-group", f"{principal} reads topics but has no group READ ACL: MSK IAM's "
                                         "ReadData requires kafka-cluster:AlterGroup on the consumer group; add the group"))
    with_acls = {a.principal for a in acls}
    for user in sorted(scram_users):
        if f"User:{user}" not in with_acls:
            plan.findings.append(Finding("no-acls", f"SCRAM user {user!r} has no ACL on the source: it gets no IAM policy"))
    return plan


def terraform_json(plan: AclPlan) -> dict[str, Any]:
    """Terraform JSON: one ``aws_iam_policy`` per principal (attach each to the application's role)."""
    resources = {
        p.name.replace("-", "_"): {
            "name": p.name,
            "description": f"MSK IAM equivalent of the Kafka ACLs of {p.principal} (msk-migrate acls plan)",
            "policy": json.dumps(p.document, sort_keys=True),
        }
        for p in plan.policies
    }
    return {"resource": {"aws_iam_policy": resources}} if resources else {}
