"""A local Prometheus (Debian package, /usr/bin/prometheus) scraping local Connect workers.

The local config is derived from prometheus/prometheus.yml (the ECS one): same job names, same rule
files (prometheus/rules/*.yml, by absolute path), same relabelling; only the discovery differs —
``file_sd_configs`` with the given ``host:port`` targets instead of Cloud Map DNS — and the scrape and
evaluation intervals are short (2s) so a rehearsal or a test sees changes within seconds.

    started = start_prometheus(["127.0.0.1:9404"], data_dir)
    started.url, started.pid      # http://127.0.0.1:<free port>, process id
    set_targets(data_dir, [...])  # change the scraped workers without a restart
    stop_prometheus(started)

Tests that need an alert to fire quickly pass ``rules_for_override="2s"``: the real rule files are
copied into ``data_dir/rules`` with every ``for:`` replaced; expressions, labels and annotations stay
byte-for-byte the rules' own (see docs/monitoring.md, "How the alerts are tested").
"""

from __future__ import annotations

import glob
import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import requests
import yaml

from ..errors import UsageError
from ..paths import PROMETHEUS_DIR
from . import procs
from .procs import ProcRecord, free_port, launch, port_open, stop

ECS_CONFIG = PROMETHEUS_DIR / "prometheus.yml"
CONNECT_JOB = "kafka-connect"
INSTALL_HINT = "install prometheus: scripts/setup-monitoring.sh"
DEFAULT_INTERVAL = "2s"


@dataclass
class PrometheusProcess:
    record: ProcRecord
    port: int
    url: str
    config_file: Path
    data_dir: Path

    @property
    def pid(self) -> int:
        return self.record.pid


def prometheus_binary() -> str:
    """/usr/bin/prometheus (Debian package) or the first `prometheus` on PATH."""
    for candidate in ("/usr/bin/prometheus", shutil.which("prometheus")):
        if candidate and Path(candidate).exists():
            return candidate
    raise UsageError("prometheus", "not found", INSTALL_HINT)


def promtool_binary() -> str:
    for candidate in ("/usr/bin/promtool", shutil.which("promtool")):
        if candidate and Path(candidate).exists():
            return candidate
    raise UsageError("promtool", "not found", INSTALL_HINT)


def _targets_file(data_dir: Path) -> Path:
    return Path(data_dir) / "targets" / f"{CONNECT_JOB}.json"


def set_targets(data_dir: Path, targets: Iterable[str] | Mapping[str, Mapping[str, str]]) -> Path:
    """Write the file_sd target list of the kafka-connect job (Prometheus picks changes up by itself).

    ``targets``: ``["host:port", ...]`` or ``{"host:port": {"label": "value"}, ...}``.
    """
    items: Iterable[tuple[str, Mapping[str, str]]] = (
        targets.items() if isinstance(targets, Mapping) else ((t, {}) for t in targets))
    groups = [{"targets": [t], "labels": dict(labels)} for t, labels in items]
    path = _targets_file(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(groups, indent=2))
    tmp.replace(path)  # atomic: Prometheus never reads a half-written file
    return path


def override_for(rule_files: Iterable[str], out_dir: Path, for_value: str) -> list[str]:
    """Copies of the rule files with every alert's ``for:`` set to ``for_value`` (nothing else changes)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for pattern in rule_files:
        for src in sorted(glob.glob(pattern)):
            doc = yaml.safe_load(Path(src).read_text())
            for group in doc.get("groups", []):
                for rule in group.get("rules", []):
                    if "alert" in rule:
                        rule["for"] = for_value
            dst = out_dir / Path(src).name
            dst.write_text(yaml.safe_dump(doc, sort_keys=False, width=1000))
            written.append(str(dst))
    return written


def local_config(
    data_dir: Path,
    port: int,
    *,
    interval: str = DEFAULT_INTERVAL,
    rules_for_override: str | None = None,
    ecs_config: Path = ECS_CONFIG,
) -> dict:
    """The local config, derived from the ECS config (jobs, rule files, relabelling)."""
    ecs = yaml.safe_load(Path(ecs_config).read_text())
    base = Path(ecs_config).resolve().parent
    rule_files = [str(base / r) if not Path(r).is_absolute() else r for r in ecs.get("rule_files", [])]
    if rules_for_override:
        rule_files = override_for(rule_files, Path(data_dir) / "rules", rules_for_override)
    scrape_configs = []
    for job in ecs["scrape_configs"]:
        job = dict(job)
        job["scrape_interval"] = interval
        job["scrape_timeout"] = interval
        if job["job_name"] == CONNECT_JOB:
            job.pop("dns_sd_configs", None)
            job["file_sd_configs"] = [{"files": [str(_targets_file(data_dir))], "refresh_interval": "5s"}]
        elif job["job_name"] == "prometheus":
            job["static_configs"] = [{"targets": [f"127.0.0.1:{port}"]}]
        scrape_configs.append(job)
    glob_cfg = dict(ecs.get("global", {}))
    glob_cfg.update({"scrape_interval": interval, "scrape_timeout": interval, "evaluation_interval": interval})
    glob_cfg["external_labels"] = {**glob_cfg.get("external_labels", {}), "environment": "local"}
    return {"global": glob_cfg, "rule_files": rule_files, "scrape_configs": scrape_configs}


def write_local_config(data_dir: Path, port: int, **kw) -> Path:
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "prometheus.yml"
    path.write_text(
        "# Generated by msk_migrate.local.prometheus from prometheus/prometheus.yml. Do not edit.\n"
        + yaml.safe_dump(local_config(data_dir, port, **kw), sort_keys=False, width=1000)
    )
    return path


def check_config(config_file: Path) -> None:
    import subprocess

    proc = subprocess.run([promtool_binary(), "check", "config", str(config_file)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"promtool rejected {config_file}:\n{proc.stdout}{proc.stderr}")


def start_prometheus(
    targets: Iterable[str] | Mapping[str, Mapping[str, str]],
    data_dir: Path,
    port: int | None = None,
    *,
    interval: str = DEFAULT_INTERVAL,
    rules_for_override: str | None = None,
    retention: str = "2d",
    timeout: float = 60.0,
) -> PrometheusProcess:
    """Start Prometheus on 127.0.0.1 (``port`` or a free one), scraping ``targets`` as job kafka-connect.

    Returns once /-/ready answers 200. Raises UsageError when Prometheus is not installed.
    """
    binary = prometheus_binary()
    data_dir = Path(data_dir)
    if port is None or port_open(port):
        port = free_port()
    set_targets(data_dir, targets)
    config = write_local_config(data_dir, port, interval=interval, rules_for_override=rules_for_override)
    check_config(config)
    cmd = [
        binary,
        f"--config.file={config}",
        f"--storage.tsdb.path={data_dir / 'tsdb'}",
        f"--storage.tsdb.retention.time={retention}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--web.enable-lifecycle",
        "--log.level=warn",
    ]
    rec = launch("prometheus", cmd, data_dir / "prometheus.log")
    url = f"http://127.0.0.1:{port}"
    started = PrometheusProcess(record=rec, port=port, url=url, config_file=config, data_dir=data_dir)
    try:
        wait_ready(started, timeout)
    except BaseException:
        stop(rec)
        raise
    return started


def wait_ready(started: PrometheusProcess, timeout: float = 60.0) -> None:
    procs.wait_ready(started.record, lambda: requests.get(f"{started.url}/-/ready", timeout=2).status_code == 200,
                     timeout, interval=0.3)


def reload(url: str) -> None:
    """Re-read config and rule files (the server runs with --web.enable-lifecycle)."""
    requests.post(f"{url}/-/reload", timeout=10).raise_for_status()


def stop_prometheus(started: PrometheusProcess | ProcRecord) -> None:
    stop(started.record if isinstance(started, PrometheusProcess) else started)


def query(url: str, promql: str, timeout: float = 10.0) -> list[dict]:
    """Instant query; the result vector (``[{"metric": {...}, "value": [ts, "v"]}, ...]``)."""
    r = requests.get(f"{url}/api/v1/query", params={"query": promql}, timeout=timeout)
    body = r.json()
    if body.get("status") != "success":
        raise RuntimeError(f"query failed: {promql}: {body.get('error', r.text[:300])}")
    return body["data"]["result"]
