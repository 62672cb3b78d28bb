"""Cut the Connect workers' TCP to one cluster (and only theirs), then heal it: the fault suite's network cuts.

Why not a network namespace of its own: every harness server binds and advertises 127.0.0.1, so a worker
moved into its own namespace (``ip netns exec``, a veth pair) would reach no broker at all unless 127.0.0.1
were DNAT'ed across the veth in both directions (``route_localnet`` in two namespaces) and its REST and
metrics ports forwarded back; the addresses the brokers advertise would still be wrong for it. Instead the
workers run in a **cgroup v2 of their own** (created per suite run, the processes put into it by a wrapper
before ``exec`` so every socket they ever open belongs to it) and a cut is an iptables chain in the host's
namespace that DROPs the packets *of that cgroup's sockets* (``-m cgroup --path``) to one cluster's broker
ports. That is a real partition: the worker's SYNs and segments vanish (no RST: like a dead link or a
blackholing security group), its existing connections time out, while the brokers, the test's own clients,
the other cluster and every other process on the machine keep their network. Healing deletes the rules.

Root, cgroup2 and the iptables ``cgroup`` match are checked first (:func:`check_available`): without them
the suite stops with one line saying what is missing.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

CGROUP2_CANDIDATES = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


class NetCutUnavailable(RuntimeError):
    """This machine cannot cut a process's network (not root, no cgroup2, no iptables cgroup match)."""


def _cgroup2_root() -> Path | None:
    for p in CGROUP2_CANDIDATES:
        if (p / "cgroup.procs").exists() and (p / "cgroup.controllers").exists():
            return p
    return None


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30)


class NetCut:
    """One cgroup for the workers of a suite run and the iptables chain that cuts them.

    ``wrap(cmd)`` is the command that starts a worker inside the cgroup; ``cut(ports)`` blackholes the
    cgroup's packets to ``ports`` on 127.0.0.1 until ``heal()``; ``close()`` heals and removes both."""

    def __init__(self, tag: str | None = None):
        check_available()
        root = _cgroup2_root()
        assert root is not None
        self.tag = tag or f"mskf-{os.getpid()}-{uuid.uuid4().hex[:4]}"
        self.rel = self.tag  #: path relative to the cgroup2 root, as ``-m cgroup --path`` takes it
        self.path = root / self.rel
        self.path.mkdir(exist_ok=True)
        self.chain = ("MSKF-" + self.tag.split("-", 1)[1].replace("-", ""))[:28]
        self._hooked = False
        self.cut_ports: list[int] = []

    def wrap(self, cmd: list[str]) -> list[str]:
        """``cmd`` run as a member of the cgroup (the shell joins it, then execs: no extra process)."""
        procs = shlex.quote(str(self.path / "cgroup.procs"))
        return ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "mskf-cgroup", *cmd]

    def members(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def cut(self, ports: list[int], require_members: bool = True) -> None:
        """Drop every packet the cgroup's sockets send to 127.0.0.1:``ports`` (new and established)."""
        if require_members and not self.members():
            raise RuntimeError(f"no process in cgroup {self.rel}: the workers were not started through wrap()")
        self.heal()
        if not self._hooked:
            _check(_run("iptables", "-w", "-N", self.chain))
            _check(_run("iptables", "-w", "-I", "OUTPUT", "1", "-j", self.chain))
            self._hooked = True
        for i in range(0, len(ports), 15):  # multiport takes at most 15 ports per rule
            group = ",".join(str(p) for p in ports[i:i + 15])
            _check(_run("iptables", "-w", "-A", self.chain, "-d", "127.0.0.1/32", "-p", "tcp", "-m", "multiport",
                        "--dports", group, "-m", "cgroup", "--path", self.rel, "-j", "DROP"))
        self.cut_ports = list(ports)

    def heal(self) -> None:
        if self._hooked:
            _run("iptables", "-w", "-F", self.chain)
        self.cut_ports = []

    def close(self) -> None:
        """Remove the rules, the chain and (once its processes are gone) the cgroup."""
        if self._hooked:
            _run("iptables", "-w", "-D", "OUTPUT", "-j", self.chain)
            _run("iptables", "-w", "-F", self.chain)
            _run("iptables", "-w", "-X", self.chain)
            self._hooked = False
        with contextlib.suppress(OSError):
            self.path.rmdir()

    @contextlib.contextmanager
    def cutting(self, ports: list[int]) -> Iterator[None]:
        self.cut(ports)
        try:
            yield
        finally:
            self.heal()


def _check(done: subprocess.CompletedProcess) -> None:
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(done.args)} failed: {done.stderr.strip() or done.stdout.strip()}")


def check_available() -> None:
    """Raise :class:`NetCutUnavailable` with one line naming what is missing."""
    if os.geteuid() != 0:
        raise NetCutUnavailable("the network-cut faults need root (iptables, cgroups): run the fault suite as root")
    root = _cgroup2_root()
    if root is None:
        raise NetCutUnavailable("the network-cut faults need a cgroup2 hierarchy (/sys/fs/cgroup/unified or "
                                "/sys/fs/cgroup): mount one with `mount -t cgroup2 none /sys/fs/cgroup/unified`")
    probe = root / f"mskf-probe-{os.getpid()}"
    chain = f"MSKF-PROBE{os.getpid()}"[:28]
    try:
        probe.mkdir(exist_ok=True)
        if _run("iptables", "-w", "-N", chain).returncode != 0:
            raise NetCutUnavailable("the network-cut faults need iptables (nf_tables or legacy): install iptables")
        done = _run("iptables", "-w", "-A", chain, "-m", "cgroup", "--path", probe.name, "-j", "DROP")
        if done.returncode != 0:
            raise NetCutUnavailable("the network-cut faults need the iptables cgroup match (xt_cgroup, cgroup2 "
                                    f"paths): {done.stderr.strip()}")
    except FileNotFoundError as exc:
        raise NetCutUnavailable(f"the network-cut faults need {exc.filename}: install it") from None
    except PermissionError as exc:
        raise NetCutUnavailable(f"cannot create a cgroup under {root}: {exc.strerror}") from None
    finally:
        _run("iptables", "-w", "-F", chain)
        _run("iptables", "-w", "-X", chain)
        with contextlib.suppress(OSError):
            probe.rmdir()
