"""One declaration of the registries a command names (``commands.schemas.registry_endpoint_options``): every
command that takes a registry URL on its command line takes its basic-auth secret too, under the same names and
variables (``validate`` excepted: its registry options have no variables and it reads credentials as the job
does, from the environment)."""

from __future__ import annotations

from msk_migrate.commands.root import cli
from tests.cli_tree import named_leaves

REGISTRY = {"--source-registry": "MSK_MIGRATE_SOURCE_REGISTRY_URL", "--target-registry": "MSK_MIGRATE_TARGET_REGISTRY_URL",
            "--source-registry-secret-arn": "MSK_MIGRATE_SOURCE_REGISTRY_SECRET_ARN",
            "--target-registry-secret-arn": "MSK_MIGRATE_TARGET_REGISTRY_SECRET_ARN"}


def test_every_command_naming_a_registry_takes_url_and_secret_for_both_roles_with_their_variables() -> None:
    takers = []
    for name, cmd in named_leaves(cli):
        opts = {o: p for p in cmd.params for o in getattr(p, "opts", [])}
        if "--source-registry" not in opts or name == "validate":
            continue
        takers.append(name)
        assert {o: opts[o].envvar if o in opts else None for o in REGISTRY} == REGISTRY, name
        assert {opts[o].name for o in REGISTRY} == {"source_url", "target_url", "source_secret", "target_secret"}, name
    assert {"lag", "cutover check", "schemas copy", "schemas plan", "schemas verify"} <= set(takers), takers
