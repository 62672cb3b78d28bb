"""Print the part of the hashed ``requirements.lock`` the operator CLI needs at run time (no extras).

The lock pins every package of the laptop's .venv (Spark, cdktf, the dev tools) with the sha256 of each file
PyPI serves. The image wants only the CLI's own closure, still hash-checked: pip resolves the project against
the lock's versions (``--dry-run --report``, metadata only), and the pins of exactly the packages it would install
are printed with their hashes, for ``pip install --require-hashes --no-deps -r``. The project's metadata is built
by the hash-checked backend already in this venv (``--no-build-isolation``: requirements-build.lock, installed
first), never by one pip downloads into an isolated environment. A package the resolution wants
that the lock does not pin stops the build (the lock is the one source of versions).

Usage (in the image's build stage): ``python3 lock_subset.py requirements.lock /src > runtime.lock``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s\\;]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_blocks(lock: Path) -> dict[str, tuple[str, str]]:
    """canonical name -> (``name==version``, the pin's whole block with its ``--hash`` lines)."""
    blocks: dict[str, tuple[str, str]] = {}
    current: str | None = None
    for line in lock.read_text().splitlines():
        m = PIN.match(line)
        if m:
            current = canonical(m["name"])
            blocks[current] = (f"{m['name']}=={m['version']}", line)
        elif current and line.startswith((" ", "\t")):
            pin, text = blocks[current]
            blocks[current] = (pin, text + "\n" + line)
    return blocks


def main(lock: Path, project: str) -> int:
    blocks = pinned_blocks(lock)
    with tempfile.TemporaryDirectory() as tmp:
        pins, report = Path(tmp, "pins.txt"), Path(tmp, "report.json")
        pins.write_text("\n".join(pin for pin, _ in blocks.values()) + "\n")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed",
                        "--no-build-isolation", "--report", str(report), "-c", str(pins), project], check=True, stdout=sys.stderr)
        wanted = [canonical(item["metadata"]["name"]) for item in json.loads(report.read_text())["install"]]
    project_name = canonical(next(item for item in wanted if item == "msk-migrate")) if "msk-migrate" in wanted else None
    missing = sorted(n for n in wanted if n != project_name and n not in blocks)
    if missing:
        print(f"lock_subset: not pinned in {lock}: {', '.join(missing)} (add them and run scripts/lock_hashes.py)", file=sys.stderr)
        return 1
    print("\n".join(blocks[n][1] for n in sorted(wanted) if n != project_name))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
