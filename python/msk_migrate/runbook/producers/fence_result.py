"""What one ``cutover fence`` did (:class:`FenceResult`), and one ``cutover unfence`` or ``abort``
(:class:`UnfenceResult`): the domain values the operations return.

``cutover run`` decides from it whether to go on; ``cutover fence`` renders it (``operations.fence_outcome``).
Neither reads the other's presentation.

Invariants (the verdict is a function of the fields, never stored beside them):

- ``transaction-open``: a transaction was open on a topic to be config-fenced; the config fence is not on
  (never put on, or taken off again at once) and the watch did not run.
- ``cannot-fence``: neither the ACL (no authorizer, or not chosen) nor the config fence is on every topic.
- ``writes-seen``: a fence is on, and the watch saw a write past its first quiet period.
- ``fenced``: a fence is on every topic and the watch stayed quiet (or did not run).
- The fence *holds* for ``cutover run`` when it is ``fenced``, or when nothing can fence the source and the
  watch stayed quiet (detection alone; the producer gate then relies on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from . import config_fence
from . import fence as fence_mod
from .watch import WatchResult

Verdict = Literal["fenced", "writes-seen", "cannot-fence", "transaction-open"]
UnfenceVerdict = Literal["unfenced", "cannot-fence"]


@dataclass
class FenceResult:
    """One fence of a wave's topics: the ACL state, the config fence (when used), the watch (when it ran)."""

    state: fence_mod.FenceState
    watch: WatchResult | None
    wave: str | None
    config: config_fence.ConfigFenceState | None = None  #: None: the config fence was not used
    not_config: str | None = None  #: why the config fence is not beside the ACL (super users declared)
    use_acl: bool = True
    transaction_open: str | None = None  #: what became of the config fence when a transaction was open
    evidence: str | None = None  #: where the fence document was written (fenced only)
    ledger: str | None = None  #: the ledger that recorded the fenced topics

    @property
    def acl_on(self) -> bool:
        return self.use_acl and self.state.authorizer

    @property
    def config_fenced(self) -> set[str]:
        return set(self.config.fenced) if self.config else set()

    @property
    def config_on(self) -> bool:
        return bool(self.config_fenced) and self.config_fenced >= set(self.state.topics)

    @property
    def mechanisms(self) -> list[str]:
        """The fences on every topic: ``acl``, ``config``, both or none."""
        return [m for m, on in (("acl", self.acl_on), ("config", self.config_on)) if on]

    @property
    def verdict(self) -> Verdict:
        if self.transaction_open is not None:
            return "transaction-open"
        if not self.acl_on and not self.config_on:
            return "cannot-fence"
        if self.watch is not None and not self.watch.quiet:
            return "writes-seen"
        return "fenced"

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict == "fenced" else 1

    @property
    def holds(self) -> bool:
        """``cutover run`` may go on to the drain: fenced, or unfenceable and quiet (see the module docstring)."""
        quiet = self.watch is not None and self.watch.quiet
        return self.verdict == "fenced" or (self.verdict == "cannot-fence" and quiet)


@dataclass
class UnfenceResult:
    """One unfence of a wave's topics. ``unfenced`` when the source has an authorizer (the fence's ACLs are gone,
    or were never there) or a recorded setting was given back; ``cannot-fence`` otherwise: no authorizer and no
    config fence, so there was nothing to take off."""

    state: fence_mod.FenceState  #: the ACL state after the unfence
    restored: list[str]  #: topics whose recorded max.message.bytes was given back
    wave: str | None
    recorded: int = 0  #: topics the ledger now records as unfenced
    ledger: str | None = None

    @property
    def verdict(self) -> UnfenceVerdict:
        return "unfenced" if self.state.authorizer or self.restored else "cannot-fence"

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict == "unfenced" else 1

    @property
    def mechanisms(self) -> list[str]:
        """The fence the source can carry and this unfence took off: ``acl`` with an authorizer, else none."""
        return ["acl"] if self.state.authorizer else []
