"""The entrypoint's decisions, each small and side-effect free: which variables it refuses by name, how ECS's
account of the task admits or refuses a start, and the whole environment the command gets."""

from __future__ import annotations

import json

import pytest

from msk_migrate.aws import operator_entry
from msk_migrate.aws.operator_stack import StackSettings, stack_environment
from msk_migrate.aws.task_view import ARGV_ENV, STARTED_BY_TAG, Admitted, NotAdmitted, TaskView, admit, metadata_uri

STACK = StackSettings.from_environ(stack_environment(
    subnets=["subnet-a", "subnet-b"], security_groups=["sg-connect"], environment="name: dev\n", environment_name="dev",
    target_bootstrap="b-1:9098", connect_url="https://connect.example:8083",
    connect_secret_arn="arn:aws:secretsmanager:eu-west-1:123456789012:secret:rest"))


def view(overrides: dict | None = None, *, subnets=("subnet-a",), groups=("sg-connect",), public=False, tagged=True) -> TaskView:
    return TaskView(task_arn="arn:aws:ecs:eu-west-1:123456789012:task/c/1", container="operator",
                    overrides={"containerOverrides": [{"name": "operator", "environment": [{"name": ARGV_ENV, "value": "[]"}]}],
                               "inferenceAcceleratorOverrides": [], **(overrides or {})},
                    subnets=tuple(subnets), security_groups=frozenset(groups), public_ip=public,
                    tags={STARTED_BY_TAG: "AROAEXAMPLE:alice"} if tagged else {})


def test_the_callers_request_alone_in_the_stacks_network_and_tagged_is_admitted_with_its_person() -> None:
    assert admit(view(), STACK) == Admitted(caller_request=True, started_by="AROAEXAMPLE:alice")


def test_a_service_of_the_stack_without_any_override_runs_its_own_request_as_nobodys() -> None:
    bare = view({"containerOverrides": [{"name": "operator"}]}, tagged=False)
    assert admit(bare, STACK) == Admitted(caller_request=False, started_by=None)


@pytest.mark.parametrize(("task", "naming"), [
    (view({"taskRoleArn": "arn:aws:iam::1:role/x"}), "RunTask override taskRoleArn"),
    (view({"memory": "30720"}), "RunTask override memory"),
    (view({"containerOverrides": [{"name": "operator", "command": ["sh"]}]}), "containerOverrides.command"),
    (view({"containerOverrides": [{"name": "operator", "environmentFiles": [{"value": "arn:aws:s3:::b/x", "type": "s3"}]}]}),
     "containerOverrides.environmentFiles"),
    (view({"containerOverrides": [{"name": "operator", "environment": [{"name": "MSK_MIGRATE_CONNECT_URL", "value": "x"}]}]}),
     "environment override MSK_MIGRATE_CONNECT_URL"),
    (view({"containerOverrides": [{"name": "sidecar", "environment": [{"name": ARGV_ENV, "value": "[]"}]}]}), "container 'sidecar'"),
    (view(subnets=("subnet-z",)), "subnet subnet-z"),
    (view(subnets=()), "subnet (none)"),
    (view(groups=("sg-connect", "sg-open")), "security groups sg-connect, sg-open"),
    (view(groups=("sg-open",)), "security groups sg-open"),
    (view(public=True), "assignPublicIp"),
    (view(tagged=False), STARTED_BY_TAG),
])
def test_any_other_start_is_refused_naming_what_ecs_reports(task: TaskView, naming: str) -> None:
    with pytest.raises(NotAdmitted, match=None) as err:
        admit(task, STACK)
    assert naming in str(err.value), str(err.value)


@pytest.mark.parametrize("uri", ["http://127.0.0.1:9/v4/x", "http://169.254.170.2.evil/v4/x", "https://169.254.170.2/v4/x",
                                 "http://169.254.170.2/v3/x", "http://169.254.170.2/v4/x/../../y", ""])
def test_a_metadata_uri_other_than_the_ecs_agents_is_refused_before_it_is_read(uri: str) -> None:
    with pytest.raises(NotAdmitted, match="ECS_CONTAINER_METADATA_URI_V4"):
        metadata_uri({"ECS_CONTAINER_METADATA_URI_V4": uri})
    assert metadata_uri({"ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/c0ffee-1"})


@pytest.mark.parametrize("name", ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GLIBC_TUNABLES", "PYTHONPATH", "PYTHONSTARTUP",
                                  "PYTHONWARNINGS", "PYTHONHOME", "BROWSER", "HTTPS_PROXY", "https_proxy", "NO_PROXY",
                                  "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "OPENSSL_CONF", "AWS_ENDPOINT_URL",
                                  "AWS_ENDPOINT_URL_STS", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_CA_BUNDLE",
                                  "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_STS_REGIONAL_ENDPOINTS", "MSK_MIGRATE_RECORD_JSON",
                                  "MSK_MIGRATE_LOCAL_ENV_DIR", "MSK_MIGRATE_SOURCE_REGISTRY_URL", "JAVA_TOOL_OPTIONS", "KRB5_CONFIG"])
def test_a_variable_that_acts_before_or_beneath_the_checks_is_refused_by_name(name: str) -> None:
    with pytest.raises(operator_entry.Refused, match=f"environment variable {name}:"):
        operator_entry.hazards({"PATH": "/usr/bin", name: "x"})


def test_what_ecs_and_the_image_set_passes_the_name_check() -> None:
    operator_entry.hazards({"PATH": "/usr/bin", "HOME": "/tmp", "HOSTNAME": "ip-10-0-0-1", "AWS_REGION": "eu-west-1",
                            "AWS_DEFAULT_REGION": "eu-west-1", "AWS_EXECUTION_ENV": "AWS_ECS_FARGATE",
                            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/x",
                            "ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/x", "ECS_AGENT_URI": "http://169.254.170.2/api/x",
                            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8", "GPG_KEY": "A035C8C1",
                            "PYTHON_VERSION": "3.11.11", "PYTHON_SHA256": "07a4356e", "MSK_MIGRATE_ROOT": "/opt/msk-migrate/share", ARGV_ENV: "[]",
                            **STACK.values})


def test_the_command_gets_an_allowlist_the_stacks_values_and_the_person_never_the_tasks_environment() -> None:
    environ = {"PATH": "/evil", "HOME": "/root", "AWS_REGION": "eu-west-1", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/c",
               "ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/x", "SOMETHING_ELSE": "x", "HOSTNAME": "h",
               ARGV_ENV: json.dumps(["lag"]), **STACK.values}
    env = operator_entry.command_environment(environ, STACK, Admitted(caller_request=True, started_by="AROAEXAMPLE:alice"))
    assert env["AWS_DEFAULT_REGION"] == "eu-west-1" and env["AWS_STS_REGIONAL_ENDPOINTS"] == "regional"
    assert env["MSK_MIGRATE_CONNECT_URL"] == "https://connect.example:8083" and env["MSK_MIGRATE_TARGET_BOOTSTRAP"] == "b-1:9098"
    assert env[operator_entry.STARTED_BY_ENV] == "AROAEXAMPLE:alice" and env["HOME"] == "/tmp" and "/evil" not in env["PATH"]
    assert not {"SOMETHING_ELSE", "HOSTNAME", ARGV_ENV, "MSK_MIGRATE_STACK_ENVIRONMENT", "MSK_MIGRATE_STACK_SUBNETS"} & set(env)


def test_the_stacks_environment_goes_right_after_the_command_path_before_anything_of_the_callers(tmp_path) -> None:
    from msk_migrate.aws.operator_stack import environment_yaml
    from msk_migrate.commands.operator_grammar import check_request
    from msk_migrate.commands.root import cli
    from msk_migrate.config.environment import load_environment
    from msk_migrate.paths import REPO_ROOT

    cfg = load_environment(REPO_ROOT / "infra" / "environments" / "dev.yaml")
    stack = StackSettings.from_environ(stack_environment(
        subnets=["subnet-a"], security_groups=["sg-connect"], environment=environment_yaml(cfg), environment_name="dev"))
    check = lambda w, p: check_request(w, None, cli)  # noqa: E731 - the grammar without the stack's prefixes
    ran = operator_entry._checked(["connectors", "status", "mm2-dev-source"], stack, check)
    assert ran == ["connectors", "status", "--env", "/tmp/msk-migrate-env/dev.yaml", "mm2-dev-source"]
    with pytest.raises(operator_entry.Refused, match="--: is not an option"):  # a caller's end of options never comes first
        operator_entry._checked(["connectors", "status", "--", "mm2-dev-source"], stack, check)
