"""Exact consumer-group offset translation at cutover and rollback, with a proof per group.

- :mod:`.locate`: the alignment by content (pure; the proof obligations are in its docstring);
- :mod:`.evidence`: what was read for one commit point, as data (the planner's only input);
- :mod:`.planner`: the pure planner — per partition, from what was read to a decision (an enum with its
  proof) or the next read it needs; its invariants are in its docstring;
- :mod:`.reader`: the batching reader that answers the planner's reads for many partitions at once,
  over :mod:`.windows` (small record windows, one consumer per cluster);
- :mod:`.plan`: reader + planner for a group, the stopped-group check and the one commit;
- :mod:`.sync`: ``offsets sync`` (a request in, a typed result out);
- :mod:`.certificate`: the proof per group (JSON + HTML, path or S3) and its check at the cutover gate;
- :mod:`.identity`: re-delivery counted by record identity for ``offsets verify`` and ``cutover check``.
"""
