"""The migration's ledger: where every topic and consumer group stands, since when, by whom, and what proves it.

API (everything a command needs; modules below for the detail):

.. code-block:: python

    from msk_migrate.ledger import Change, ledger_for

    ledger = ledger_for(flow)                 # the flow's ledger (location.py: S3 prefix / directory)
    view = ledger.read()                      # LedgerView: .version, .records, .get(kind, name), .state_of(...)
    ledger.ensure_latest(view)                # before changing a cluster: StaleLedger (exit 2) if someone wrote since
    ...                                       # act on the clusters
    view = ledger.append(view, [Change("group", "billing", "consumers-moved", evidence="s3://…/cert.json",
                                       wave="first")], command="offsets sync")   # StaleLedger if someone wrote since

- :mod:`.records`: states (:data:`TOPIC_STATES`, :data:`GROUP_STATES`), :class:`Change`, :class:`Record`,
  :class:`LedgerView`;
- :mod:`.book`: :class:`Ledger` (read / ensure_latest / append), the file format, :class:`StaleLedger` and
  :class:`LedgerUnreadable` (both UsageErrors: one line, exit 2);
- :mod:`.storage`: the directory and S3 stores (create-if-absent is the concurrency control);
- :mod:`.location`: where a flow's ledger lives (:func:`ledger_location`, :func:`ledger_for`);
- :mod:`.identity`: a topic's identity (topic id on Kafka >= 2.8, else a fingerprint of partition 0's first
  record) and :func:`check_identity`, which names the topics recreated since replication started.

Invariants: only commands that change state write (one event per command); history is never rewritten;
a writer that read an older version is refused, never merged; a file that does not parse is refused with
the file's name and the fix, never skipped.
"""

from .book import Ledger, LedgerUnreadable, StaleLedger, open_ledger
from .location import LEDGER_ENV, ledger_for, ledger_location
from .records import GROUP_STATES, TOPIC_STATES, Change, LedgerView, Record

__all__ = ["GROUP_STATES", "LEDGER_ENV", "TOPIC_STATES", "Change", "Ledger", "LedgerUnreadable", "LedgerView", "Record",
           "StaleLedger", "ledger_for", "ledger_location", "open_ledger"]
