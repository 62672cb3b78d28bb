"""``msk-migrate connectors reset-topic --topic T``: the fix for a source topic recreated under the same name.

MM2 keeps the offsets it stored for the old topic and would skip the new topic's records; ``lag``,
``connectors apply`` and the gates refuse such a topic (:mod:`msk_migrate.ledger.identity`). This command
stops the forward source connector, deletes the topic's partitions from its offsets through Connect's offsets
API (MM2 then reads the new topic from its earliest offset), resumes it, and records the topic's new identity
in the ledger (:func:`msk_migrate.runbook.identity_gate.reset_topics`).
"""

from __future__ import annotations

import click

from ..cliutil import human, output_option
from ..outcome import Outcome
from ..render import render
from .flow import announce, flow_from_kwargs, flow_options
from .options import TOPIC


@click.command("reset-topic")
@flow_options
@click.option("--topic", "topics", multiple=True, required=True, type=TOPIC, help="Source topic recreated since its replication started (repeat).")
@click.option("--timeout", default=180.0, show_default=True, type=click.FloatRange(min=1), help="Seconds to wait for STOPPED and RUNNING.")
@output_option
def reset_topic(topics: tuple[str, ...], timeout: float, output: str, **kw) -> None:
    """Reset the forward source connector's offsets of TOPIC(s) (stop, delete their offsets, resume) and record
    their new identity in the ledger. The target keeps the old topic's copies: delete and recreate the target
    topic first if they must go (docs/runbooks/migration.md, A recreated source topic)."""
    from ..access.admin import AdminSession
    from ..connect_api.rest import client_for, verify_worker
    from ..ledger import ledger_for
    from ..runbook.identity_gate import reset_topics
    from ..runbook.session import MigrationSession

    flow = flow_from_kwargs(kw)
    announce(flow, output)
    client = client_for(flow)
    verify_worker(flow, client, False)  # this migration's worker between this flow's clusters (exit 2)
    source = AdminSession.for_endpoint("source", flow.source)
    target_alias = flow.target.alias if flow.target is not None else "target"
    s = MigrationSession(flow.migration, flow.worker, source, None, flow.source.alias, target_alias, client)
    ledger = ledger_for(flow)
    with human(output).status("resetting source offsets") as sp:
        rows = reset_topics(s, list(topics), timeout, sp.update, ledger)
    render(Outcome("connectors reset-topic", "reset", 0, rows=rows,
                   talked_to={"config": flow.origin, "source": flow.source.bootstrap_servers, "worker": client.url,
                              "ledger": ledger.location},
                   notes=[f"{r['topic']}: {r['partitions_reset']} partition offset(s) deleted from {r['connector']}; MM2 copies it "
                          "from its earliest offset" for r in rows]), output)
