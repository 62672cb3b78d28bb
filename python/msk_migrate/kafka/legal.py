"""What Kafka itself accepts as a topic name or a consumer group id, checked before any broker is asked.

Topic names follow the broker's own rule (``org.apache.kafka.common.internals.Topic.validate``): 1 to
249 characters of ``[a-zA-Z0-9._-]``, and neither ``.`` nor ``..``. A group id may be any string the
broker can store as the key of ``__consumer_offsets`` (a short string: at most 32,767 UTF-8 bytes);
brokers since 2.2 refuse the empty id, and a control character (a newline pasted with the name, a
tab) names a group no operator meant, so both are refused here too.

Every ``check_*`` returns the value or raises ``ValueError`` saying what a legal value looks like;
the command line turns that into one line naming the option.
"""

from __future__ import annotations

import re

#: The broker's legal topic characters (Topic.LEGAL_CHARS) and length (Topic.MAX_NAME_LENGTH).
TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]+")
TOPIC_MAX_LENGTH = 249
#: ``__consumer_offsets`` keys hold the group id as a Kafka short string (int16 length).
GROUP_MAX_BYTES = 32767
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_topic_name(value: str) -> str:
    if value in ("", ".", ".."):
        raise ValueError(f"{value!r} is not a topic name: Kafka refuses '', '.' and '..'")
    if len(value) > TOPIC_MAX_LENGTH:
        raise ValueError(f"a topic name has at most {TOPIC_MAX_LENGTH} characters; this one has {len(value)}")
    if not TOPIC_CHARS.fullmatch(value):
        bad = sorted({c for c in value if not TOPIC_CHARS.fullmatch(c)})
        raise ValueError(f"{value!r} is not a topic name: Kafka allows only letters, digits, '.', '_' and '-' "
                         f"(found {', '.join(repr(c) for c in bad)})")
    return value


def check_group_id(value: str) -> str:
    if not value:
        raise ValueError("the empty group id is not a consumer group (brokers since 2.2 refuse it)")
    if _CONTROL.search(value):
        raise ValueError(f"{value!r} holds a control character (a newline or tab pasted with the name?)")
    if len(value.encode()) > GROUP_MAX_BYTES:
        raise ValueError(f"a group id has at most {GROUP_MAX_BYTES} bytes")
    return value


def check_topic_list(value: str) -> list[str]:
    """``T1,T2,...``: each a topic name, no empty item."""
    names = [t.strip() for t in value.split(",")]
    if any(not t for t in names):
        raise ValueError(f"{value!r} holds an empty topic name (two commas, or one at an end)")
    return [check_topic_name(t) for t in names]


#: What a topic regex may contain besides literal text: escapes, character classes and {m,n} repeats
#: (a comma there is syntax, not a character of a name).
_REGEX_SYNTAX = re.compile(r"\\.|\[(?:\\.|[^\]])*\]|\{\d*,\d*\}")


def check_topic_regex(value: str) -> str:
    """A regular expression over topic names. A literal comma can never match a topic name (``a,b`` is a list
    written where a regex belongs: ``a|b``), and an empty expression matches no name."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"{value!r} is not a regular expression: {exc}") from None
    if not value:
        raise ValueError("an empty regex matches no topic name")
    if "," in _REGEX_SYNTAX.sub("", value):
        raise ValueError(f"{value!r} matches a literal ',', which no topic name holds (for several topics write a|b)")
    return value
