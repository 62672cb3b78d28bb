"""Environment fields of this issue: the operator endpoints' DNS name (must sit inside its zone) and the
broker type of an existing target cluster (what preflight's partition-limit check reads)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from msk_migrate.config.environment import load_environment
from msk_migrate.config.environment_files import environment_path
from msk_migrate.errors import UsageError

DEV = environment_path("dev")


def _variant(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load(DEV.read_text())
    edit(data)
    path = tmp_path / "dev.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_zone_that_does_not_hold_the_certificate_name_is_one_line_exit_2(tmp_path, msk_migrate_cli) -> None:
    path = _variant(tmp_path, lambda d: d["operator_tls"].update(hosted_zone_name="other.example"))
    code, _, err = msk_migrate_cli("preflight", "--env", str(path))
    assert code == 2 and err.count("\n") == 1, err
    assert "operator_tls" in err and "hosted_zone_name 'other.example'" in err and "dns_name" in err


def test_dns_name_needs_its_zone_and_a_zone_needs_a_name(tmp_path) -> None:
    with pytest.raises(UsageError, match="hosted_zone_name"):
        load_environment(_variant(tmp_path, lambda d: d["operator_tls"].pop("hosted_zone_name")))
    with pytest.raises(UsageError, match="need dns_name"):
        load_environment(_variant(tmp_path, lambda d: d["operator_tls"].pop("dns_name")))


def test_created_cluster_broker_type_is_its_instance_type_and_an_existing_one_is_declared(tmp_path) -> None:
    cfg = load_environment(DEV)
    assert cfg.target.endpoint("b-1:9098").msk_broker_type == cfg.target.create.instance_type

    def existing(d) -> None:
        d["target"].pop("create")
        d["target"].update(existing_cluster_arn="arn:aws:kafka:eu-west-1:111111111111:cluster/prod/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2",
                           network={"security_group_ids": ["sg-0123456789abcdef0"]}, broker_type="kafka.m5.xlarge")

    cfg = load_environment(_variant(tmp_path, existing))
    assert cfg.target.endpoint("b-1:9098").msk_broker_type == "kafka.m5.xlarge"
    with pytest.raises(UsageError, match=r"broker_type 'kafka\.m9\.huge'"):
        load_environment(_variant(tmp_path, lambda d: (existing(d), d["target"].update(broker_type="kafka.m9.huge"))))
    with pytest.raises(UsageError, match="broker_type is for existing clusters"):
        load_environment(_variant(tmp_path, lambda d: d["target"].update(broker_type="kafka.m5.xlarge")))
