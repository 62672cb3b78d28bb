"""``cutover check``: one readiness gate for moving consumer groups to the target.

Ready when every condition holds; each row carries its evidence:

1. connectors: the flow's connectors AND their tasks RUNNING (a connector with 0 tasks is not ready);
2. lag: the group's topics within ``--max-records`` / ``--max-age`` (see :mod:`.lag`);
3. offsets: translated offsets on the target never ahead of the source, re-delivery within ``--max-redelivery``;
4. inactive: the group has no member on the target yet (MM2 only writes offsets of inactive groups);
5. validation: a report (path or s3://) whose verdict is ``match`` and that finished within ``--max-report-age``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..config.migration import MigrationSpec
from ..connect.apply import connector_problems, status_rows
from ..connect.rest import ConnectClient
from ..errors import UsageError
from ..kafka.admin import AdminSession
from ..s3uri import is_s3_uri, split_s3_uri
from .lag import measure_lag
from .offsets import require_known_groups, verify_offsets


@dataclass
class Condition:
    name: str
    ok: bool
    evidence: str

    def to_dict(self) -> dict:
        return asdict(self)


def read_report(location: str) -> dict:
    s3 = split_s3_uri(location, "--validation-report", "pass s3://BUCKET/PREFIX/report.json") if is_s3_uri(location) else None
    try:
        if s3:
            import boto3

            bucket, key = s3
            key = key if key.endswith(".json") else key.rstrip("/") + "/report.json"
            body = boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
        else:
            path = Path(location)
            path = path / "report.json" if path.is_dir() else path
            body = path.read_bytes()
        data = json.loads(body)
    except FileNotFoundError:
        raise UsageError("--validation-report", f"{location} not found", "pass the report directory or its report.json") from None
    except (ValueError, OSError) as exc:
        raise UsageError("--validation-report", f"cannot read {location}: {str(exc).splitlines()[0]}",
                         "pass the report.json written by `msk-migrate validate`") from None
    except Exception as exc:
        raise UsageError("--validation-report", f"cannot read {location}: {str(exc).splitlines()[0]}",
                         "check the S3 URI and your credentials") from None
    if not isinstance(data, dict) or "verdict" not in data:
        raise UsageError("--validation-report", f"{location} is not a validation report", "pass report.json of `msk-migrate validate`")
    return data


def check_validation(location: str, max_age_s: float) -> Condition:
    rep = read_report(location)
    finished = (rep.get("run") or {}).get("finished_at")
    age = None
    if finished:
        t = dt.datetime.fromisoformat(finished.replace("Z", "+00:00"))
        age = (dt.datetime.now(dt.UTC) - t).total_seconds()
    fresh = age is not None and age <= max_age_s
    ok = rep["verdict"] == "match" and fresh
    age_text = f"{age / 60:.0f} min old" if age is not None else "no finish time"
    return Condition("validation report", ok, f"verdict {rep['verdict']}, {age_text} (limit {max_age_s / 60:.0f} min), {location}")


def cutover_check(source: AdminSession, target: AdminSession, client: ConnectClient, migration: MigrationSpec,
                  source_alias: str, groups: list[str], max_records: int, max_age: float | None,
                  max_redelivery: int, report: str | None, max_report_age_s: float) -> list[Condition]:
    require_known_groups(groups, source.groups(), "source")
    conds: list[Condition] = []

    rows = status_rows(client, list(migration.connector_names().values()))
    problems = connector_problems(rows)
    conds.append(Condition("connectors and tasks RUNNING", not problems,
                           "; ".join(problems) if problems else
                           ", ".join(f"{r['name']} {r['tasks_running']}/{r['tasks']}" for r in rows)))

    topics = sorted({t for g in groups for t, _ in source.committed(g)})
    lag = measure_lag(source, target, client, migration, source_alias, topics, max_records, max_age)
    behind = [r for r in lag if r.status != "in-sync"]
    conds.append(Condition("lag within thresholds", bool(lag) and not behind,
                           f"{len(lag)} partition(s) of {', '.join(topics) or 'no topic'}; "
                           + (f"{len(behind)} behind, worst {max(r.behind for r in behind)} records" if behind
                              else f"all within {max_records} record(s)")))

    offs = verify_offsets(source, target, migration, groups)
    bad = [r for r in offs if r.status != "ok" or (r.redelivery or 0) > max_redelivery]
    worst = max((r.redelivery or 0 for r in offs), default=0)
    conds.append(Condition("translated offsets", bool(offs) and not bad,
                           f"{len(offs)} partition(s); " + (
                               f"{len(bad)} not ready (e.g. {bad[0].topic}[{bad[0].partition}] {bad[0].status}, "
                               f"re-delivery {bad[0].redelivery})" if bad else
                               f"never ahead, re-delivery at most {worst} (limit {max_redelivery})")))

    active = {g: target.group_members(g) for g in groups}
    busy = [g for g, m in active.items() if m]
    conds.append(Condition("group inactive on target", not busy,
                           f"active on target: {', '.join(busy)}" if busy else f"{', '.join(groups)}: no member on the target"))

    if report:
        conds.append(check_validation(report, max_report_age_s))
    else:
        conds.append(Condition("validation report", False, "none given (pass --validation-report PATH|s3://...)"))
    return conds
