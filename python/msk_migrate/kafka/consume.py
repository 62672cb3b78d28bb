"""How the bounded reads of the runbook and offset translation consume: one fact for all of them."""

from __future__ import annotations

#: How long one ``Consumer.consume`` call of a bounded read waits. librdkafka hands a batch over when it is full
#: or when this has passed, so the last, partial batch of every read waits it out in full (0.2-0.5 s was most of
#: a small read: a gate's window, a checkpoints topic of a few records). The readers check their positions between
#: calls to know a range ended in transaction markers, so a short wait costs a few cheap local calls, not records.
POLL_SECONDS = 0.01
#: Nothing delivered for this long: a reader asks its consumer's positions (a range ending in transaction markers
#: or compacted offsets delivers no record at its end). Not sooner: a consumer assigned again to a partition it read
#: before may still report its old position until the first fetch from the new one.
IDLE_CHECK_SECONDS = 0.2
