"""Exact consumer-group offset translation at cutover and rollback, with a proof per group.

- :mod:`.locate`: the alignment by content (pure; the proof obligations are in its docstring);
- :mod:`.windows`: small record windows of many partitions, one consumer per cluster;
- :mod:`.plan`: one group's placement per partition (exact, or MM2's checkpoint and why);
- :mod:`.certificate`: the proof per group (JSON + HTML, path or S3) and its check at the cutover gate;
- :mod:`.identity`: re-delivery counted by record identity for ``offsets verify`` and ``cutover check``.
"""
