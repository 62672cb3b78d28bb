"""Topic/group regexes -> IAM resource-name patterns: never narrower than what MM2 can match."""

from __future__ import annotations

import re

import pytest

from mskinfra.scope import name_pattern_list, name_patterns


@pytest.mark.parametrize(
    "regex,patterns",
    [
        ("orders", ["orders"]),
        (r"payments\.v1", ["payments.v1"]),
        (r"orders\..*", ["orders.*"]),
        ("team-a-[0-9]+", ["team-a-*"]),
        (r"(orders|payments)\..*", ["orders.*", "payments.*"]),
        ("orders|pay.*", ["orders", "pay*"]),
        ("^orders$", ["orders"]),
        ("ab?c", ["a*"]),  # the optional b is not part of the prefix
        ("x.y", ["x*"]),  # an unescaped dot matches anything
        ("[.]internal", [".internal"]),
        (".*", ["*"]),
        ("[a-z]+", ["*"]),
        ("(?i)orders", ["*"]),  # case-insensitive: no literal prefix
        (r"\Qorders\E", ["*"]),  # Java-only syntax: widest scope inside the cluster
    ],
)
def test_regex_becomes_the_narrowest_covering_iam_pattern(regex: str, patterns: list[str]) -> None:
    assert sorted(name_pattern_list(regex)) == sorted(patterns)


@pytest.mark.parametrize("regex", [r"orders\..*", "(orders|payments)\\..*", "ab?c", "team-a-[0-9]+", "x.y", "orders|pay.*"])
def test_patterns_cover_every_name_the_regex_matches(regex: str) -> None:
    names = ["orders.eu", "orders.", "payments.x", "ac", "abc", "team-a-12", "x-y", "xzy", "orders", "payments", "pay"]
    patterns = name_pattern_list(regex)
    as_regex = [re.compile(re.escape(p).replace(r"\*", ".*").replace(r"\?", ".")) for p in patterns]
    for name in names:
        if re.fullmatch(regex, name):
            assert any(r.fullmatch(name) for r in as_regex), (regex, name, patterns)


def test_union_collapses_to_star_and_drops_covered_names() -> None:
    assert name_patterns([r"orders\..*", "customers"], ["orders.eu", "mm2-connect-configs"]) == [
        "customers",
        "mm2-connect-configs",
        "orders.*",
    ]
    assert name_patterns([".*"], ["mm2-connect-configs"]) == ["*"]


PASS_OK = {"Sid": "PassOperatorRoles", "Effect": "Allow", "Action": "iam:PassRole",
           "Resource": ["arn:aws:iam::123456789012:role/p-operator-task", "arn:aws:iam::123456789012:role/p-operator-execution"],
           "Condition": {"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}}}


@pytest.mark.parametrize(("statement", "named"), [
    ({**PASS_OK, "Resource": "*"}, "iam:PassRole on '*'"),
    ({**PASS_OK, "Resource": ["arn:aws:iam::123456789012:role/p-*"]}, "iam:PassRole on '*'"),
    ({**PASS_OK, "Action": ["iam:*"], "Resource": "*"}, "iam:PassRole on '*'"),
    ({**PASS_OK, "Action": "*", "Resource": "*"}, "iam:PassRole on '*'"),
    ({k: v for k, v in PASS_OK.items() if k != "Condition"}, "without an iam:PassedToService condition"),
])
def test_a_policy_granting_pass_role_on_star_or_without_a_service_condition_is_refused(statement: dict, named: str) -> None:
    from msk_migrate.errors import UsageError
    from mskinfra.util import pass_role_refusal, policy_json

    with pytest.raises(UsageError) as err:
        policy_json([statement])
    message = str(err.value)
    assert message.startswith("iam:PassRole: statement PassOperatorRoles: ") and named in message and "\n" not in message
    assert pass_role_refusal([PASS_OK, {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]) is None
    assert '"iam:PassedToService"' in policy_json([PASS_OK])
