"""IAM resource-name patterns for Kafka topic and group regexes.

MSK IAM policies name topics and groups in ARNs such as
``arn:aws:kafka:REGION:ACCOUNT:topic/CLUSTER_NAME/CLUSTER_UUID/<name>``, where ``<name>`` may use only
the wildcards ``*`` and ``?``. MirrorMaker 2 selects topics and groups with Java regexes that must match
the *whole* name. :func:`name_patterns` turns such regexes into the narrowest wildcard patterns that
still cover every name the regex can match:

- a literal regex (``orders``, ``payments\\.v1``) -> the exact name;
- a literal prefix followed by anything else (``orders\\..*``, ``team-a-[0-9]+``) -> ``prefix*``;
- top-level or grouped alternation (``(orders|payments)\\..*``) -> one pattern per branch;
- anything without a literal prefix (``.*``, ``[a-z]+``), case-insensitive flags, or syntax Python's
  regex parser does not share with Java -> ``*`` (every topic of *this* cluster: the cluster name and
  UUID in the ARN still scope it).

The patterns are a superset of what MM2 replicates, never a subset: a too-narrow policy would stall
replication, a slightly wide one stays inside the cluster.
"""

from __future__ import annotations

import re
from re import _constants as C
from re import _parser as sre_parse

MAX_PATTERNS = 50


class _Unscopable(Exception):
    pass


def _expand(items: list, prefix: str, out: list[str]) -> None:
    for i, (op, av) in enumerate(items):
        rest = items[i + 1 :]
        if op is C.LITERAL:
            ch = chr(av)
            if ch in "*?":
                raise _Unscopable
            prefix += ch
            continue
        if op is C.AT and av is C.AT_BEGINNING and not prefix and i == 0:
            continue
        if op is C.AT and av in (C.AT_END, C.AT_END_STRING) and not rest:
            continue
        if op is C.SUBPATTERN:
            _group, add_flags, _del_flags, sub = av
            if add_flags & (C.SRE_FLAG_IGNORECASE | C.SRE_FLAG_VERBOSE):
                raise _Unscopable
            _expand(list(sub) + rest, prefix, out)
            return
        if op is C.BRANCH:
            for alternative in av[1]:
                _expand(list(alternative) + rest, prefix, out)
                if len(out) > MAX_PATTERNS:
                    raise _Unscopable
            return
        if op is C.IN and len(av) == 1 and av[0][0] is C.LITERAL:  # [.] is a literal '.'
            ch = chr(av[0][1])
            if ch in "*?":
                raise _Unscopable
            prefix += ch
            continue
        out.append(prefix + "*")
        return
    out.append(prefix)


def name_pattern_list(regex: str) -> list[str]:
    """IAM patterns covering every name ``regex`` fully matches (``["*"]`` when it cannot be narrowed)."""
    try:
        parsed = sre_parse.parse(regex)
        if parsed.state.flags & (C.SRE_FLAG_IGNORECASE | C.SRE_FLAG_VERBOSE):
            return ["*"]
        out: list[str] = []
        _expand(list(parsed), "", out)
    except (_Unscopable, re.error, RecursionError, ValueError, TypeError):
        return ["*"]
    return out or ["*"]


def name_patterns(regexes: list[str], extra_names: list[str] = ()) -> list[str]:
    """Union of :func:`name_pattern_list` over ``regexes`` plus exact ``extra_names``, minimal and sorted."""
    patterns: set[str] = set(extra_names)
    for regex in regexes:
        patterns.update(name_pattern_list(regex))
    if any(p == "*" for p in patterns):
        return ["*"]
    wild = [p[:-1] for p in patterns if p.endswith("*")]
    kept = {p for p in patterns if not any(p != w + "*" and p.startswith(w) for w in wild)}
    return sorted(kept)
