"""Starts the operator image's entrypoint as ECS would, for tests/unit/test_operator_boundary.py.

moto serves the ECS and EC2 APIs the entrypoint asks how its task was started, but not the two endpoints the ECS
agent serves inside a task at 169.254.170.2 (task metadata, task-role credentials), and a test may bind only
127.0.0.1. So this shim (test code, never in the product) hands the entrypoint a ``describe`` that reads a
stand-in metadata server and moto, and gives the command moto's endpoint and test credentials, which on ECS
come from the agent. Everything else is the entrypoint as the image runs it, started with ``python -I``.

argv: SETTINGS_JSON_FILE [words a containerOverrides.command would pass to the entrypoint]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import boto3

from msk_migrate.aws import operator_entry, task_view
from msk_migrate.commands.root import grammar

settings = json.loads(Path(sys.argv[1]).read_text())
credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def clients(region: str):
    return (boto3.client("ecs", region_name=region, endpoint_url=settings["moto"], **credentials),
            boto3.client("ec2", region_name=region, endpoint_url=settings["moto"], **credentials))


sys.exit(operator_entry.main(sys.argv[2:], check=grammar,
                             describe=lambda: task_view.describe_self(settings["metadata"], clients),
                             extra_env=settings["command_env"]))
