"""Which Kafka release a broker runs, told by the API versions it answers (ApiVersions, KIP-35), and what
that means for the MirrorMaker 2 clients that will read it.

A broker does not say its release; it lists, per API key, the versions it accepts. Releases add API keys
(and raise versions), so the keys present bound the release from below and the first missing one bounds it
from above: a 2.4.1 broker has OffsetDelete (key 47, 2.4) but not AlterClientQuotas (key 49, 2.6), so it is
"2.4 or 2.5". Each marker below is the release that first shipped it (Kafka's KIPs and protocol
definitions). Releases that add no marker of their own (0.10.2, 2.5, 4.1) show as ranges, and so do 3.0-3.9:
the APIs the 3.x lines added after ListTransactions are listed or not depending on the metadata mode and the
broker's configuration (a 3.9 KRaft broker lists neither telemetry API without a metrics plugin), so they
cannot place a broker. The answer is a range, never a guess inside it.

Checked here against real brokers: 2.4.1 and 2.8.2 (ZooKeeper), 3.9.2 and 4.1.2 (KRaft); the other
releases' markers come from the KIPs named, not from a running broker.

Invariant: markers are in release order, and a broker of release R has every marker up to R and none
after (a broker that breaks this, e.g. a patched fork, is reported as such, not placed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: ApiVersions' key: brokers answer it from Kafka 0.10.0 (KIP-35); older ones close the connection.
API_VERSIONS_KEY = 18
PRODUCE_KEY = 0
FETCH_KEY = 1

#: Every release line from the first that answers ApiVersions: what ranges are written with.
RELEASES = ["0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6",
            "2.7", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1"]

#: Versions per API key: key -> (min, max).
ApiVersions = dict[int, tuple[int, int]]


@dataclass(frozen=True)
class Marker:
    release: str
    what: str  #: the API (and version) that shows it
    present: Callable[[ApiVersions], bool]


def _key(key: int) -> Callable[[ApiVersions], bool]:
    return lambda v: key in v


def _max(key: int, version: int) -> Callable[[ApiVersions], bool]:
    return lambda v: key in v and v[key][1] >= version


def _min(key: int, version: int) -> Callable[[ApiVersions], bool]:
    return lambda v: key in v and v[key][0] >= version


MARKERS = [
    Marker("0.10.1", "CreateTopics (key 19)", _key(19)),
    Marker("0.11.0", "InitProducerId (key 22)", _key(22)),
    Marker("1.0", "CreatePartitions (key 37)", _key(37)),
    Marker("1.1", "DeleteGroups (key 42)", _key(42)),
    Marker("2.0", "Produce v6", _max(PRODUCE_KEY, 6)),
    Marker("2.1", "Produce v7", _max(PRODUCE_KEY, 7)),
    Marker("2.2", "ElectLeaders (key 43)", _key(43)),
    Marker("2.3", "IncrementalAlterConfigs (key 44)", _key(44)),
    Marker("2.4", "OffsetDelete (key 47)", _key(47)),
    Marker("2.6", "AlterClientQuotas (key 49)", _key(49)),
    Marker("2.7", "AlterUserScramCredentials (key 51)", _key(51)),
    Marker("2.8", "DescribeCluster (key 60)", _key(60)),
    Marker("3.0", "ListTransactions (key 66)", _key(66)),
    Marker("4.0", "Fetch v0-v3 removed (KIP-896)", _min(FETCH_KEY, 4)),
]

#: Kafka 4.x clients talk to brokers from 2.1 on (KIP-896); 3.x clients to brokers from 0.10.0.
CLIENTS_4X_NEED = "2.1"


def _index(release: str) -> int:
    return RELEASES.index(release)


@dataclass(frozen=True)
class Release:
    """The release range a broker's API versions place it in: ``low`` <= release < ``below`` (None: no
    newer marker is missing, i.e. the newest line this table knows or later)."""

    low: str
    below: str | None
    evidence: str  #: the marker that set ``low`` (and the one that set ``below``)
    consistent: bool = True  #: False: markers present out of order (not a release line this table knows)

    def describe(self) -> str:
        """``Kafka 2.4–2.5``, ``Kafka 2.8``, ``Kafka >= 4.0``."""
        if self.below is None:
            return f"Kafka >= {self.low}"
        last = RELEASES[_index(self.below) - 1]
        return f"Kafka {self.low}" if last == self.low else f"Kafka {self.low}–{last}"

    def at_least(self, release: str) -> bool | None:
        """True: surely >= ``release``; False: surely below it; None: the range straddles it."""
        if _index(self.low) >= _index(release):
            return True
        if self.below is not None and _index(self.below) <= _index(release):
            return False
        return None


def release_of(versions: ApiVersions) -> Release:
    """The release range of a broker that answered ApiVersions with ``versions``."""
    present = [m.present(versions) for m in MARKERS]
    n = 0
    while n < len(MARKERS) and present[n]:
        n += 1
    consistent = not any(present[n:])
    low = MARKERS[n - 1] if n else None
    nxt = MARKERS[n] if n < len(MARKERS) else None
    evidence = (f"{low.what}: yes" if low else "answers ApiVersions") + (f"; {nxt.what}: no" if nxt else "")
    return Release(low.release if low else RELEASES[0], nxt.release if nxt else None, evidence, consistent)


def client_advice(release: Release) -> tuple[str, str]:
    """(status, sentence) for the MM2 worker's clients reading a source of ``release``."""
    ok = release.at_least(CLIENTS_4X_NEED)
    if ok:
        return "ok", "Connect 3.9 and 4.x clients both work"
    if ok is False:
        return "warn", (f"Kafka 4.x clients need brokers >= {CLIENTS_4X_NEED}: keep the Connect image on Kafka 3.9 "
                        "(see docs/runbooks/migration.md)")
    return "warn", (f"Kafka 4.x clients need brokers >= {CLIENTS_4X_NEED} and this range straddles it: keep the "
                    "Connect image on Kafka 3.9")
