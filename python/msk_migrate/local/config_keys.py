"""Regenerates ``config/kafka_config_keys.json`` (the key tables :mod:`msk_migrate.config.overrides` reads)
from the ConfigDefs of the Kafka jars on the local Connect classpath (needs java + Maven).

A developer tool, run after a Kafka bump: ``python -m msk_migrate.local.config_keys``. It lives beside
the classpath it reads, so ``config`` never imports ``local``.
"""

from __future__ import annotations

import json
import subprocess

from ..config.overrides import KEYS_FILE
from .classpath import classpath


def regenerate() -> dict:
    """The key tables from the Connect classpath's jars."""
    return json.loads(regenerate_text())


def regenerate_text() -> str:
    """The key tables exactly as ConfigKeys prints them (the committed file's format)."""
    proc = subprocess.run(["java", "-cp", classpath("connect"), "io.mskmigrate.connect.ConfigKeys"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"ConfigKeys failed: {proc.stderr[-2000:]}")
    return proc.stdout


if __name__ == "__main__":
    KEYS_FILE.write_text(regenerate_text())
    print(f"wrote {KEYS_FILE}")
