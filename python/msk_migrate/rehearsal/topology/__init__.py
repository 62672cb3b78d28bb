"""The topology rehearsals (``msk-migrate rehearse --topology consolidate|fan-out``): several migrations at once
on local clusters, each on its own Connect worker, walked step by step to a verdict per flow.

- ``consolidate``: two sources (the pair's source and the peer) into one target; a topic and a consumer group
  both sources hold are refused by ``topology check`` until one flow maps the topic (``topic_renames``) and
  leaves the group out; both flows then replicate, translate offsets and validate to a match on their own;
  cleaning one migration up leaves the other's topics, groups and connectors alone.
- ``fan-out``: one source into two targets (the pair's target and the peer), each with its own flow,
  validated on its own; a rollback from one target runs while the other keeps replicating, and the records
  rolled back to the source reach the other target too.

Each step calls what the operator command it stands for calls; the default rehearsal (active/passive) is
:func:`msk_migrate.rehearsal.rehearse`.
"""

from __future__ import annotations

from .run import TOPOLOGIES, rehearse_topology

__all__ = ["TOPOLOGIES", "rehearse_topology"]
