"""The source's release from its API versions: the wire format of ApiVersions v0, the release ranges the
markers give (over answers recorded from real 3.9.2 and 4.1.2 brokers, and constructed older ones), and the
advice for the worker's clients that follows."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from msk_migrate.access.api_versions import CORRELATION_ID, ApiVersionsError, parse_v0, request_v0
from msk_migrate.kafka.releases import MARKERS, client_advice, release_of

RECORDED = {release: {int(k): (v[0], v[1]) for k, v in keys.items()}
            for release, keys in json.loads((Path(__file__).parent / "data" / "api_versions_recorded.json").read_text()).items()}


def _up_to(release: str) -> dict[int, tuple[int, int]]:
    """A broker that has every marker up to ``release`` and none after (built from the 3.9.2 answer)."""
    versions = {18: (0, 2), 19: (0, 2), 0: (0, 5)}
    for m in MARKERS:
        if m.release == "2.0":
            versions[0] = (0, 6)
        elif m.release == "2.1":
            versions[0] = (0, 7)
        elif m.release != "4.0":
            versions[int(m.what.split("key ")[1].rstrip(")"))] = (0, 0)
        if m.release == release:
            return versions
    raise AssertionError(release)


def test_the_request_is_api_versions_v0_and_the_answer_is_read_back() -> None:
    req = request_v0()
    size, key, version, corr = struct.unpack_from(">ihhi", req)
    assert (size, key, version, corr) == (len(req) - 4, 18, 0, CORRELATION_ID)
    answer = struct.pack(">ihi", CORRELATION_ID, 0, 2) + struct.pack(">hhh", 0, 0, 7) + struct.pack(">hhh", 18, 0, 2)
    assert parse_v0(answer) == (0, {0: (0, 7), 18: (0, 2)})
    with pytest.raises(ApiVersionsError, match="another request"):
        parse_v0(struct.pack(">ihi", 7, 0, 0))
    with pytest.raises(ApiVersionsError, match="truncated"):
        parse_v0(struct.pack(">ihi", CORRELATION_ID, 0, 3))


def test_recorded_brokers_are_placed_in_their_release_lines() -> None:
    assert release_of(RECORDED["3.9.2"]).describe() == "Kafka 3.0–3.9"
    assert release_of(RECORDED["4.1.2"]).describe() == "Kafka >= 4.0"


@pytest.mark.parametrize(("release", "shown", "status"), [
    ("1.1", "Kafka 1.1", "warn"), ("2.0", "Kafka 2.0", "warn"), ("2.1", "Kafka 2.1", "ok"),
    ("2.4", "Kafka 2.4–2.5", "ok"), ("2.8", "Kafka 2.8", "ok"), ("0.11.0", "Kafka 0.11.0", "warn"),
])
def test_older_releases_are_named_with_the_advice_that_follows(release: str, shown: str, status: str) -> None:
    found = release_of(_up_to(release))
    assert found.describe() == shown and found.consistent
    got, advice = client_advice(found)
    assert got == status
    assert ("4.x clients need brokers >= 2.1" in advice) == (status == "warn"), advice


def test_markers_out_of_release_order_are_not_placed_silently() -> None:
    odd = {**_up_to("1.1"), 60: (0, 0)}  # DescribeCluster without the 2.x APIs: no release line has that
    assert not release_of(odd).consistent
