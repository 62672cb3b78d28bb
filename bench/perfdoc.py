"""Write a benchmark's figures into docs/PERFORMANCE.md under its own `## <title>` section,
with the machine and the exact command that produced them."""

from __future__ import annotations

import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "PERFORMANCE.md"
HEADER = ("# Performance\n\nFigures written by the benchmarks in `bench/` (never by hand). Each section names the "
          "machine and the command that produced it; rerun the command to refresh it.\n")


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{mem_kb / 1024 / 1024:.0f} GiB"
    except OSError:
        mem = "?"
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return f"{os.cpu_count()} cores ({cpu}), {mem} RAM, {platform.system()} {platform.release()}, Python {platform.python_version()}, {java}"


def write_section(title: str, body: str) -> None:
    text = DOC.read_text() if DOC.exists() else HEADER
    # the harness sizes set in the environment are part of the command (rerunning without them differs)
    sizes = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("MSK_MIGRATE_LOCAL_")]
    cmd = " ".join([*sizes, "python", shlex.join(sys.argv)])
    section = (f"## {title}\n\n- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n- machine: {machine()}\n"
               f"- command: `{cmd}`\n\n{body.strip()}\n\n")
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.M | re.S)
    text = pattern.sub(lambda _m: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text.rstrip() + "\n")
