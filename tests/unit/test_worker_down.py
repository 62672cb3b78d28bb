"""A worker that runs short says so (issue 44): the classifier of a silent Connect worker's cause, over log tails
as the harness's and the image's JVM write them and over DescribeTasks entries as ECS returns them; the client's
"unreachable" for a load balancer with no worker behind it; the local evidence read from a harness state; and
`connectors status` naming the cause in one line and in its JSON document (exit 2, as for any unreachable worker).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.connect_api.rest import ConnectClient, ConnectRestError, WorkerUnreachable
from msk_migrate.connect_api.worker_down import (
    Cause,
    EcsEvidence,
    LocalEvidence,
    classify_ecs,
    classify_local,
    current_run,
    oom_in_log,
)

START = "entrypoint: Kafka Connect worker for target cluster 127.0.0.1:40123 (config /w/connect/config/worker.properties)"
#: What a harness worker started with -Xmx12m printed before its JVM gave up (the integration test's worker).
HEAP_EXIT = [
    START,
    "[2026-11-28 03:33:24,459] INFO Kafka Connect worker initializing ... (org.apache.kafka.connect.cli.AbstractConnectCli)",
    "[2026-11-28 03:33:24,461] INFO Scanning for plugin classes. This might take a moment ... (org.apache.kafka.connect.cli.AbstractConnectCli)",
    "[2026-11-28 03:33:24,708] INFO Loading plugin from: classpath (org.apache.kafka.connect.runtime.isolation.PluginScanner)",
    "Terminating due to java.lang.OutOfMemoryError: Java heap space",
]
#: A JVM without -XX:+ExitOnOutOfMemoryError: a task thread's OutOfMemoryError is logged and the worker limps on.
GC_OVERHEAD_LOGGED = [
    START,
    "[2026-11-28 10:15:02,331] ERROR WorkerSourceTask{id=it-source-0} Task threw an uncaught and unrecoverable exception. "
    "Task is being killed and will not recover until manually restarted (org.apache.kafka.connect.runtime.WorkerTask)",
    "java.lang.OutOfMemoryError: GC overhead limit exceeded",
    "\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)",
    "\tat org.apache.kafka.common.utils.ByteBufferOutputStream.expandBuffer(ByteBufferOutputStream.java:223)",
    "[2026-11-28 10:15:40,002] WARN [Worker clientId=connect-1, groupId=mm2-connect] Heartbeat failed "
    "(org.apache.kafka.clients.consumer.internals.AbstractCoordinator)",
]
NATIVE_THREAD = [
    START,
    "[2026-11-28 11:00:00,101] ERROR [Worker clientId=connect-1, groupId=mm2-connect] Uncaught exception in herder work thread, "
    "exiting:  (org.apache.kafka.connect.runtime.distributed.DistributedHerder)",
    "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached",
    "\tat java.base/java.lang.Thread.start0(Native Method)",
]
STOPPED_ON_ERROR = [
    START,
    "[2026-11-28 03:32:55,066] ERROR Stopping due to error (org.apache.kafka.connect.cli.AbstractConnectCli)",
    "org.apache.kafka.connect.errors.ConnectException: Failed to connect to and describe Kafka cluster.",
    "Caused by: org.apache.kafka.common.errors.TimeoutException: Timed out waiting for a node assignment. Call: listNodes",
]
WRITTEN = datetime(2026, 11, 28, 3, 33, 27, tzinfo=UTC)


def _local(lines: list[str], alive: bool = False, heap: str = "512m") -> LocalEvidence:
    return LocalEvidence("connect", 4242, alive, "/w/connect/connect.log", tuple(lines), WRITTEN, heap)


# ---- the log ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("tail", "cause", "pool"), [
    (HEAP_EXIT, Cause.HEAP, "Java heap space"),
    (GC_OVERHEAD_LOGGED, Cause.HEAP, "GC overhead limit exceeded"),
    ([START, "Terminating due to java.lang.OutOfMemoryError: Metaspace"], Cause.METASPACE, "Metaspace"),
    ([START, "Terminating due to java.lang.OutOfMemoryError: Compressed class space"], Cause.METASPACE, "Compressed class space"),
    (NATIVE_THREAD, Cause.NATIVE_THREAD, "unable to create native thread"),
    ([START, "Terminating due to java.lang.OutOfMemoryError: Cannot reserve 1048576 bytes of direct buffer memory "
             "(allocated: 67108864, limit: 67108864)"], Cause.DIRECT_MEMORY, "Direct buffer memory"),
    ([START, "Aborting due to java.lang.OutOfMemoryError: Requested array size exceeds VM limit"], Cause.HEAP,
     "Requested array size exceeds VM limit"),
    ([START, "Terminating due to java.lang.OutOfMemoryError: something new"], Cause.OUT_OF_MEMORY, "something new"),
])
def test_the_pool_of_the_out_of_memory_error_names_the_cause(tail, cause, pool):
    found = oom_in_log(tail)
    assert found is not None and (found.cause, found.pool) == (cause, pool)


def test_only_the_current_run_counts_and_the_exit_flag_in_the_jvm_args_is_no_error():
    # A restarted local worker appends to the same log: the previous run's OutOfMemoryError is history.
    restarted = [*HEAP_EXIT, START, "\tjvm.args = -Xms512m, -Xmx512m, -XX:+UseG1GC, -XX:+ExitOnOutOfMemoryError",
                 "[2026-11-28 03:40:00,000] INFO Kafka Connect started (org.apache.kafka.connect.runtime.Connect)"]
    assert current_run(restarted) == restarted[-2:]
    assert oom_in_log(restarted) is None
    assert oom_in_log(HEAP_EXIT[1:]) is not None  # no start line in the tail: the whole tail is the run


def test_a_dead_local_worker_that_ran_out_of_heap_is_named_with_when_where_and_the_fix():
    down = classify_local(_local(HEAP_EXIT, heap="12m"))
    assert down is not None and down.cause is Cause.HEAP and down.died
    assert down.at == WRITTEN  # the JVM's last line has no time of its own: the log's last write is its death
    line = down.line("http://127.0.0.1:40123")
    assert line.startswith("worker died: OutOfMemoryError (Java heap space) at 2026-11-28 03:33:27 UTC; "
                           "the Connect worker at http://127.0.0.1:40123 is unreachable (process 4242 (connect) is gone: "
                           "its log /w/connect/connect.log: 'Terminating due to java.lang.OutOfMemoryError: Java heap space') "
                           "(fix: raise the worker heap (it ran with -Xmx12m; ")
    assert "MSK_MIGRATE_LOCAL_WORKER_HEAP=2g msk-migrate local up" in line and "\n" not in line
    doc = down.to_dict("http://127.0.0.1:40123")
    assert doc == {"worker": "http://127.0.0.1:40123", "cause": "heap", "error": "OutOfMemoryError (Java heap space)",
                   "died": True, "at": "2026-11-28T03:33:27Z", "where": "process 4242 (connect) is gone",
                   "evidence": "its log /w/connect/connect.log: 'Terminating due to java.lang.OutOfMemoryError: Java heap space'",
                   "exit_code": None, "log": "/w/connect/connect.log", "fix": doc["fix"]}


def test_a_worker_that_limps_after_an_out_of_memory_error_is_named_as_still_running():
    down = classify_local(_local(GC_OVERHEAD_LOGGED, alive=True))
    assert down is not None and down.cause is Cause.HEAP and not down.died
    assert down.at is not None and down.headline().startswith("worker out of memory: OutOfMemoryError (GC overhead limit exceeded) at ")
    assert down.headline().endswith(", still running")


def test_a_running_worker_without_an_out_of_memory_error_has_no_cause_and_a_dead_one_ends_with_its_last_error():
    assert classify_local(_local(STOPPED_ON_ERROR, alive=True)) is None
    down = classify_local(_local(STOPPED_ON_ERROR))
    assert down is not None and down.cause is Cause.EXITED and down.died
    assert down.evidence == ("its log /w/connect/connect.log ends: '[2026-11-28 03:32:55,066] ERROR Stopping due to error "
                             "(org.apache.kafka.connect.cli.AbstractConnectCli) | Caused by: org.apache.kafka.common.errors."
                             "TimeoutException: Timed out waiting for a node assignment. Call: listNodes'")
    assert "msk-migrate local up" in down.fix


def test_native_threads_and_metaspace_have_their_own_fix():
    threads = classify_local(_local(NATIVE_THREAD))
    meta = classify_local(_local([START, "Terminating due to java.lang.OutOfMemoryError: Metaspace"]))
    assert threads is not None and "could not start a thread" in threads.fix
    assert meta is not None and "MaxMetaspaceSize" in meta.fix


# ---- ECS -------------------------------------------------------------------------------------------------
SERVICE = "msk-migrate-dev-kafka-connect"


def _task(task_id: str, stopped: datetime, *, exit_code=None, reason=None, stopped_reason="Essential container in task exited",
          stop_code="EssentialContainerExited") -> dict:
    """A DescribeTasks entry of a stopped task of the Connect service, as ECS returns it (boto3: datetimes)."""
    container = {"containerArn": f"arn:aws:ecs:eu-west-1:111111111111:container/msk-migrate-dev/{task_id}/9f1c",
                 "name": "kafka-connect", "lastStatus": "STOPPED", "healthStatus": "UNKNOWN"}
    if exit_code is not None:
        container["exitCode"] = exit_code
    if reason is not None:
        container["reason"] = reason
    return {"taskArn": f"arn:aws:ecs:eu-west-1:111111111111:task/msk-migrate-dev/{task_id}", "group": f"service:{SERVICE}",
            "lastStatus": "STOPPED", "desiredStatus": "STOPPED", "launchType": "FARGATE", "stopCode": stop_code,
            "stoppedReason": stopped_reason, "stoppingAt": stopped, "stoppedAt": stopped, "cpu": "1024", "memory": "4096",
            "containers": [container]}


T1, T2 = datetime(2026, 11, 28, 9, 0, 5, tzinfo=UTC), datetime(2026, 11, 28, 9, 41, 17, tzinfo=UTC)
OOM_KILLED = _task("0a1b2c3d4e5f60718293a4b5c6d7e8f9", T1, exit_code=137, reason="OutOfMemoryError: Container killed due to memory usage")
SCALED_IN = _task("1b2c3d4e5f60718293a4b5c6d7e8f90a", T2, exit_code=143, stop_code="ServiceSchedulerInitiated",
                  stopped_reason="Scaling activity initiated by (deployment ecs-svc/5169280574093855189)")


def _ecs(*tasks: dict, log: list[str] | None = None) -> EcsEvidence:
    newest = max(tasks, key=lambda t: t["stoppedAt"]) if tasks else None
    return EcsEvidence("msk-migrate-dev", SERVICE, "kafka-connect", tuple(tasks), tuple(log or ()),
                       "/msk-migrate-dev/kafka-connect kafka-connect/kafka-connect/x" if log else None,
                       newest["taskArn"] if log and newest else None, "2g", 4096)


def test_a_container_killed_at_the_task_memory_limit_is_named_from_its_reason():
    down = classify_ecs(_ecs(OOM_KILLED))
    assert down is not None and down.cause is Cause.CONTAINER_MEMORY and down.exit_code == 137 and down.at == T1
    assert down.headline() == "worker died: OutOfMemoryError (container killed at the task's memory limit) at 2026-11-28 09:00:05 UTC"
    assert down.where == f"ECS task 0a1b2c3d4e5f60718293a4b5c6d7e8f9 of service {SERVICE}"
    assert "'OutOfMemoryError: Container killed due to memory usage'" in down.evidence and "(4096 MiB)" in down.fix


def test_the_jvm_exit_code_3_is_an_out_of_memory_error_whose_pool_the_task_log_names():
    exited = _task("2c3d4e5f60718293a4b5c6d7e8f90a1b", T2, exit_code=3)
    down = classify_ecs(_ecs(exited, log=["[2026-11-28 09:41:16,880] INFO ... (x)",
                                          "Terminating due to java.lang.OutOfMemoryError: Java heap space"]))
    assert down is not None and (down.cause, down.exit_code, down.at) == (Cause.HEAP, 3, T2)
    assert "worker.heap with connect.memory" in down.fix and "it ran with -Xmx2g" in down.fix
    assert down.log and "its log: 'Terminating due to java.lang.OutOfMemoryError: Java heap space'" in down.evidence
    unread = classify_ecs(_ecs(exited))  # the log not readable (no logs:GetLogEvents): exit code 3 alone
    assert unread is not None and unread.cause is Cause.OUT_OF_MEMORY and "code 3" in unread.error


def test_a_stop_on_purpose_is_no_death_and_the_newest_death_is_named():
    assert classify_ecs(_ecs(SCALED_IN)) is None
    assert classify_ecs(_ecs()) is None
    down = classify_ecs(_ecs(SCALED_IN, OOM_KILLED))
    assert down is not None and down.cause is Cause.CONTAINER_MEMORY


@pytest.mark.parametrize(("task", "cause"), [
    (_task("3d4e5f60718293a4b5c6d7e8f90a1b2c", T2, exit_code=143, stop_code="ServiceSchedulerInitiated",
           stopped_reason="Task failed ELB health checks in (target-group arn:aws:elasticloadbalancing:eu-west-1:111111111111:"
                          "targetgroup/msk-migrate-dev-connect/0a1b2c3d4e5f6071)"), Cause.HEALTH_CHECK),
    (_task("4e5f60718293a4b5c6d7e8f90a1b2c3d", T2, stop_code="TaskFailedToStart",
           stopped_reason="ResourceInitializationError: unable to pull secrets or registry auth: execution resource retrieval "
                          "failed"), Cause.FAILED_TO_START),
    (_task("5f60718293a4b5c6d7e8f90a1b2c3d4e", T2, reason="CannotPullContainerError: pull image manifest has been retried 5 "
           "time(s)"), Cause.FAILED_TO_START),
    (_task("60718293a4b5c6d7e8f90a1b2c3d4e5f", T2, exit_code=137), Cause.KILLED),
    (_task("718293a4b5c6d7e8f90a1b2c3d4e5f60", T2, exit_code=1), Cause.EXITED),
])
def test_other_deaths_of_a_task_are_named_too(task, cause):
    down = classify_ecs(_ecs(task))
    assert down is not None and down.cause is cause, down


# ---- the client: a load balancer with no worker behind it is an unreachable worker -------------------------
def _answer(status: int, body: str, content_type: str) -> requests.Response:
    r = requests.Response()
    r.status_code, r._content, r.headers["Content-Type"] = status, body.encode(), content_type
    return r


def test_a_load_balancer_page_is_an_unreachable_worker_and_a_connect_error_stays_one(monkeypatch):
    client = ConnectClient("https://connect.dev.corp.example", auth=False, rebalance_wait=0)
    alb = ("<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service "
           "Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n")
    monkeypatch.setattr(client.session, "request", lambda *a, **k: _answer(503, alb, "text/html"))
    with pytest.raises(WorkerUnreachable) as exc:
        client.connectors()
    assert str(exc.value) == ("Connect REST at https://connect.dev.corp.example unreachable: the load balancer answered 503 "
                              "(503 Service Temporarily Unavailable): no worker behind it answers")
    assert (exc.value.url, exc.value.status, exc.value.exit_code) == ("https://connect.dev.corp.example", 503, 2)
    own = json.dumps({"error_code": 503, "message": "Request cannot be completed: the worker is still starting"})
    monkeypatch.setattr(client.session, "request", lambda *a, **k: _answer(503, own, "application/json"))
    with pytest.raises(ConnectRestError) as err:
        client.connectors()
    assert err.value.status == 503 and not isinstance(err.value, WorkerUnreachable)


def test_a_refused_connection_is_an_unreachable_worker_with_todays_message(monkeypatch):
    client = ConnectClient("http://127.0.0.1:9", auth=False)

    def refuse(*a, **k):
        raise requests.ConnectionError("Connection refused")

    monkeypatch.setattr(client.session, "request", refuse)
    with pytest.raises(WorkerUnreachable) as exc:
        client.connectors()
    assert str(exc.value) == "Connect REST at http://127.0.0.1:9 unreachable: ConnectionError: Connection refused"


# ---- local evidence and the command -------------------------------------------------------------------------
def _local_env(base: Path, port: int, lines: list[str]) -> Path:
    """A harness state whose worker ``connect`` (REST ``port``) is recorded with a process that is not running."""
    from msk_migrate.local.connect_worker import local_worker_spec
    from msk_migrate.local.procs import ProcRecord
    from msk_migrate.local.state import LocalState, StateFile

    log = base / "connect" / "connect.log"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(lines) + "\n")
    os.utime(log, (WRITTEN.timestamp(), WRITTEN.timestamp()))
    spec = local_worker_spec(rest_port=port, metrics_port=port + 1).model_copy(update={"heap": "12m"})
    gone = ProcRecord("connect", os.getpid(), started=-1, log=str(log))  # a start time no process has: not alive
    StateFile(base).save(LocalState(workers=[spec], procs={"connect": gone}))
    return log


def test_the_local_evidence_is_the_recorded_worker_of_the_url_port(tmp_path):
    from msk_migrate.local.worker_evidence import local_worker_evidence

    log = _local_env(tmp_path, 40123, HEAP_EXIT)
    ev = local_worker_evidence(tmp_path, "http://127.0.0.1:40123")
    assert ev is not None and (ev.name, ev.alive, ev.log, ev.heap, ev.log_written) == ("connect", False, str(log), "12m", WRITTEN)
    assert list(ev.log_tail) == HEAP_EXIT
    assert local_worker_evidence(tmp_path, "http://127.0.0.1:40124") is None  # another port: not this environment's
    assert local_worker_evidence(tmp_path, "https://connect.dev.corp.example:40123") is None  # not on this machine
    assert local_worker_evidence(tmp_path / "none", "http://127.0.0.1:40123") is None


@pytest.fixture
def closed_port():
    from msk_migrate.local.procs import free_port

    return free_port()  # nothing listens there: the connection is refused at once


def test_connectors_status_names_the_out_of_memory_error_in_one_line_and_in_its_json(tmp_path, monkeypatch, closed_port,
                                                                                    msk_migrate_cli):
    _local_env(tmp_path, closed_port, HEAP_EXIT)
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_ENV_DIR", str(tmp_path))
    url = f"http://127.0.0.1:{closed_port}"
    code, out, err = msk_migrate_cli("connectors", "status", "--connect-url", url)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and out == "", err
    assert lines[0].startswith("error: worker died: OutOfMemoryError (Java heap space) at 2026-11-28 03:33:27 UTC; "
                               f"the Connect worker at {url} is unreachable (process ")
    code, out, err = msk_migrate_cli("connectors", "status", "--connect-url", url, "--output", "json")
    doc = json.loads(out)
    assert code == 2 and json_shape_problems(doc) == []
    assert (doc["command"], doc["verdict"], doc["exit_code"], doc["talked_to"], doc["rows"]) == ("connectors status", "bad-input", 2, {}, [])
    assert doc["error"] == err.strip().removeprefix("error: ")
    assert doc["worker_down"]["cause"] == "heap" and doc["worker_down"]["worker"] == url


def test_without_evidence_the_unreachable_worker_is_reported_as_before(tmp_path, monkeypatch, closed_port, msk_migrate_cli):
    _local_env(tmp_path, closed_port + 1 if closed_port < 65535 else closed_port - 1, HEAP_EXIT)  # another worker's port
    monkeypatch.setenv("MSK_MIGRATE_LOCAL_ENV_DIR", str(tmp_path))
    code, out, err = msk_migrate_cli("connectors", "status", "--connect-url", f"http://127.0.0.1:{closed_port}", "--output", "json")
    assert code == 2 and err.startswith(f"error: Connect REST at http://127.0.0.1:{closed_port} unreachable: ConnectionError")
    doc = json.loads(out)
    assert "worker_down" not in doc and doc["verdict"] == "bad-input" and doc["exit_code"] == 2
