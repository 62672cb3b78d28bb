"""`rehearse --topology`: the topology rehearsals run on one broker per cluster with the local worker; a shape or
worker option beside them is refused in one line before anything starts, and each topology's plan is complete."""

from __future__ import annotations

import pytest

from msk_migrate.cliutil import run_cli
from msk_migrate.commands.root import cli
from msk_migrate.rehearsal.topology import TOPOLOGIES

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("args", "named"), [
    (["--topology", "consolidate", "--source-brokers", "3"], "--source-brokers"),
    (["--topology", "fan-out", "--worker", "image"], "--worker"),
    (["--topology", "fan-out", "--source-kafka", "2.8.2"], "--source-kafka"),
])
def test_a_shape_option_beside_a_topology_is_one_line_exit_2_before_anything_starts(capsys, args, named):
    assert run_cli(cli, ["rehearse", *args], "msk-migrate") == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and named in err[0] and "Traceback" not in err[0], err


@pytest.mark.parametrize("topology", sorted(TOPOLOGIES))
def test_every_topology_plans_its_flows_on_workers_of_their_own_and_ends_in_a_proof(topology):
    make_flows, plan = TOPOLOGIES[topology]
    flows = make_flows(1)
    assert len(flows) == 2
    workers = [f.flow_worker for f in flows.values()]
    assert workers.count(None) == 1 and len(set(workers)) == 2, "one flow on the pair's worker, the other on its own"
    names = [n for n, _ in plan]
    assert names[0] == "environment up" and len(names) == len(set(names))
    assert any("validate" in n for n in names) and any("check" in n or "refused" in n for n in names)
    assert len({f.spec.name for f in flows.values()}) == 2, "distinct connector names and MM2 topics"
