"""Images: pinned by digest from build_images.py's manifest, else the environment's tag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from infra_helpers import env_config, write_manifest

from msk_migrate.errors import UsageError
from mskinfra.images import choose_images, manifest_path

DIGESTS = {"kafka-connect": "sha256:" + "1" * 64, "prometheus": "sha256:" + "2" * 64, "grafana": "sha256:" + "3" * 64, "operator": "sha256:" + "4" * 64}


def test_without_manifest_every_image_uses_the_configured_tag(tmp_path: Path) -> None:
    cfg = env_config("dev")
    chosen = choose_images(cfg, tmp_path)
    assert {c: i.reference("REPO") for c, i in chosen.items()} == {c: "REPO:0.1.0" for c in DIGESTS}


def test_manifest_pins_every_image_by_digest(tmp_path: Path) -> None:
    cfg = env_config("dev")
    write_manifest(tmp_path, cfg, DIGESTS, tag="build-42")
    chosen = choose_images(cfg, tmp_path)
    assert {c: i.reference("REPO") for c, i in chosen.items()} == {c: f"REPO@{d}" for c, d in DIGESTS.items()}
    assert all(i.source == "manifest" and i.tag == "build-42" for i in chosen.values())


def test_manifest_entry_without_digest_falls_back_to_its_tag_with_a_warning(tmp_path: Path, capsys) -> None:
    cfg = env_config("dev")
    path = write_manifest(tmp_path, cfg, DIGESTS, tag="build-42")
    data = json.loads(path.read_text())
    del data["images"]["grafana"]["digest"]
    del data["images"]["prometheus"]
    path.write_text(json.dumps(data))
    chosen = choose_images(cfg, tmp_path)
    assert chosen["grafana"].reference("R") == "R:build-42"
    assert chosen["prometheus"].reference("R") == "R:0.1.0"
    assert chosen["kafka-connect"].reference("R") == f"R@{DIGESTS['kafka-connect']}"
    assert "no digest" in capsys.readouterr().err


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda d: d.update(region="us-east-1"), "region"),
        (lambda d: d["images"]["kafka-connect"].update(digest="sha256:short"), "images.kafka-connect.digest"),
        (lambda d: d["images"]["grafana"].update(uri="111111111111.dkr.ecr.eu-west-1.amazonaws.com/other-grafana:1"), "images.grafana.uri"),
    ],
    ids=["other region", "malformed digest", "other repository"],
)
def test_manifest_that_contradicts_the_environment_is_a_usage_error(tmp_path: Path, mutate, field: str) -> None:
    cfg = env_config("dev")
    path = write_manifest(tmp_path, cfg, DIGESTS)
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match=field.replace(".", r"\.")):
        choose_images(cfg, tmp_path)


def test_unreadable_manifest_is_a_usage_error(tmp_path: Path) -> None:
    cfg = env_config("dev")
    manifest_path(tmp_path, cfg).write_text("{not json")
    with pytest.raises(UsageError, match="not a readable JSON manifest"):
        choose_images(cfg, tmp_path)
