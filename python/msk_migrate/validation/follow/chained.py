"""One chained Spark run of the follower, wherever Spark runs: the local session, or the validation job on EMR
Serverless or Glue (``validate --follow --engine spark --once [--on emr-serverless|glue]``).

The run, in order (nothing read past the mark nor written before the checks pass):

1. both clusters' facts through the ``metadata`` factory the caller passes (confluent-kafka on an operator's
   machine, the job JVM's Kafka admin in the job: :mod:`.cluster_facts`);
2. the mark at ``mark`` (a path, or ``s3://`` through the ``s3`` client passed in) checked against them
   (:func:`.cluster_facts.prepare`: other clusters, a recreated topic, a changed partition count refused, exit 2),
   retention-truncated partitions marked, new partitions added, and that checked mark persisted;
3. :func:`.spark_chain.chain_pass`: ``[mark, end)`` compared per partition, the advanced mark persisted.

The result (:class:`ChainedResult`) is plain data: the job writes it as ``follow.json`` beside its logs and the
submitting CLI reads it back, so a chained run on a job home prints exactly what a local one prints. Standard
library and pyspark only (the job imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...access.secrets import SecretResolver
from ...access.spark_options import spark_kafka_options
from ...errors import UsageError
from ...outcome import quiet
from ..plan import MetadataFactory
from ..request import ValidationRequest
from .cluster_facts import FollowClusters, prepare
from .mark import verdict
from .store import MarkStore

KIND = "msk-migrate/chained-follow-result"
#: The result's name beside the run's logs (``validation/reports/<run>/``), where the submitting CLI reads it.
RESULT_NAME = "follow.json"


@dataclass(frozen=True)
class ChainedResult:
    """What one chained run proved: one row per partition of the written mark, the verdict of the whole mark
    (:func:`.mark.verdict`), and which clusters and mark it talked to."""

    verdict: str
    exit_code: int
    migration: str
    mark: str
    rows: list[dict[str, Any]]
    talked_to: dict[str, str]
    truncated: list[list[Any]] = field(default_factory=list)  #: [topic, partition] truncated by this run

    def to_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "verdict": self.verdict, "exit_code": self.exit_code, "migration": self.migration,
                "mark": self.mark, "rows": self.rows, "talked_to": self.talked_to, "truncated": self.truncated}

    @classmethod
    def from_dict(cls, doc: Any) -> ChainedResult:
        """Raises ValueError on anything that is not a chained run's result (the caller names the location)."""
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            raise ValueError(f"not a {KIND} document")
        try:
            return cls(str(doc["verdict"]), int(doc["exit_code"]), str(doc["migration"]), str(doc["mark"]),
                       list(doc["rows"]), dict(doc["talked_to"]), list(doc.get("truncated") or []))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{KIND}: {exc}") from None


def chained_run(req: ValidationRequest, mark: str, migration: str, spark: Any, metadata: MetadataFactory,
                resolver: SecretResolver, s3: Any = None, say: Callable[[str], None] = quiet,
                mark_field: str = "--mark") -> ChainedResult:
    """One chained run (see the module doc). ``s3``: the client an ``s3://`` mark is read and written with
    (boto3's by default; the job passes its JVM's); ``mark_field``: what a refusal of the mark names."""
    from .spark_chain import chain_pass

    if req.marks is not None:  # the command refuses it first; a job request names it by its field
        raise UsageError("--engine spark", "the chained Spark run compares every record in order and does not account "
                         "for copy marks", "follow with --engine native (it compares per origin)")
    store = MarkStore(mark, mark_field, s3)
    store.check_writable()
    clusters = FollowClusters.open(req, migration, metadata, resolver)
    say("reading both clusters' metadata and the mark")
    facts = clusters.facts()
    prepared, truncated = prepare(store, facts)
    store.save(prepared)  # the checked mark (truncations, new partitions) is what the pass starts from
    src_opts, tgt_opts = (spark_kafka_options(role, getattr(req, role), resolver, req.isolation_level, req.kafka_options)
                          for role in ("source", "target"))
    say("comparing every partition from its mark to its end (Spark)")
    written, advances = chain_pass(spark, store, facts, src_opts, tgt_opts, clusters.no_ts, clusters.source_ends)
    rows: list[dict[str, Any]] = []
    for (t, p), pm in written.items():
        a = advances.get((t, p))
        row: dict[str, Any] = {"topic": t, "partition": p, "state": pm.state, "source_verified_up_to": pm.source_next,
                               "target_verified_up_to": pm.target_next, "compared": pm.compared,
                               "proven_this_run": a.proven if a is not None else 0}
        if pm.mismatch is not None:
            row["mismatch"] = pm.mismatch
        if pm.source_log_start is not None:
            row["source_log_start"] = pm.source_log_start
        rows.append(row)
    name, code = verdict(written)
    talked = {"source": req.source.bootstrap_servers, "target": req.target.bootstrap_servers, "mark": str(store)}
    return ChainedResult(name, code, written.migration, str(store), rows, talked, [[t, p] for t, p in truncated])
