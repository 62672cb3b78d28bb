"""docs/infra.md's environment field tables are generated from the pydantic Field definitions and
must equal what the generator produces now (the way terraform-docs checks a module's inputs)."""

from __future__ import annotations

import pytest
from infra_helpers import REPO
from pydantic import Field, create_model

from msk_migrate.config.environment import EcrConfig, EnvironmentConfig, docs

DOC = REPO / "docs" / "infra.md"


def test_every_environment_field_has_a_description() -> None:
    assert docs.undocumented(EnvironmentConfig) == []


def test_docs_tables_equal_the_generated_ones() -> None:
    text = DOC.read_text()
    assert set(docs.sections_in(text)) == set(docs.SECTIONS), "every model has one table in docs/infra.md"
    assert docs.render(text) == text, (
        "docs/infra.md's field tables are stale: .venv/bin/python -m msk_migrate.config.environment.docs --write docs/infra.md"
    )


def test_a_changed_field_description_makes_the_docs_stale() -> None:
    text = DOC.read_text()
    changed = create_model("EcrConfig", __base__=EcrConfig, keep_images=(int, Field(30, description="Changed wording.")))
    original = docs.SECTIONS["ecr"]
    docs.SECTIONS["ecr"] = changed
    try:
        rendered = docs.render(text)
    finally:
        docs.SECTIONS["ecr"] = original
    assert rendered != text and "Changed wording." in rendered


def test_the_check_command_reports_stale_tables(tmp_path, capsys) -> None:
    stale = tmp_path / "infra.md"
    stale.write_text(DOC.read_text().replace("| `keep_images` |", "| `keep_imagez` |"))
    assert docs.main(["--check", str(stale)]) == 1 and "stale" in capsys.readouterr().err
    assert docs.main(["--check", str(DOC)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("section", ["top", "target.create", "operator_access"])
def test_generated_tables_name_defaults_and_bounds(section: str) -> None:
    table = docs.table(docs.SECTIONS[section])
    if section == "top":
        assert "| `account_id` | string | **required** |" in table
    if section == "target.create":
        assert "| `broker_count` | integer, 3–60 | `3` |" in table
    if section == "operator_access":
        assert "| `allow_wide_cidrs` | boolean | `false` |" in table
