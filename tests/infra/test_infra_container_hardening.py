"""Container definitions, checked where checkov cannot look.

checkov's CKV_AWS_336 ("read-only root filesystem") passed while no container set it: it reads the
``container_definitions`` string only when it is literal JSON, and CDKTF writes it with Terraform
escapes. These tests parse every synthesized task definition themselves and require, for each
container: a read-only root filesystem, a writable volume for exactly the paths its image writes
(mskinfra.ecs.WRITABLE_PATHS, cross-checked against the images' own files), ``ALL`` capabilities
dropped and none added.
"""

from __future__ import annotations

import json
import re

import pytest
from infra_helpers import ALL_ENVS, REPO, Synth

from mskinfra.ecs import READ_ONLY_MOUNTS, SERVING_CERT, SERVING_CERT_VOLUME, WRITABLE_PATHS, volume_name
from mskinfra.tfjson import unescape_template


def task_containers(synth: Synth, env: str) -> list[tuple[dict, dict]]:
    out = []
    for td in synth.resources(env, "aws_ecs_task_definition").values():
        for c in json.loads(unescape_template(td["container_definitions"])):
            out.append((td, c))
    return out


def hardening_problems(task: dict, container: dict, writable: tuple[str, ...], read_only: tuple[str, ...] = (),
                       others: list[dict] = ()) -> list[str]:
    """What is wrong with one container definition (empty = hardened). ``read_only``: paths it may mount
    read-only (a volume another container of the task writes); ``others``: the task's other containers."""
    name = container.get("name", "?")
    problems = []
    if container.get("readonlyRootFilesystem") is not True:
        problems.append(f"{name}: readonlyRootFilesystem is not true")
    if container.get("privileged"):
        problems.append(f"{name}: privileged")
    caps = (container.get("linuxParameters") or {}).get("capabilities") or {}
    if caps.get("drop") != ["ALL"]:
        problems.append(f"{name}: capabilities.drop is {caps.get('drop')!r}, not ['ALL']")
    if caps.get("add"):
        problems.append(f"{name}: capabilities added: {caps['add']}")
    all_mounts = container.get("mountPoints") or []
    mounts = [m for m in all_mounts if m["containerPath"] not in read_only]
    paths = sorted(m["containerPath"] for m in mounts)
    if paths != sorted(writable):
        problems.append(f"{name}: writable paths {paths} != the paths its image writes {sorted(writable)}")
    for m in all_mounts:
        if m["containerPath"] in read_only and m.get("readOnly") is not True:
            problems.append(f"{name}: {m['containerPath']} must be mounted read-only")
    volumes = {v["name"]: v for v in task.get("volume") or []}
    for m in mounts:
        if m.get("readOnly") is not False:
            problems.append(f"{name}: {m['containerPath']} must be an explicitly writable mount")
        v = volumes.get(m["sourceVolume"])
        if v is None:
            problems.append(f"{name}: mount {m['containerPath']} names no task volume")
        elif set(v) - {"name"}:
            problems.append(f"{name}: volume {v['name']} is not task-local ephemeral storage: {v}")
    used = {m["sourceVolume"] for c in [container, *others] for m in c.get("mountPoints") or []}
    if set(volumes) - used:
        problems.append(f"{name}: unused task volumes {sorted(set(volumes) - used)}")
    return problems


@pytest.mark.parametrize("env", ALL_ENVS)
def test_every_container_has_a_read_only_root_writable_volumes_for_its_paths_and_no_capabilities(synth: Synth, env: str) -> None:
    seen = set()
    problems = []
    for td, c in task_containers(synth, env):
        seen.add(c["name"])
        others = [o for t, o in task_containers(synth, env) if t["family"] == td["family"] and o["name"] != c["name"]]
        problems += hardening_problems(td, c, WRITABLE_PATHS[c["name"]], READ_ONLY_MOUNTS.get(c["name"], ()), others)
    # the proof follower's container exists where the environment runs the follower (proof.follower)
    assert seen == set(WRITABLE_PATHS) - (set() if synth.configs[env].proof.follower else {"proof-follower"})
    assert not problems, "\n".join(problems)


def test_the_check_rejects_what_checkov_let_through() -> None:
    """The container definition as it was before issue 11 fails the check; the hardened one passes."""
    before = {"name": "kafka-connect", "image": "x", "essential": True}
    task = {"volume": []}
    found = hardening_problems(task, before, ("/tmp",))
    assert any("readonlyRootFilesystem" in p for p in found)
    assert any("capabilities.drop" in p for p in found)
    assert any("writable paths" in p for p in found)
    after = {
        **before,
        "readonlyRootFilesystem": True,
        "mountPoints": [{"sourceVolume": "tmp", "containerPath": "/tmp", "readOnly": False}],
        "linuxParameters": {"capabilities": {"drop": ["ALL"], "add": []}},
    }
    assert hardening_problems({"volume": [{"name": "tmp"}]}, after, ("/tmp",)) == []
    # A writable path the image does not need is refused too (exactly the paths, not more).
    extra = {**after, "mountPoints": after["mountPoints"] + [{"sourceVolume": "opt", "containerPath": "/opt", "readOnly": False}]}
    assert any("writable paths" in p for p in hardening_problems({"volume": [{"name": "tmp"}, {"name": "opt"}]}, extra, ("/tmp",)))
    added = {**after, "linuxParameters": {"capabilities": {"drop": ["ALL"], "add": ["SYS_PTRACE"]}}}
    assert any("added" in p for p in hardening_problems({"volume": [{"name": "tmp"}]}, added, ("/tmp",)))


def test_writable_paths_are_the_paths_the_images_write() -> None:
    """Each image's own files name the directories it writes; the table must cover them exactly."""
    connect_entry = (REPO / "images" / "kafka-connect" / "entrypoint.sh").read_text()
    config_dir = re.search(r'CONFIG_DIR="\$\{CONNECT_CONFIG_DIR:-([^}]+)\}"', connect_entry).group(1)
    assert config_dir.startswith("/tmp/") and WRITABLE_PATHS["kafka-connect"] == ("/tmp",)

    prom_docker = (REPO / "images" / "prometheus" / "Dockerfile").read_text()
    tsdb = re.search(r'--storage\.tsdb\.path=([^"\s]+)"', prom_docker).group(1)
    prom_entry = (REPO / "prometheus" / "entrypoint.sh").read_text()
    assert 'OUT="/tmp/prometheus.rendered.yml"' in prom_entry  # /etc/prometheus is read-only: renders into /tmp
    assert set(WRITABLE_PATHS["prometheus"]) == {tsdb, "/tmp"}

    grafana_docker = (REPO / "images" / "grafana" / "Dockerfile").read_text()
    data = re.search(r"GF_PATHS_DATA=(\S+)", grafana_docker)
    # Grafana's image default data path (GF_PATHS_DATA of grafana/grafana), unless our Dockerfile moves it.
    assert set(WRITABLE_PATHS["grafana"]) == {data.group(1) if data else "/var/lib/grafana", "/tmp"}


@pytest.mark.parametrize("env", ALL_ENVS)
def test_task_volumes_are_named_after_their_paths(synth: Synth, env: str) -> None:
    for td, c in task_containers(synth, env):
        if c["name"] == SERVING_CERT:
            continue  # its /tmp is the shared serving-cert volume, checked below
        certified = any(m["sourceVolume"] == SERVING_CERT_VOLUME for m in c.get("mountPoints") or [])
        assert [v["name"] for v in td["volume"]] == [volume_name(p) for p in WRITABLE_PATHS[c["name"]]] + (
            [SERVING_CERT_VOLUME] if certified else [])
