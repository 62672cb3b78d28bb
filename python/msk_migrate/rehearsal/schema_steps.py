"""The rehearsal's schema steps: the registries' ids travel with the data, proven by a real client.

- "schemas copy" / "schemas verify": the same operations as ``msk-migrate schemas copy|verify --local``
  (:mod:`msk_migrate.schemas.operations`), source -> target, after the connectors are applied;
- "late schema caught": a schema registered on the source after the copy fails `cutover check`'s "schemas in
  sync" and `lag`'s line, until `schemas copy` runs again;
- "validate" (its schema rows, :func:`check_schema_rows`) and "cutover check" (:func:`check_gate_strategies`): each
  schema'd part of each demo topic (:data:`.demo.SCHEMA_PARTS`: the keys of ``shop.audit``, ``shop.shipments`` and
  ``shop.returns`` too) found from the records, under the subject name strategy and subject its producers used, and
  no other part schema'd;
- "decode on target": a consumer on the TARGET decodes every record of the moved group's schema'd topics with
  confluent-kafka's deserializers and the TARGET registry (as many as the demo produced), each part carrying an id
  registered on the source under that part's subject (ids kept); where keys are schema'd, each record's key and
  value are proven apart and as written together (id per part, bytes, the value written under the key:
  :func:`.schema_demo.topic_decoder`; Protobuf parts' message indexes too);
- "schemas copy to source": after rollback, what the moved producers registered on the target meanwhile
  goes back (``schemas copy --to source``), and "decode on source" decodes, on the SOURCE with the SOURCE
  registry, every record those producers wrote.
"""

from __future__ import annotations

from typing import Any

from ..kafka.selection import topic_selection
from ..runbook.cutover import Gate, cutover_check
from ..runbook.evidence import Condition
from ..runbook.lag import lag
from ..runbook.schema_sync import NAME as SCHEMAS_IN_SYNC
from ..schemas.client import RegistryClient
from ..schemas.operations import Direction, copy_outcome, verify_outcome
from ..validation.subject_strategy import CLASSES
from .context import RehearsalContext
from .demo import MOVED_GROUP, MOVED_PRODUCER_RECORDS, ROLLBACK_TOPIC, SCHEMA_PARTS, SCHEMA_TOPICS
from .result import StepFailed
from .schema_demo import decode_all, decode_parts, register_late_version, topic_decoder


def registries(ctx: RehearsalContext) -> tuple[RegistryClient, RegistryClient]:
    """The local registries, as ``schemas --local`` names them."""
    urls = ctx.registries
    if not urls.get("source") or not urls.get("target"):
        raise StepFailed("no schema registries (step 'environment up' did not start them)")
    return (RegistryClient("source", urls["source"], "--local"), RegistryClient("target", urls["target"], "--local"))


def _direction(ctx: RehearsalContext, to: str) -> Direction:
    s, t = registries(ctx)
    return Direction(s, t) if to == "target" else Direction(t, s)


def schemas_copy(ctx: RehearsalContext) -> str:
    """``msk-migrate schemas copy --local``: every subject, version and id of the source registry on the target."""
    out = copy_outcome(_direction(ctx, "target"), (), ctx.say)
    ctx.result.schemas["copy"] = {"verdict": out.verdict, "exit_code": out.exit_code, **out.extra, "notes": out.notes}
    if out.exit_code != 0 or not out.extra.get("copied"):
        raise StepFailed(f"{out.verdict}: {'; '.join(out.notes)}")
    ids = sorted({r["id"] for r in out.rows if r.get("action") == "copied"})
    return f"{out.notes[0]}; ids {', '.join(map(str, ids))}"


def schemas_verify(ctx: RehearsalContext) -> str:
    """``msk-migrate schemas verify --local``: in sync, and on more than nothing."""
    out = verify_outcome(_direction(ctx, "target"), (), ctx.say)
    ctx.result.schemas["verify"] = {"verdict": out.verdict, "exit_code": out.exit_code, **out.extra, "notes": out.notes}
    if out.exit_code != 0 or not out.extra.get("present"):
        raise StepFailed(f"{out.verdict}: {'; '.join(out.notes)}")
    return f"{out.verdict}: {out.notes[0]}"


def check_schema_rows(ctx: RehearsalContext, report: dict[str, Any]) -> str:
    """The forward report's schema rows: every schema'd demo topic's ids all resolved identically (ids seen > 0),
    each part :data:`.demo.SCHEMA_PARTS` names proven on every record it produced, under the strategy and subject its
    producers used (:func:`_proven_parts`), and every Protobuf id's message-index arrays proven (each names a
    message, as many records on both sides)."""
    rows = {t["topic"]: t.get("schemas") or {} for t in report.get("topics", [])}
    kept: dict[str, dict[str, Any]] = {}
    indexes: dict[str, list[dict[str, Any]]] = {}
    for topic in SCHEMA_TOPICS:
        row = rows.get(topic)
        if not row:
            raise StepFailed(f"the validation report has no schema row for {topic}")
        kept[topic] = {k: row.get(k) for k in ("status", "schemad", "ids_seen", "resolved_identical", "differing",
                                               "missing_on_target", "missing_on_source")}
        seen, same = row.get("ids_seen") or 0, row.get("resolved_identical") or 0
        if row.get("status") != "match" or not row.get("schemad") or seen == 0 or same != seen:
            raise StepFailed(f"{topic}'s schema row is not all resolved: {kept[topic]}")
        kept[topic]["parts"] = _proven_parts(topic, row)
        indexes[topic] = _proven_indexes(topic, row)
    ctx.result.schemas["report_rows"] = kept
    ctx.result.schemas["message_indexes"] = {t: found for t, found in indexes.items() if found}
    return "; ".join(f"{t} {r['ids_seen']}/{r['ids_seen']} id(s) identical ("
                     + ", ".join(f"{p} {CLASSES[s['strategy']]}" for p, s in r["parts"].items() if s["schemad"]) + ")"
                     for t, r in kept.items())


def _proven_parts(topic: str, row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per part of the row: each part :data:`.demo.SCHEMA_PARTS` names for ``topic`` is schema'd, under its strategy and
    subject, with every record the demo produced carrying an id on both sides; any other part is not schema'd."""
    produced, want = SCHEMA_TOPICS[topic][1], SCHEMA_PARTS[topic]
    out: dict[str, dict[str, Any]] = {}
    for part, found in (row.get("parts") or {}).items():
        src, tgt = (found.get(side) or {} for side in ("source", "target"))
        out[part] = {"schemad": bool(found.get("schemad")), "strategy": found.get("strategy"),
                     "subjects": found.get("subjects") or [], "records": {"source": src.get("wire_format"),
                                                                          "target": tgt.get("wire_format")}}
        if part not in want:
            if out[part]["schemad"]:
                raise StepFailed(f"{topic}: its {part}s, plain bytes as the demo writes them, are reported schema'd: {out[part]}")
            continue
        strategy, subject = want[part]
        if (not out[part]["schemad"] or out[part]["strategy"] != strategy or out[part]["subjects"] != [subject]
                or out[part]["records"] != {"source": produced, "target": produced}):
            raise StepFailed(f"{topic} {part}s: expected {produced} record(s) per side proven under {CLASSES[strategy]} "
                             f"({subject}), the report says {out[part]}")
    missing = set(want) - set(out)
    if missing:
        raise StepFailed(f"{topic}'s schema row has no {', '.join(sorted(missing))} part (expected {sorted(want)})")
    return out


def check_gate_strategies(evidence: str) -> list[str]:
    """The parts of :data:`.demo.SCHEMA_PARTS` whose strategy and subject the gate's "schemas in sync" evidence names,
    found from the records' ids (``shop.returns value: RecordNameStrategy (shop.Return)``: no ``<topic>-value``
    subject would find it); a part it does not name fails the step."""
    named = [f"{t} {p}: {CLASSES[strategy]} ({subject})" for t, parts in SCHEMA_PARTS.items()
             for p, (strategy, subject) in parts.items()]
    missing = [n for n in named if n not in evidence]
    if missing:
        raise StepFailed(f"'{SCHEMAS_IN_SYNC}' does not name {'; '.join(missing)} from the records: {evidence}")
    return named


def _proven_indexes(topic: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The message-index arrays the row proved for its Protobuf ids: each names a message of the schema and is
    carried by as many records on both sides; a Protobuf id without them was not proven."""
    found: list[dict[str, Any]] = []
    for entry in row.get("ids") or []:
        if entry.get("schema_type") != "PROTOBUF":
            continue
        arrays = entry.get("message_indexes") or []
        bad = [a for a in arrays if a.get("message") is None or a.get("source") != a.get("target")]
        if not arrays or bad:
            raise StepFailed(f"{topic}: the message indexes of Protobuf id {entry.get('id')} are not proven: {bad or 'none read'}")
        found += arrays
    return found


def late_schema_caught(ctx: RehearsalContext) -> str:
    """A schema registered on the source after the copy (a producer's new release): `cutover check`'s "schemas in
    sync" fails naming it and `lag` says no; the re-run of `schemas copy` copies only it, and both say yes again."""
    s, t = registries(ctx)
    gate = Gate([MOVED_GROUP], max_records=0, max_redelivery=100_000, registries=(s, t))
    topics = list(SCHEMA_TOPICS)

    def condition() -> Condition:
        found = [c for c in cutover_check(ctx.migration_session(), gate) if c.name == SCHEMAS_IN_SYNC]
        if len(found) != 1:
            raise StepFailed(f"cutover check for {MOVED_GROUP} has no '{SCHEMAS_IN_SYNC}' condition")
        return found[0]

    def lag_says() -> bool | None:
        return lag(ctx.migration_session(), topics, registries=(s, t)).extra.get("schemas_in_sync")

    new_id = register_late_version(s.url)
    caught, lag_before = condition(), lag_says()
    late: dict[str, Any] = {"id": new_id, "caught": caught.to_dict(), "lag_before_copy": lag_before}
    ctx.result.schemas["late"] = late
    if caught.ok or f"(id {new_id})" not in caught.evidence or lag_before is not False:
        raise StepFailed(f"id {new_id}, registered on the source after the copy, not caught: {caught.evidence}; lag says "
                         f"schemas in sync: {lag_before}")
    again = copy_outcome(_direction(ctx, "target"), (), ctx.say)
    after, lag_after = condition(), lag_says()
    late.update({"recopied": again.extra.get("copied"), "after_copy": after.to_dict(), "lag_after_copy": lag_after})
    if again.exit_code != 0 or again.extra.get("copied") != 1 or not after.ok or lag_after is not True:
        raise StepFailed(f"after the re-run of schemas copy ({'; '.join(again.notes)}): {after.evidence}; lag says {lag_after}")
    return (f"caught: {caught.evidence}; lag: schemas in sync no; `schemas copy` again copied {again.extra.get('copied')} "
            f"version(s) (id {new_id}), then {SCHEMAS_IN_SYNC}: ok, lag: yes")


def decode_on_target(ctx: RehearsalContext) -> str:
    """The moved group's schema'd topics, read on the TARGET and decoded with the TARGET registry."""
    _src, tgt = ctx.clusters()
    _s, t = registries(ctx)
    registered = ctx.result.schemas.get("registered", {}).get("ids", {})
    out = []
    for topic, (_parts, produced) in SCHEMA_TOPICS.items():
        target_topic = topic_selection(ctx.migration).target_name(topic)
        # a topic with schema'd keys: both parts proven per record; the others', the values (their keys are plain bytes)
        n, ids = decode_parts(ctx.apps, tgt.bootstrap_servers, target_topic, t.url, decoder=topic_decoder(topic, target_topic, t.url))
        if n != produced:
            raise StepFailed(f"{target_topic} on the target: {n} record(s) decoded, {produced} produced")
        want = SCHEMA_PARTS[topic]
        for part, seen in ids.items():
            if part not in want:
                if seen:
                    raise StepFailed(f"{target_topic} on the target: {part}s carry schema id(s) {sorted(seen)}; the demo "
                                     f"writes them as plain bytes")
                continue
            subject = want[part][1]
            kept = set(registered.get(subject, ()))
            if sum(seen.values()) != produced or not set(seen) <= kept:
                raise StepFailed(f"{target_topic} on the target: {sum(seen.values())} {part}(s) carry id(s) {sorted(seen)}; "
                                 f"expected {produced}, among those registered on the source under {subject} ({sorted(kept)})")
        if set(want) == {"value"}:
            out.append(f"{target_topic} {n}/{produced} (ids {', '.join(map(str, sorted(ids['value'])))})")
        else:
            out.append(f"{target_topic} {n}/{produced} (" + "; ".join(
                f"{p} ids {', '.join(map(str, sorted(ids[p])))} under {want[p][1]}, {CLASSES[want[p][0]]}" for p in want) + ")")
    ctx.result.schemas["decoded_on_target"] = out
    return "decoded with the target registry: " + "; ".join(out)


def schemas_copy_to_source(ctx: RehearsalContext) -> str:
    """``msk-migrate schemas copy --to source --local``: what the moved producers registered on the target goes back."""
    out = copy_outcome(_direction(ctx, "source"), (), ctx.say)
    ctx.result.schemas["copy_to_source"] = {"verdict": out.verdict, "exit_code": out.exit_code, **out.extra, "notes": out.notes}
    ids = sorted({r["id"] for r in out.rows if r.get("action") == "copied"})
    if out.exit_code != 0 or ctx.moved_schema_id not in ids:
        raise StepFailed(f"{out.verdict}: the moved producers' schema (id {ctx.moved_schema_id}) not among those copied "
                         f"({ids}): {'; '.join(out.notes)}")
    return f"{out.notes[0]}; ids {', '.join(map(str, ids))}"


def decode_on_source(ctx: RehearsalContext) -> str:
    """Every record the moved producers wrote on the target, replicated back, decodes on the SOURCE with the
    SOURCE registry."""
    src, _tgt = ctx.clusters()
    s, _t = registries(ctx)
    n, ids = decode_all(ctx.apps, src.bootstrap_servers, ROLLBACK_TOPIC, s.url, only_schemad=True)
    if n != MOVED_PRODUCER_RECORDS or set(ids) != {ctx.moved_schema_id}:
        raise StepFailed(f"{ROLLBACK_TOPIC} on the source: {n} schema'd record(s) decoded with ids {dict(ids)}, expected "
                         f"{MOVED_PRODUCER_RECORDS} with id {ctx.moved_schema_id}")
    ctx.result.schemas["decoded_on_source"] = {"topic": ROLLBACK_TOPIC, "records": n, "id": ctx.moved_schema_id}
    return (f"{ROLLBACK_TOPIC} on the source: {n}/{MOVED_PRODUCER_RECORDS} records of the moved producers decoded with "
            f"the source registry (id {ctx.moved_schema_id}, registered on the target meanwhile)")
