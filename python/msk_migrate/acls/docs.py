"""The ACL -> IAM table of docs/acls.md, generated from :mod:`.mapping` (``python -m msk_migrate.acls.docs``)."""

from __future__ import annotations

from .mapping import ACL_TO_IAM, NOT_EXPRESSIBLE, ON_OTHER_RESOURCE, PREFIX, REQUIRED

BEGIN = "<!-- acl-iam-table:begin (generated: python -m msk_migrate.acls.docs) -->"
END = "<!-- acl-iam-table:end -->"


def table() -> str:
    rows = ["| Kafka ACL (resource, operation) | MSK IAM actions granted | also required (added) |", "|---|---|---|"]
    for (rtype, op), actions in ACL_TO_IAM.items():
        granted = [f"`{PREFIX}{a}`" for a in actions]
        if (rtype, op) in ON_OTHER_RESOURCE:
            other, extra = ON_OTHER_RESOURCE[(rtype, op)]
            granted += [f"`{PREFIX}{a}` on every {other}" for a in extra]
        required = sorted({r for a in actions for r in REQUIRED[a]} - set(actions))
        rows.append(f"| {rtype} {op} | {', '.join(granted)} | {', '.join(f'`{r}`' for r in required) or '—'} |")
    for (rtype, op), why in NOT_EXPRESSIBLE.items():
        rows.append(f"| {rtype} {op} | not expressible (reported, never granted): {why} | — |")
    return "\n".join(rows)


def block() -> str:
    return f"{BEGIN}\n{table()}\n{END}"


if __name__ == "__main__":
    print(block())
