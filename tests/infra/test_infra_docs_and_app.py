"""The app entry (cdktf.json) and the documentation of every environment input."""

from __future__ import annotations

import json
import re

from infra_helpers import REPO
from pydantic import BaseModel

from msk_migrate.config.environment import EnvironmentConfig

DOC = REPO / "docs" / "infra.md"


def _fields(model: type[BaseModel], seen: set[type] | None = None) -> set[str]:
    seen = seen or set()
    if model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, info in model.model_fields.items():
        names.add(name)
        for arg in (*getattr(info.annotation, "__args__", ()), info.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                names |= _fields(arg, seen)
    return names


def test_every_environment_field_is_documented() -> None:
    doc = DOC.read_text()
    missing = sorted(f for f in _fields(EnvironmentConfig) if not re.search(r"`[^`\n]*\b" + re.escape(f) + r"\b[^`\n]*`", doc))
    assert not missing, f"document these fields in docs/infra.md: {missing}"


def test_cdktf_json_runs_the_python_app() -> None:
    cfg = json.loads((REPO / "cdktf.json").read_text())
    assert cfg["language"] == "python"
    assert cfg["app"].split()[-1] == "infra/main.py" and (REPO / cfg["app"].split()[-1]).is_file()
    assert cfg["terraformProviders"] == [], "the prebuilt provider package is used; nothing to generate"
    assert cfg.get("output", "cdktf.out") == "cdktf.out"


def test_docs_describe_the_plain_terraform_path_and_the_deploy_runbook() -> None:
    doc = DOC.read_text()
    assert "terraform -chdir=cdktf.out/stacks/migration-" in doc and "npx cdktf deploy migration-dev" in doc
    runbook = (REPO / "docs" / "runbooks" / "deploy.md").read_text()
    assert "build_images.py" in runbook and "grafana_admin_secret_arn" in runbook
