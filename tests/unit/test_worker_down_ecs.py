"""A deployed worker that runs short says so (issue 44): the Connect service's stopped tasks read from moto's ECS and
CloudWatch Logs (a moto server on 127.0.0.1), and `connectors status --env dev` naming the OutOfMemoryError when the
load balancer in front of the workers has none to forward to.

moto answers ListTasks, DescribeTasks, DescribeServices, DescribeTaskDefinition and GetLogEvents but runs no
container: what the ECS agent records of a task whose JVM exited (its ``group``, the container's exit code, the stop
code and time) is set on moto's task here, as tests/unit/test_preflight_in_vpc.py's ``finish`` does; moto also
ignores ListTasks' ``serviceName`` (every task of the cluster comes back), which the reader's ``group`` filter covers.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from msk_migrate.aws.connect_tasks import CONNECT_CONTAINER, StoppedTasks, connect_service_names, stopped_connect_tasks
from msk_migrate.connect_api.worker_down import Cause, EcsEvidence, classify_ecs

REGION = "eu-west-1"
CLUSTER, SERVICE = connect_service_names("msk-migrate-dev")  # the stack of infra/environments/dev.yaml
LOG_GROUP = "/msk-migrate-dev/kafka-connect"
HEAP_DEATH = ["[2026-11-28 09:41:16,880] INFO [Worker clientId=connect-10.0.1.17:8083, groupId=msk-migrate-dev] "
              "Finished reading to end of log (org.apache.kafka.connect.runtime.distributed.DistributedHerder)",
              "Terminating due to java.lang.OutOfMemoryError: Java heap space"]


@pytest.fixture(scope="module")
def moto_url():
    from tests.infra.moto_shims import ecs_tasks_stay

    with ecs_tasks_stay() as url:
        yield url


@pytest.fixture()
def aws(moto_url, monkeypatch):
    from tests.infra.moto_shims import use_moto

    use_moto(monkeypatch, moto_url, REGION)
    import boto3

    ecs, logs, ec2 = (boto3.client(n, region_name=REGION) for n in ("ecs", "logs", "ec2"))
    vpc = ec2.create_vpc(CidrBlock="10.70.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.70.1.0/24")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName=f"connect-{time.time_ns()}", Description="connect", VpcId=vpc)["GroupId"]
    ecs.create_cluster(clusterName=CLUSTER)
    td = ecs.register_task_definition(
        family=SERVICE, networkMode="awsvpc", requiresCompatibilities=["FARGATE"], cpu="1024", memory="4096",
        containerDefinitions=[{"name": "kafka-connect", "image": "connect:1", "essential": True, "memory": 4096,
                               "logConfiguration": {"logDriver": "awslogs", "options": {
                                   "awslogs-group": LOG_GROUP, "awslogs-region": REGION, "awslogs-stream-prefix": "kafka-connect"}}}],
    )["taskDefinition"]["taskDefinitionArn"]
    network = {"awsvpcConfiguration": {"subnets": [subnet], "securityGroups": [sg], "assignPublicIp": "DISABLED"}}
    with contextlib.suppress(ecs.exceptions.InvalidParameterException):
        ecs.create_service(cluster=CLUSTER, serviceName=SERVICE, taskDefinition=td, desiredCount=0, launchType="FARGATE",
                           networkConfiguration=network)
    with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_group(logGroupName=LOG_GROUP)
    for arn in ecs.list_tasks(cluster=CLUSTER)["taskArns"]:  # each test starts from no task
        _backend().tasks[CLUSTER].pop(arn, None)
    return {"ecs": ecs, "logs": logs, "td": td, "network": network}


def _backend():
    from moto.backends import get_backend

    return get_backend("ecs")["123456789012"][REGION]


def _stopped(aws, *, at: float, exit_code: int | None, reason: str | None = None, stop_code: str = "EssentialContainerExited",
             stopped_reason: str = "Essential container in task exited", group: str | None = f"service:{SERVICE}",
             log: list[str] | None = None) -> str:
    """A task of the service that ran and stopped as the ECS agent records it; its container log (awslogs) if given."""
    arn = aws["ecs"].run_task(cluster=CLUSTER, taskDefinition=aws["td"], launchType="FARGATE",
                              networkConfiguration=aws["network"], startedBy="ecs-svc/5169280574093855189")["tasks"][0]["taskArn"]
    task = _backend().tasks[CLUSTER][arn]
    container = {"name": "kafka-connect", "lastStatus": "STOPPED", **({"exitCode": exit_code} if exit_code is not None else {}),
                 **({"reason": reason} if reason else {})}
    task.containers, task.stop_code, task.stopped_at = [container], stop_code, at
    if group:
        task.group = group
    aws["ecs"].stop_task(cluster=CLUSTER, task=arn, reason=stopped_reason)
    if log:
        stream = f"kafka-connect/kafka-connect/{arn.rsplit('/', 1)[-1]}"
        aws["logs"].create_log_stream(logGroupName=LOG_GROUP, logStreamName=stream)
        aws["logs"].put_log_events(logGroupName=LOG_GROUP, logStreamName=stream,
                                   logEvents=[{"timestamp": int(at * 1000) + i, "message": m} for i, m in enumerate(log)])
    return arn


def _evidence(found: StoppedTasks) -> EcsEvidence:
    return EcsEvidence(CLUSTER, SERVICE, CONNECT_CONTAINER, tuple(found.tasks), tuple(found.log_tail), found.log, found.log_task,
                       "2g", 4096)


def test_the_newest_stopped_task_of_the_service_and_its_log_name_the_heap(aws):
    now = time.time()
    _stopped(aws, at=now - 3000, exit_code=137, reason="OutOfMemoryError: Container killed due to memory usage")
    newest = _stopped(aws, at=now - 60, exit_code=3, log=HEAP_DEATH)
    # another task of the cluster (no service group: an operator task) that stopped later is not the worker's
    _stopped(aws, at=now - 5, exit_code=1, group=None)
    found = stopped_connect_tasks(aws["ecs"], aws["logs"], CLUSTER, SERVICE)
    assert found.unread == []
    assert len(found.tasks) == 2 and found.log_task == newest and found.log_tail == HEAP_DEATH
    down = classify_ecs(_evidence(found))
    assert down is not None and (down.cause, down.exit_code) == (Cause.HEAP, 3)
    assert down.headline().startswith("worker died: OutOfMemoryError (Java heap space) at ")
    assert down.log == f"{LOG_GROUP} kafka-connect/kafka-connect/{newest.rsplit('/', 1)[-1]}"


class _NoListTasks:
    """An ECS client under the operator policy the stack ships (DescribeServices and DescribeTasks, no ListTasks)."""

    def __init__(self, ecs):
        self._ecs = ecs

    def __getattr__(self, name):
        return getattr(self._ecs, name)

    def list_tasks(self, **kw):
        from botocore.exceptions import ClientError

        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized to perform: ecs:ListTasks"}},
                          "ListTasks")


def test_without_list_tasks_the_service_events_name_the_stopped_tasks(aws):
    arn = _stopped(aws, at=time.time() - 30, exit_code=137, reason="OutOfMemoryError: Container killed due to memory usage")
    task_id = arn.rsplit("/", 1)[-1]
    service = next(s for s in _backend().services.values() if s.name == SERVICE)
    service.events = [{"id": "e2", "createdAt": time.time(), "message": f"(service {SERVICE}) has started 1 tasks: (task {'f' * 32})."},
                      {"id": "e1", "createdAt": time.time() - 30, "message": f"(service {SERVICE}) has stopped 1 running tasks: (task {task_id})."}]
    found = stopped_connect_tasks(_NoListTasks(aws["ecs"]), aws["logs"], CLUSTER, SERVICE)
    assert found.unread[0] == "ecs:ListTasks: AccessDeniedException"
    down = classify_ecs(_evidence(found))
    assert down is not None and down.cause is Cause.CONTAINER_MEMORY and down.exit_code == 137


@pytest.fixture
def load_balancer_without_workers():
    """What the stack's ALB answers when no Connect task is healthy: 503 and a page of its own."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n</html>\r\n"
            self.send_response(503)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_connectors_status_of_the_environment_names_the_death_of_its_worker(aws, load_balancer_without_workers, tmp_path,
                                                                            monkeypatch, msk_migrate_cli):
    _stopped(aws, at=time.time() - 60, exit_code=3, log=HEAP_DEATH)
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_ENV_DIR", str(tmp_path))  # no local worker on that port
    url = load_balancer_without_workers
    code, out, err = msk_migrate_cli("connectors", "status", "--env", "dev", "--connect-url", url, "--output", "json")
    doc = json.loads(out)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: worker died: OutOfMemoryError (Java heap space) at ")
    assert f"the Connect worker at {url} is unreachable (ECS task " in err and "worker.heap with connect.memory" in err
    assert (doc["verdict"], doc["exit_code"], doc["worker_down"]["cause"], doc["worker_down"]["exit_code"]) == ("bad-input", 2, "heap", 3)
