"""Where the project lives and where generated artefacts go (never committed)."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository root (python/msk_migrate/paths.py -> ../../).
REPO_ROOT = Path(os.environ.get("MSK_MIGRATE_ROOT", Path(__file__).resolve().parents[2]))

#: Project-local state: cluster data, pid records, logs, caches. Ignored by git.
LOCAL_DIR = Path(os.environ.get("MSK_MIGRATE_LOCAL_DIR", REPO_ROOT / ".local"))

JVM_DIR = REPO_ROOT / "jvm"
IMAGES_DIR = REPO_ROOT / "images"
PROMETHEUS_DIR = REPO_ROOT / "prometheus"
GRAFANA_DIR = REPO_ROOT / "grafana"
CONNECT_ENTRYPOINT = IMAGES_DIR / "kafka-connect" / "entrypoint.sh"
JMX_EXPORTER_RULES = PROMETHEUS_DIR / "jmx-exporter" / "kafka-connect-mm2.yaml"
