"""prometheus/entrypoint.sh and the proof follower's scrape job: MM2_PROOF_DNS_NAME (the stack's Cloud Map name of
the follower service) is rendered into the job's DNS discovery and promtool accepts the result; a value that is not
a DNS name stops the entrypoint with one line before anything is written."""

from __future__ import annotations

import os
import subprocess

import yaml

from .promql import PROM_DIR


def _run(tmp_path, promtool: str, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "prometheus.yml").write_text((PROM_DIR / "prometheus.yml").read_text())
    (tmp_path / "rules").mkdir(exist_ok=True)
    base = {"PATH": os.environ["PATH"], "PROMTOOL_BIN": promtool, "PROMETHEUS_BIN": "/bin/true",
            "PROMETHEUS_RENDERED_CONFIG": str(tmp_path / "rendered.yml"), "MM2_PROMETHEUS_WEB_AUTH": "none"}
    return subprocess.run(["sh", str(PROM_DIR / "entrypoint.sh"), f"--config.file={tmp_path / 'prometheus.yml'}"],
                          env={**base, **env}, capture_output=True, text=True, timeout=60)


def _proof_names(rendered) -> list[str]:
    jobs = {j["job_name"]: j for j in yaml.safe_load(rendered.read_text())["scrape_configs"]}
    (job,) = [j for name, j in jobs.items() if "proof" in name]
    return [n for sd in job["dns_sd_configs"] for n in sd["names"]]


def test_the_follower_services_cloud_map_name_is_rendered_into_the_proof_job(tmp_path, promtool):
    r = _run(tmp_path, promtool, MM2_PROOF_DNS_NAME="proof.msk-migrate-prod.internal")
    assert r.returncode == 0, r.stderr
    assert _proof_names(tmp_path / "rendered.yml") == ["proof.msk-migrate-prod.internal"]


def test_without_the_variable_the_template_name_stays(tmp_path, promtool):
    r = _run(tmp_path, promtool)
    assert r.returncode == 0, r.stderr
    assert _proof_names(tmp_path / "rendered.yml") == ["proof.msk-migrate.internal"]


def test_a_proof_name_that_is_not_a_dns_name_is_one_line_exit_2(tmp_path, promtool):
    r = _run(tmp_path, promtool, MM2_PROOF_DNS_NAME="proof;rm -rf /")
    assert r.returncode == 2 and "MM2_PROOF_DNS_NAME" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "rendered.yml").exists()
