"""An environment record's name is validated wherever its path is built (config/recorded.py ``record_path``):
a name the operator task printed (``bring_back_record`` -> ``adopt_record``), or any other, that is not an
environment name is refused with one line naming the field, and nothing is written outside the record directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from msk_migrate.config import recorded
from msk_migrate.config.identifiers import check_env_name
from msk_migrate.errors import UsageError

pytestmark = pytest.mark.unit

#: "/abs" stands for an absolute path: the test makes it one under its own tmp_path (outside the record directory),
#: so the old code, which wrote ``/abs.json``, fails the test without writing to the machine's root.
BAD_NAMES = ["../x", "/abs", "a/b", "..", "", "a" * 300, "dev/../../x", "dev\n", "Dev", "dev.json", "./dev", "d\\ev"]
RECORD = {"environment": "ignored", "target_cluster_id": "MSKclusterId0000000001", "target_bootstrap": "b-1:9098"}


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "deep" / "recorded"
    monkeypatch.setenv(recorded.RECORD_DIR_ENV, str(base))
    return base


def _everything_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.parametrize("name", BAD_NAMES, ids=lambda n: repr(n)[:20])
def test_a_record_name_from_the_task_that_is_not_an_environment_name_is_refused_and_nothing_is_written(
    records: Path, tmp_path: Path, name: str
) -> None:
    if name == "/abs":
        name = str(tmp_path / "abs")
    before = _everything_under(tmp_path)
    with pytest.raises(UsageError) as err:
        recorded.adopt_record(name, dict(RECORD))
    assert _everything_under(tmp_path) == before, "nothing written, not even the record directory"
    text = str(err.value)
    assert "\n" not in text and len(text) < 300, text
    assert err.value.field.startswith("environment") and "not an environment name" in text


@pytest.mark.parametrize("name", BAD_NAMES, ids=lambda n: repr(n)[:20])
def test_every_record_path_is_built_through_the_same_check(records: Path, tmp_path: Path, name: str) -> None:
    if name == "/abs":
        name = str(tmp_path / "abs")
    for call in (lambda: recorded.record_path(name), lambda: recorded.load_record(name),
                 lambda: recorded.save_record(name, target_cluster_id="x")):
        with pytest.raises(UsageError) as err:
            call()
        assert err.value.field == "environment"
    assert not records.exists()


@pytest.mark.parametrize("name", ["dev", "prod-eu", "a", "a" * 20, "msk-scram", "x1-2"])
def test_environment_names_still_make_records_inside_the_record_directory(records: Path, name: str) -> None:
    check_env_name(name)  # the environment model accepts exactly these
    path = recorded.adopt_record(name, dict(RECORD))
    assert path == records / f"{name}.json" and path.resolve().parent == records.resolve()
    assert recorded.load_record(name)["environment"] == name
    assert recorded.adopt_record(name, dict(RECORD)) is None, "an existing record wins"


def test_the_rule_is_the_environment_models(records: Path) -> None:
    """Whatever the model refuses, the record refuses (the shared ENV_NAME pattern), and the reverse."""
    for name in ["dev", "a" * 21, "-dev", "dev-", "de--v", "1dev", "dev_1", "DEV", "dev\n"]:
        try:
            check_env_name(name)
            model_ok = True
        except ValueError:
            model_ok = False
        try:
            recorded.record_path(name)
            record_ok = True
        except UsageError:
            record_ok = False
        assert model_ok == record_ok, name


def test_a_stray_file_in_the_record_directory_is_not_read_as_a_record(records: Path) -> None:
    records.mkdir(parents=True)
    (records / "Not A Name.json").write_text('{"target_cluster_id": "x"}')
    recorded.save_record("dev", target_cluster_id="MSKclusterId0000000001")
    assert set(recorded.all_records()) == {"dev"}
