"""Shared helpers and fixtures of the infra tests (conftest.py re-exports the fixtures).

The CDKTF app is synthesized once per session (jsii start-up and the AWS provider bindings take
~20 s): every shipped environment (infra/environments) plus the test variants beside this file
(tests/infra/environments), with a build manifest that pins the dev images by digest.
Terraform is required (1.11.x); the AWS provider 5.100.0 comes from a local filesystem mirror
(``MSK_MIGRATE_TF_PLUGIN_MIRROR``, default /opt/tf-plugins) when present, else from the registry.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from msk_migrate.config.environment import EnvironmentConfig, load_environment

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"
MAIN = INFRA / "main.py"
SHIPPED_DIR = INFRA / "environments"
VARIANTS_DIR = Path(__file__).resolve().parent / "environments"
SHIPPED = sorted(p.stem for p in SHIPPED_DIR.glob("*.yaml"))
VARIANTS = sorted(p.stem for p in VARIANTS_DIR.glob("*.yaml"))
ALL_ENVS = SHIPPED + VARIANTS
AWS_PROVIDER_VERSION = "5.100.0"

if str(INFRA) not in sys.path:
    sys.path.insert(0, str(INFRA))  # mskinfra (pure helpers import without jsii)

#: Digests the session's build manifest pins for the dev environment.
DEV_DIGESTS = {
    "kafka-connect": "sha256:" + "a" * 64,
    "prometheus": "sha256:" + "b" * 64,
    "grafana": "sha256:" + "c" * 64,
    "operator": "sha256:" + "e" * 64,
}


def run_main(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(MAIN), *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass
class Synth:
    outdir: Path
    state_dir: Path
    build_dir: Path
    stacks: dict[str, dict] = field(default_factory=dict)  # env name -> cdk.tf.json of migration-<env>
    target_stacks: dict[str, dict] = field(default_factory=dict)  # env name -> cdk.tf.json of target-<env>
    configs: dict[str, EnvironmentConfig] = field(default_factory=dict)
    seconds: float = 0.0

    def stack_dir(self, env: str) -> Path:
        return self.outdir / "stacks" / f"migration-{env}"

    def target_stack_dir(self, env: str) -> Path:
        return self.outdir / "stacks" / f"target-{env}"

    def resources(self, env: str, rtype: str) -> dict[str, dict]:
        """Every ``rtype`` resource of the environment, across migration-<env> and target-<env>."""
        found = dict(self.stacks[env].get("resource", {}).get(rtype, {}))
        found.update(self.target_stacks.get(env, {}).get("resource", {}).get(rtype, {}))
        return found

    def data(self, env: str, dtype: str) -> dict[str, dict]:
        return self.stacks[env].get("data", {}).get(dtype, {})

    def one(self, env: str, rtype: str) -> dict:
        found = self.resources(env, rtype)
        assert len(found) == 1, f"{env}: expected one {rtype}, got {sorted(found)}"
        return next(iter(found.values()))


def write_manifest(build_dir: Path, cfg: EnvironmentConfig, digests: dict[str, str], tag: str = "0.1.0") -> Path:
    build_dir.mkdir(parents=True, exist_ok=True)
    registry = f"{cfg.account_id}.dkr.ecr.{cfg.region}.amazonaws.com"
    images = {
        c: {"uri": f"{registry}/{repo}:{tag}", "digest": digests[c], "tag": tag, "pushed_at": "2026-01-01T00:00:00Z"}
        for c, repo in cfg.ecr_repository_names().items()
    }
    path = build_dir / f"manifest-{cfg.account_id}-{cfg.region}.json"
    path.write_text(json.dumps({"account": cfg.account_id, "region": cfg.region, "images": images, "builder": "test"}))
    return path


def env_config(name: str) -> EnvironmentConfig:
    path = SHIPPED_DIR / f"{name}.yaml"
    return load_environment(path if path.exists() else VARIANTS_DIR / f"{name}.yaml")


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    import time

    root = tmp_path_factory.mktemp("synth")
    s = Synth(outdir=root / "cdktf.out", state_dir=root / "state", build_dir=root / "build")
    s.configs = {name: env_config(name) for name in ALL_ENVS}
    write_manifest(s.build_dir, s.configs["dev"], DEV_DIGESTS)
    started = time.monotonic()
    proc = run_main(
        "--environments", str(SHIPPED_DIR),
        "--environments", str(VARIANTS_DIR),
        "--outdir", str(s.outdir),
        "--build-dir", str(s.build_dir),
        "--state-dir", str(s.state_dir),
    )
    s.seconds = time.monotonic() - started
    assert proc.returncode == 0, f"synth failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
    manifest = json.loads((s.outdir / "manifest.json").read_text())
    for stack in manifest["stacks"].values():
        doc = json.loads((s.outdir / stack["synthesizedStackPath"]).read_text())
        if stack["name"].startswith("target-"):
            s.target_stacks[stack["name"].removeprefix("target-")] = doc
        else:
            s.stacks[stack["name"].removeprefix("migration-")] = doc
    return s


@pytest.fixture(scope="session")
def terraform_bin() -> str:
    path = shutil.which("terraform")
    if not path:
        pytest.fail(
            "terraform not found on PATH: install Terraform 1.11.x "
            "(https://developer.hashicorp.com/terraform/install); the infra tests require it"
        )
    out = subprocess.run([path, "version", "-json"], capture_output=True, text=True, timeout=60).stdout
    version = json.loads(out)["terraform_version"]
    major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", version).groups())
    if (major, minor) < (1, 10):
        pytest.fail(f"terraform {version} is too old: install Terraform 1.11.x")
    return path


@pytest.fixture(scope="session")
def terraform_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for terraform: a CLI config using the local provider mirror when there is one."""
    return terraform_cli_env(tmp_path_factory.mktemp("terraform"))


def terraform_cli_env(root: Path) -> dict[str, str]:
    """This process's environment without AWS_*/TF_*, plus a terraform CLI config in ``root`` that takes
    the AWS provider from the local mirror when there is one (else the registry, cached in .local/)."""
    mirror = Path(os.environ.get("MSK_MIGRATE_TF_PLUGIN_MIRROR", "/opt/tf-plugins"))
    if (mirror / "registry.terraform.io" / "hashicorp" / "aws" / AWS_PROVIDER_VERSION).is_dir():
        config = f"""
provider_installation {{
  filesystem_mirror {{
    path    = "{mirror}"
    include = ["registry.terraform.io/hashicorp/aws"]
  }}
  direct {{
    exclude = ["registry.terraform.io/hashicorp/aws"]
  }}
}}
"""
    else:  # no mirror: the public registry, cached in .local/
        cache = REPO / ".local" / "terraform-plugin-cache"
        cache.mkdir(parents=True, exist_ok=True)
        config = f'plugin_cache_dir = "{cache}"\n'
    rc = root / "terraformrc"
    rc.write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TF_"))}
    env.update({"TF_CLI_CONFIG_FILE": str(rc), "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"})
    return env


def terraform(terraform_bin: str, env: dict[str, str], stack_dir: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [terraform_bin, f"-chdir={stack_dir}", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def moto_endpoint():
    """moto's server on a free 127.0.0.1 port, one per test module."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()
