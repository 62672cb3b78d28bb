"""infra/prerequisites.py against moto: a prerequisite the environment file names but the account lacks
(VPC, subnet, certificate, hosted zone, existing cluster) is one line naming the field and the fix, exit 2,
and nothing is created; a certificate of another region is refused offline, when the file is loaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

TIERS = ("aws",)
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _script():
    import importlib.util

    infra = str(REPO / "infra")
    if infra not in sys.path:
        sys.path.insert(0, infra)
    spec = importlib.util.spec_from_file_location("msk_migrate_prerequisites_script", REPO / "infra" / "prerequisites.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """moto (with the shims) and prod's prerequisites created by the deploy rehearsal's own function."""
    sys.path.insert(0, str(HERE))
    import os

    import deploy_rehearsal
    import moto_shims

    saved = dict(os.environ)
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_EC2_METADATA_DISABLED": "true"})
    server = moto_shims.start()
    os.environ["AWS_CA_BUNDLE"] = server.ca_bundle
    work = tmp_path_factory.mktemp("prereq")
    path = deploy_rehearsal.prerequisites("prod", server.endpoint, work)
    yield server, path
    server.stop()
    os.environ.clear()
    os.environ.update(saved)


def _run(client_env: dict[str, str], env_file: Path, capfd, monkeypatch) -> tuple[int, str, str]:
    """The script's main in this process (a subprocess pays about a minute of imports on a loaded machine)."""
    for k in [k for k in __import__("os").environ if k.startswith("AWS_")]:
        monkeypatch.delenv(k)
    for k, v in {**client_env, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_EC2_METADATA_DISABLED": "true", "MOTO_ACCOUNT_ID": "222222222222"}.items():
        monkeypatch.setenv(k, v)
    capfd.readouterr()
    code = SCRIPT.main([env_file.stem, "--environments", str(env_file.parent)])
    out, err = capfd.readouterr()
    return code, out, err


def _variant(path: Path, tmp_path: Path, change) -> Path:
    doc = yaml.safe_load(path.read_text())
    change(doc)
    out = tmp_path / "prod.yaml"
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def test_every_prerequisite_of_prod_is_found(deployed, capfd, monkeypatch) -> None:
    server, path = deployed
    code, out, err = _run(server.client_env(), path, capfd, monkeypatch)
    assert code == 0, err
    for field in ("vpc_id", "subnet_ids", "operator_tls.certificate_arn", "operator_tls.hosted_zone_id", "target.existing_cluster_arn"):
        assert f"ok: {field} " in out


@pytest.mark.parametrize(("field", "change"), [
    ("vpc_id", lambda d: d.update(vpc_id="vpc-0000000000000dead")),
    ("subnet_ids[1]", lambda d: d["subnet_ids"].__setitem__(1, "subnet-0000000000000dead")),
    ("operator_tls.certificate_arn",
     lambda d: d["operator_tls"].update(certificate_arn="arn:aws:acm:eu-west-1:222222222222:certificate/0a1b2c3d-0000-4a5b-8c9d-00000000dead")),
    ("operator_tls.hosted_zone_id", lambda d: d["operator_tls"].update(hosted_zone_id="Z0000000000000000DEAD")),
    ("target.existing_cluster_arn", lambda d: d["target"].update(
        existing_cluster_arn="arn:aws:kafka:eu-west-1:222222222222:cluster/gone/6f1b7c7e-2b4d-4a8e-9c3a-0d5e8f7a1b2c-1")),
])
def test_a_missing_prerequisite_is_one_line_naming_the_field(deployed, tmp_path: Path, field: str, change, capfd, monkeypatch) -> None:
    server, path = deployed
    code, out, err = _run(server.client_env(), _variant(path, tmp_path, change), capfd, monkeypatch)
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: prod.yaml: {field}: "), err
    assert "(fix: " in lines[0] and "Traceback" not in err


def test_a_certificate_of_another_region_is_refused_before_any_call(tmp_path: Path, capfd, monkeypatch) -> None:
    path = REPO / "infra" / "environments" / "prod.yaml"
    other = _variant(path, tmp_path, lambda d: d["operator_tls"].update(
        certificate_arn=d["operator_tls"]["certificate_arn"].replace(":eu-west-1:", ":us-east-1:")))
    code, _out, err = _run({"AWS_ENDPOINT_URL": "http://127.0.0.1:9"}, other, capfd, monkeypatch)  # nothing listens there: a call would fail otherwise
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "operator_tls.certificate_arn" in lines[0] and "us-east-1" in lines[0], err
