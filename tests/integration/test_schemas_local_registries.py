"""`local up --schema-registry`: one registry per side recorded in the local state, shown by status, stopped
by down, and no record outliving its process across up/down sequences."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from click.testing import CliRunner

from msk_migrate.commands.local import local
from msk_migrate.local.harness import LocalEnvironment


def _subjects(url: str) -> list[str]:
    with urllib.request.urlopen(url + "/subjects", timeout=5) as resp:
        return json.load(resp)


def test_up_with_schema_registry_records_both_registries_and_down_forgets_them(tmp_path: Path) -> None:
    base = tmp_path / "env"
    env = LocalEnvironment(base, with_connect=False, with_schema_registry=True)
    try:
        status = env.up()
        urls = env.registry_urls()
        assert set(urls) == {"source", "target"} and urls["source"] != urls["target"]
        for role in ("source", "target"):
            assert status[f"{role}_registry"]["running"] and status[f"{role}_registry"]["url"] == urls[role]
            assert _subjects(urls[role]) == []
        assert status["running"]

        shown = CliRunner().invoke(local, ["status", "--dir", str(base), "--output", "json"])
        assert shown.exit_code == 0, shown.output
        doc = json.loads(shown.output)
        assert doc["source_registry"]["url"] == urls["source"] and doc["target_registry"]["url"] == urls["target"]

        # `schemas ... --local` finds them through the recorded state
        body = json.dumps({"schema": '{"type":"string"}'}).encode()
        req = urllib.request.Request(urls["source"] + "/subjects/local-demo-value/versions", data=body, method="POST",
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            schema_id = json.load(resp)["id"]
        for step, code in (("verify", 1), ("copy", 0), ("verify", 0)):
            ran = subprocess.run([sys.executable, "-m", "msk_migrate.commands", "schemas", step, "--local", "--local-dir", str(base),
                                  "--output", "json"], capture_output=True, text=True, timeout=120)
            assert ran.returncode == code, (step, ran.stdout, ran.stderr)
            assert json.loads(ran.stdout)["talked_to"]["target_registry"] == urls["target"]
        with urllib.request.urlopen(urls["target"] + "/subjects/local-demo-value/versions/1", timeout=10) as resp:
            assert json.load(resp)["id"] == schema_id

        # a lab flow file beside the local worker (`lag`/`cutover check --config F --local`): the file names the
        # registries (or none); the local environment's registries do not compete with it
        from msk_migrate.commands.schemas import registries_from_options

        st = env.status()
        flow = {"source": {"alias": "source", "bootstrap_servers": st["source"]["bootstrap_servers"]},
                "target": {"alias": "target", "bootstrap_servers": st["target"]["bootstrap_servers"]},
                "migration": {"name": "lab", "topics": ["lab-.*"]}}
        bare, named = tmp_path / "bare.yaml", tmp_path / "named.yaml"
        bare.write_text(json.dumps(flow))
        named.write_text(json.dumps({**flow, "schema_registry": {"source": urls["target"], "target": urls["source"]}}))
        kw = {"config": bare, "local": True, "local_dir": base}
        assert registries_from_options(kw) is None
        regs = registries_from_options({**kw, "config": named})
        assert regs is not None and regs.urls() == {"source": urls["target"], "target": urls["source"]}  # the file's, not the environment's

        stopped = env.down()
        assert {"source-registry", "target-registry"} <= set(stopped)
        assert env.state().registries == {} and env.registry_urls() == {}

        # up without the option: clusters only, no stale registry row, the environment counts as running
        plain = LocalEnvironment(base, with_connect=False).up()
        assert "source_registry" not in plain and "target_registry" not in plain and plain["running"]
        # asked again: both registries start again and are recorded
        again = LocalEnvironment(base, with_connect=False, with_schema_registry=True).up()
        assert again["source_registry"]["running"] and again["target_registry"]["running"]
    finally:
        LocalEnvironment(base).down(wipe=True)
