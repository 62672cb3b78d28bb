"""One Grafana login per person (connect.people), in the synthesized stacks: the Grafana container gets each
person's password from their own secret as MM2_GRAFANA_PERSON_<NAME>_PASSWORD (images/grafana/people.sh makes
the user), never in plain text, and Grafana's execution role reads exactly its own secrets plus those."""

from __future__ import annotations

import json

import pytest
from infra_helpers import ALL_ENVS, Synth

# mskinfra is imported inside the tests: it loads the cdktf provider bindings (tens of seconds), which a unit
# run collecting this module must not pay. Every test here is of the infra tier.
TIERS = ("infra",)
#: The environment whose model lists people (prod.yaml: alice, j-smith); the others list none.
WITH_PEOPLE = "prod"
#: The prefix of the people's variables in the Grafana container (mskinfra.monitoring.GRAFANA_PERSON_ENV,
#: checked against it below).
PERSON_VAR = "MM2_GRAFANA_PERSON_"


def grafana_container(synth: Synth, env: str) -> dict:
    from mskinfra.ecs import SERVING_CERT
    from mskinfra.tfjson import unescape_template

    (td,) = [td for td in synth.resources(env, "aws_ecs_task_definition").values()
             if td["family"] == f"{synth.configs[env].resource_prefix}-grafana"]
    (c,) = [c for c in json.loads(unescape_template(td["container_definitions"])) if c["name"] != SERVING_CERT]
    return c


def secret_ref(synth: Synth, env: str, name: str) -> str:
    (key,) = [k for k, v in synth.resources(env, "aws_secretsmanager_secret").items() if v["name"] == name]
    return "${aws_secretsmanager_secret." + key + ".arn}"


def person_secret(synth: Synth, env: str, person: str) -> str:
    return secret_ref(synth, env, f"{synth.configs[env].resource_prefix}/connect-rest/{person}")


def grafana_reads(synth: Synth, env: str) -> list[str]:
    """The secrets Grafana's execution role may read (its ReadOwnSecrets statement)."""
    roles = {"${aws_iam_role." + k + ".id}": v["name"] for k, v in synth.resources(env, "aws_iam_role").items()}
    name = f"{synth.configs[env].resource_prefix}-grafana-execution"
    (policy,) = [json.loads(v["policy"]) for v in synth.resources(env, "aws_iam_role_policy").values()
                 if v["name"] == "execution" and roles.get(v["role"]) == name]
    (st,) = [s for s in policy["Statement"] if s["Sid"] == "ReadOwnSecrets"]
    return st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]


def test_the_name_mapping_is_one_to_one_like_the_other_people_variables():
    from mskinfra.monitoring import GRAFANA_PERSON_ENV, grafana_person_env

    assert GRAFANA_PERSON_ENV == PERSON_VAR
    assert grafana_person_env("alice") == "MM2_GRAFANA_PERSON_ALICE_PASSWORD"
    assert grafana_person_env("j-smith") == "MM2_GRAFANA_PERSON_J_SMITH_PASSWORD"


def test_each_person_reaches_grafana_from_their_own_secret_password_key(synth: Synth):
    cfg = synth.configs[WITH_PEOPLE]
    assert cfg.connect.people == ["alice", "j-smith"]
    c = grafana_container(synth, WITH_PEOPLE)
    injected = {s["name"]: s["valueFrom"] for s in c["secrets"] if s["name"].startswith(PERSON_VAR)}
    assert injected == {
        "MM2_GRAFANA_PERSON_ALICE_PASSWORD": person_secret(synth, WITH_PEOPLE, "alice") + ":password::",
        "MM2_GRAFANA_PERSON_J_SMITH_PASSWORD": person_secret(synth, WITH_PEOPLE, "j-smith") + ":password::",
    }
    # Never in plain text: no such name among the container's plain environment variables.
    assert not [e for e in c["environment"] if e["name"].startswith(PERSON_VAR)], c["environment"]


def test_grafana_execution_role_reads_exactly_its_own_secrets_and_each_persons(synth: Synth):
    cfg = synth.configs[WITH_PEOPLE]
    admin = cfg.monitoring.grafana.admin_secret_arn or "${aws_secretsmanager_secret.grafana_admin.arn}"
    prom = secret_ref(synth, WITH_PEOPLE, f"{cfg.resource_prefix}/prometheus-web")
    ca_seed = secret_ref(synth, WITH_PEOPLE, f"{cfg.resource_prefix}/internal-ca")
    people = [person_secret(synth, WITH_PEOPLE, p) for p in cfg.connect.people]
    assert sorted(grafana_reads(synth, WITH_PEOPLE)) == sorted([admin, prom, ca_seed, *people])
    # ... and every secret the task definition injects is one the role may read (else the task cannot start).
    injected = {s["valueFrom"].split(":password::")[0] for s in grafana_container(synth, WITH_PEOPLE)["secrets"]
                if s["name"].startswith(PERSON_VAR)}
    assert injected == set(people)


@pytest.mark.parametrize("env", [e for e in ALL_ENVS if e != WITH_PEOPLE])
def test_without_people_grafana_gets_no_person_variable_and_reads_no_persons_secret(synth: Synth, env: str):
    cfg = synth.configs[env]
    assert cfg.connect.people == []
    c = grafana_container(synth, env)
    names = [s["name"] for s in c.get("secrets", [])] + [e["name"] for e in c["environment"]]
    assert not [n for n in names if n.startswith(PERSON_VAR)], names
    persons = [k for k, v in synth.resources(env, "aws_secretsmanager_secret").items()
               if v["name"].startswith(f"{cfg.resource_prefix}/connect-rest/")]
    assert persons == []
    assert len(grafana_reads(synth, env)) == 3  # admin password, Prometheus login, CA seed
