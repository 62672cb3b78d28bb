#!/usr/bin/env python3
"""./build_images.py ACCOUNT REGION [options]: build the linux/amd64 images, push them to the ECR
repositories the stacks created, and write build/manifest-ACCOUNT-REGION.json.

Thin wrapper over msk_migrate.imagebuild (also `msk-migrate build-images`). See docs/images.md.
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "python"))

try:
    from msk_migrate.commands.build_images import main
except ImportError as exc:  # run with a Python that lacks the project's dependencies
    venv = ROOT / ".venv"
    venv_python = venv / "bin" / "python"
    if venv_python.exists() and Path(sys.prefix).resolve() != venv.resolve() and not os.environ.get("MSK_MIGRATE_NO_REEXEC"):
        os.environ["MSK_MIGRATE_NO_REEXEC"] = "1"
        os.execv(str(venv_python), [str(venv_python), str(Path(__file__).resolve()), *sys.argv[1:]])
    sys.stderr.write(f"error: {exc.name or exc} is not installed (fix: run `make setup`, or use .venv/bin/python)\n")
    sys.exit(2)

if __name__ == "__main__":
    main()
