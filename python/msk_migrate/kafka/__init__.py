"""Kafka and MirrorMaker 2 facts, in one place (no client, no session, nothing of ours but errors).

- :mod:`.names`: MM2 connector classes, internal topic names, MM2 defaults (the single copy of each).
- :mod:`.selection`: which topics and groups a flow covers (include/exclude regexes, renames).
- :mod:`.mm2_acls`: the ACLs MirrorMaker 2's user needs on a source cluster with an authorizer.
- :mod:`.produce`: one produce call with the BufferError retry.
- :mod:`.fingerprint`: one record's identity (the hash the validator compares and offset translation aligns by).

Access to the clusters (admin sessions, offsets, client security) is :mod:`msk_migrate.access`.
"""
