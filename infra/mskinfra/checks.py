"""Environment checks that need the infra's own knowledge (no jsii: they run before any synth).

An existing MSK cluster is shared: other applications' topics and groups live on it. The task role's
IAM grants are derived from ``migration.topics`` / ``migration.groups`` (:mod:`mskinfra.scope`); a
regex without a literal prefix (the default ``.*``, ``[a-z]+``) would become ``topic/NAME/UUID/*`` -- every
topic of the shared cluster. Such an environment must list its topics and groups explicitly.
"""

from __future__ import annotations

from pathlib import Path

from msk_migrate.config.environment import EnvironmentConfig
from msk_migrate.errors import UsageError

from .scope import name_pattern_list


def check_shared_target(cfg: EnvironmentConfig, path: Path | str) -> None:
    """Refuse cluster-wide (``/*``) IAM grants on an existing (shared) target cluster."""
    if not cfg.target.existing_cluster_arn or cfg.target.auth.mode != "iam":
        return
    m = cfg.migration
    for field, regexes, example in (("topics", m.topics, r"orders\..*"), ("groups", m.groups, "orders-.*")):
        for regex in regexes:
            if "*" in name_pattern_list(regex):
                raise UsageError(
                    f"{Path(path).name}: migration.{field}",
                    f"{regex!r} has no literal prefix, so the task role would get every {field[:-1]} of the shared "
                    f"cluster {cfg.msk_cluster_name} (IAM {field[:-1]}/.../*)",
                    f"list the {field} explicitly with a literal prefix, e.g. '{example}'",
                )
