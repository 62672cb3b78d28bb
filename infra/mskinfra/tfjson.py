"""Literal text inside Terraform strings.

Terraform treats ``${...}`` and ``%{...}`` in every string of the synthesized JSON as template syntax.
Rendered connector configs contain ``${env:MM2_...}`` references that must reach the object (and the
Connect worker) verbatim, so literal text is escaped (``$${``, ``%%{``) while cdktf tokens
(``${TfToken[...]}``, which cdktf resolves into Terraform references) are left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

_TOKEN = re.compile(r"\$\{TfToken\[[A-Za-z0-9_.\-]+\]\}")


def escape_template(text: str) -> str:
    """Escape Terraform template syntax in ``text``, keeping cdktf tokens intact."""
    parts = _TOKEN.split(text)
    tokens = _TOKEN.findall(text)
    out = [parts[0].replace("${", "$${").replace("%{", "%%{")]
    for token, part in zip(tokens, parts[1:], strict=False):
        out.append(token)
        out.append(part.replace("${", "$${").replace("%{", "%%{"))
    return "".join(out)


def unescape_template(text: str) -> str:
    """What Terraform makes of an escaped literal (for tests and readers of the synthesized JSON)."""
    return text.replace("$${", "${").replace("%%{", "%{")


def substitute(text: str, substitutions: Mapping[str, str]) -> str:
    for placeholder, value in substitutions.items():
        text = text.replace(placeholder, value)
    return text


def tf_text(text: str, substitutions: Mapping[str, str] | None = None) -> str:
    """``text`` with placeholders replaced by tokens, safe as a Terraform string."""
    return escape_template(substitute(text, substitutions or {}))


def tf_json(obj: object, substitutions: Mapping[str, str] | None = None, indent: int | None = 2) -> str:
    """``json.dumps(obj)`` (sorted keys) as a Terraform string: literals escaped, placeholders -> tokens."""
    return tf_text(json.dumps(obj, indent=indent, sort_keys=True) + ("\n" if indent else ""), substitutions)
