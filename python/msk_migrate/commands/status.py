"""``msk-migrate status [--wave W]``: where every topic and group of the migration stands (docs/runbooks/migration.md).

Reads the flow's ledger (:mod:`msk_migrate.ledger`) and, unless ``--ledger-only``, the source's topics and
committed offsets (for the waves and the groups that have not moved yet); prints a table (or ``--output json``)
and writes the same as an HTML page into the ledger's place (``status.html``, ``status-<wave>.html``).
Writes nothing to the ledger. Exit 0 when there is something to show, 1 when there is nothing, 2 bad input.
"""

from __future__ import annotations

import click

from ..cliutil import output_option
from ..errors import UsageError
from ..render import html_page, render
from .flow import announce, flow_from_kwargs, flow_options, talked_to
from .waves import check_wave, wave_option


@click.command("status")
@flow_options
@wave_option
@click.option("--ledger-only", is_flag=True, help="Show the ledger's records alone; do not read the source "
              "(topics not recorded yet and groups that have not moved are then not listed).")
@output_option
def status(wave: str | None, ledger_only: bool, output: str, **kw) -> None:
    """The whole estate at a glance: each topic and group of the migration (or of --wave W), its state in the
    ledger (replicating, consumers-moved, fenced, producers-moved, rolled-back, cleaned-up, abandoned), since
    when, by whom and the evidence's location. Also written as status.html beside the ledger."""
    from ..ledger import ledger_for
    from ..runbook.estate import status_outcome

    flow = flow_from_kwargs(kw)
    check_wave(flow, wave)
    announce(flow, output)
    ledger = ledger_for(flow)
    view = ledger.read()
    plan = None
    # status reaches the source (unless --ledger-only) and the ledger; never the target or the worker
    reached = {**talked_to(flow), "target": None, "worker": None, "ledger": ledger.location}
    if ledger_only:
        reached["source"] = None
    else:
        from ..access.admin import AdminSession
        from ..runbook.waves import plan_waves

        source = AdminSession.for_endpoint("source", flow.source)
        reached["source_cluster_id"] = source.cluster_id()
        plan = plan_waves(source, flow.migration)
    outcome = status_outcome(view, plan, wave, reached)
    page = f"status-{wave}.html" if wave else "status.html"
    try:
        ledger.storage.put(page, html_page(outcome), "text/html")
        outcome.notes.append(f"page: {ledger.storage.where(page)}")
        outcome.extra["page"] = ledger.storage.where(page)
    except UsageError as exc:  # the page is a convenience: the table and the JSON stand without it
        outcome.notes.append(f"page not written: {exc}")
    render(outcome, output)
