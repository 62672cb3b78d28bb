"""Kafka and MirrorMaker 2 facts and access, in one place.

- :mod:`.names`: MM2 connector classes, internal topic names, MM2 defaults (the single copy of each).
- :mod:`.selection`: which topics and groups a flow covers (include/exclude regexes, renames).
- :mod:`.admin`: one AdminClient session per cluster with one error contract.
- :mod:`.offsets`: end / last-stable offsets, committed offsets, MM2 checkpoints and offset syncs.

Nothing here imports the CLI, Connect or the local harness: operator commands, the renderer,
validation, the infrastructure IAM patterns and the rehearsal build on it.
"""
