"""``msk-migrate validate --follow``: validation that follows replication.

Per partition a *verified-up-to* mark (:mod:`.mark`) says up to which source and target offsets every
record was compared and matched, in order; :mod:`.store` persists it atomically at a path or in S3;
:mod:`.compare` is the in-order comparison of the records past the mark (the batch validator's
fingerprint and rules); :mod:`.follower` reads both clusters past the mark and advances it;
:mod:`.metrics` exposes proof lag to Prometheus. See docs/follow.md.
"""
