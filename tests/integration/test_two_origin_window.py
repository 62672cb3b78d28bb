"""The two-origin translation reads windows, not whole partitions, on the real local clusters.

Each side's partition holds 20,000 records: its 10,000 natives and the 10,000 marked copies of the other side's,
alternating (as two marked flows leave them, built without MM2 as in test_two_origin_offsets.py, with the same
timestamps on a copy as on its native, as MM2 keeps them). A group committed near the end of the target side's
partition is translated to the source side: exactly, reading a few thousand records of each side instead of
20,000, with the same answer as the whole read (the window as large as the partition). The bound is on the window:
with a bound below the partition's length it still translates, and a window over the bound is refused with one
line naming the partition and the fix.
"""

from __future__ import annotations

import pytest

from msk_migrate.access.admin import AdminSession
from msk_migrate.errors import UsageError
from msk_migrate.offset_translation.two_origin_read import translate_commits
from tests.integration.test_two_origin_offsets import copy, native
from tests.kafka_helpers import commit_group, create_topic, produce

SRC, TGT = "onprem", "msk"
N = 10_000  #: natives per origin
POSITION = 2 * N - 100  #: the group's commit on the target side: 100 records before the end


def build(bootstrap: str, topic: str, side: str, peer: str) -> None:
    produce(bootstrap, topic, [r for i in range(N) for r in (native(side, 0, i), copy(native(peer, 0, i), peer))])


def test_a_group_near_the_end_of_a_long_partition_is_translated_from_windows(local_env, unique):
    src_bs, tgt_bs = local_env.source().bootstrap_servers, local_env.target().bootstrap_servers
    topic, group = f"two-origin-window-{unique}", f"app-{unique}"
    for bs, side, peer in ((src_bs, SRC, TGT), (tgt_bs, TGT, SRC)):
        create_topic(bs, topic, partitions=1)
        build(bs, topic, side, peer)
    commit_group(tgt_bs, group, topic, {0: POSITION})
    src = AdminSession.for_endpoint("source", local_env.source())
    tgt = AdminSession.for_endpoint("target", local_env.target())
    committed = tgt.committed(group)

    t = translate_commits(tgt, TGT, src, SRC, committed)[(topic, 0)]
    whole = translate_commits(tgt, TGT, src, SRC, committed, window=10 * N)[(topic, 0)]
    assert whole.window is not None and whole.window["records_read"] == {"source": 2 * N, "target": 2 * N}
    # the group consumed msk 0-9949 and onprem 0-9949 (offset 19899, the copy of onprem 9949): the source holds the
    # same records before the same offset
    assert t.proven and t.exact and t.offset == POSITION, t.as_dict()
    assert (t.offset, t.exact, t.redelivered, t.duplicates_ahead) == (whole.offset, whole.exact, whole.redelivered,
                                                                      whole.duplicates_ahead)
    assert t.window is not None
    read = t.window["records_read"]
    assert isinstance(read, dict) and read["source"] < 2 * N // 2 and read["target"] < 2 * N // 2, t.window
    print(f"records read: {read} of {2 * N} per side; window {t.window}")

    # the bound is on the window: below the partition's 20,000 offsets it translates, below the window it refuses
    bounded = translate_commits(tgt, TGT, src, SRC, committed, max_records=2 * N - 1)[(topic, 0)]
    assert bounded.exact and bounded.offset == t.offset
    with pytest.raises(UsageError) as refused:
        translate_commits(tgt, TGT, src, SRC, committed, window=8192, max_records=5000)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{topic}[0]: the target cluster's window spans 8,"), line
    assert "more than the 5,000 a two-origin translation reads" in line and "let the group consume to within" in line
