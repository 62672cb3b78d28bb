"""Shared fixtures. The local environment (source 3.9 + target 4.1 KRaft clusters and one Connect
worker with MM2) is started ONCE per test session and shared by every suite that needs Kafka."""

from __future__ import annotations

import faulthandler
import gc
import os
import shutil
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def require(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if not path:
        pytest.fail(f"{tool} is required for this test: {hint}", pytrace=False)
    return path


# ---- test tiers --------------------------------------------------------------------------------
# Every test gets exactly the markers of what it needs, derived from the fixtures it uses (directly or
# through other fixtures) and, for tests that start a tool themselves, from its module's ``TIERS``.
# A test that needs nothing gets ``unit``: `make test-unit` runs those in seconds with no server.
#   kafka       local KRaft brokers / Connect workers        spark       local Spark + spark-sql-kafka
#   infra       cdktf synth / terraform                      prometheus  Debian prometheus / promtool
#   aws         moto's server                                images      buildah / registry / skopeo
#   jvm         Maven builds, keytool (a JVM start)          faults      fault injection (slow)
#   cli         every command fed malformed values (hundreds of in-process runs, minutes)
HEAVY_TIERS = ("kafka", "spark", "infra", "prometheus", "aws", "images", "jvm", "faults", "cli")
FIXTURE_TIERS = {
    "local_env": "kafka", "clusters": "kafka", "spark": "spark", "synth": "infra",
    "terraform_bin": "infra", "terraform_env": "infra", "promtool": "prometheus",
    "prometheus_bin": "prometheus", "moto_url": "aws", "moto_s": "aws", "aws_endpoints": "aws",
    "registry_pair": "jvm",  # two Apicurio Registries (a Java 21+ application each)
}

#: Tests that start a component themselves (a CLI subprocess, Maven), by node-id prefix.
PATH_TIERS = {
    "tests/integration/": "kafka",
    "tests/faults/": "faults",
    "tests/unit/test_cli_bad_input.py": "cli",
    "tests/images/test_dockerfiles.py::test_connect_maven_stage": "jvm",
    "tests/images/test_buildah_images.py": "images",
    # Grafana's people script run by bash and curl against a local server, with its bounded waits (seconds).
    "tests/images/test_grafana_people.py": "images",
    "tests/infra/test_infra_cdktf_cli.py": "infra",
    "tests/infra/test_infra_checkov.py": "infra",
    "tests/infra/test_infra_terraform.py": "infra",
    "tests/infra/test_infra_credentials_state.py": "infra",
    "tests/infra/test_infra_target_cluster_survives_teardown.py": "infra",
    "tests/infra/test_infra_environment_config.py": "infra",
    "tests/infra/test_infra_synth.py": "infra",
    "tests/infra/test_infra_grafana_people.py": "infra",
    "tests/infra/test_infra_operator_endpoints.py": "infra",
    "tests/infra/test_infra_container_hardening.py": "infra",
    # infra/main.py --check and the synth run as subprocesses (a Python start with the package's imports each)
    "tests/infra/test_infra_aws_endpoints.py": "infra",
    "tests/validation/test_validation_differences.py": "spark",
    "tests/validation/test_validation_edge_cases.py": "spark",
    # Not unit tests by the tier's own rule (no JVM, no Terraform): importing the ECS construct module loads
    # the cdktf provider bindings (about 10 s of CPU); the package build resolves jars with Maven.
    "tests/infra/test_infra_task_tls.py": "infra",
    "tests/validation/test_validation_units.py::test_package_builds_the_emr_and_glue_artefacts": "jvm",
    # serving-cert.sh --pkcs12 (and the entrypoint of an HTTPS worker) runs keytool: two JVM starts a call.
    "tests/unit/test_serving_cert.py::test_pkcs12_stores_hold_the_key_chain_and_the_ca_as_a_trusted_entry": "jvm",
    "tests/unit/test_serving_cert.py::test_entrypoint_makes_the_rest_certificate_and_writes_the_store_passwords_masked_in_dry_run": "jvm",
    "tests/unit/test_serving_cert.py::test_the_advertised_host_is_named_in_the_certificate_as_an_address_or_a_name": "jvm",
}


#: Modules without a single unit test (every test needs a tool, through its fixtures): `-m unit` does not import
#: them either. A full run fails if one of them gains a unit test, so none is left out of the unit tier unseen.
NO_UNIT_TESTS = (
    "tests/images/test_build_images.py",
    "tests/monitoring/test_live_monitoring.py",
    "tests/monitoring/test_prometheus_tls.py",
    "tests/unit/test_operator_boundary.py",
    "tests/unit/test_preflight_in_vpc.py",
    "tests/validation/test_validation_emr_serverless.py",
    "tests/validation/test_validation_standalone.py",
)


def pytest_ignore_collect(collection_path, config):
    """`-m unit` does not even import the modules that are heavy as a whole (cdktf, buildah, Kafka), nor those
    that hold no unit test: importing a test module is most of the unit tier's time."""
    if (config.getoption("markexpr", "") or "").strip() != "unit":
        return None
    rel = collection_path.resolve().relative_to(REPO).as_posix() if collection_path.is_relative_to(REPO) else ""
    if rel in NO_UNIT_TESTS:
        return True
    for prefix in PATH_TIERS:
        if "::" not in prefix and (rel == prefix.rstrip("/") or rel.startswith(prefix if prefix.endswith("/") else prefix + "/")):
            return True
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        tiers = {FIXTURE_TIERS[f] for f in getattr(item, "fixturenames", ()) if f in FIXTURE_TIERS}
        tiers |= {tier for prefix, tier in PATH_TIERS.items() if item.nodeid.startswith(prefix)}
        tiers |= set(getattr(item.module, "TIERS", ()))
        marks = {m.name for m in item.iter_markers()}
        tiers |= marks & set(HEAVY_TIERS)
        if "integration" in marks:
            tiers.add("kafka")
        for tier in sorted(tiers):
            item.add_marker(getattr(pytest.mark, tier))
        if not tiers:
            item.add_marker(pytest.mark.unit)
            if item.nodeid.split("::")[0] in NO_UNIT_TESTS:
                raise pytest.UsageError(f"{item.nodeid} is a unit test in a module `-m unit` skips: "
                                        "take the module out of NO_UNIT_TESTS (tests/conftest.py)")


# The garbage collector runs on the main thread only, between tests. Left automatic, it runs in whatever thread
# allocates when its threshold is crossed: moto's server thread, the follower's metrics thread, py4j's, or
# librdkafka's own background thread delivering an admin result; a librdkafka handle in an unreachable cycle freed
# there closes from a thread that may not (a consumer's implicit close calls back into Python from the wrong thread
# state, confluentinc/confluent-kafka-python#1761; librdkafka forbids destroying a client from its own threads),
# and the interpreter segfaults. So it is switched off for the session and run here: the young generations after
# every test (milliseconds), a full collection after a failed test (what it held is freed at once) and otherwise
# at most every FULL_COLLECTION_SECONDS (a full collection of the session's heap takes about 0.2 s: once per
# module it was most of the unit tier's time).
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        if call.when == "call":
            item.stash[_FAILED] = True
        # Written at once, not only in the summary: a session that dies later (a signal) prints no summary.
        log = getattr(item.config, "_msk_failure_log", None)
        if log is not None:
            log.write(f"==== {report.nodeid} ({call.when})\n{report.longreprtext}\n\n")
            log.flush()


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """A fatal signal's Python tracebacks (every thread) also go to a file of this session: captured output
    (capfd) can swallow what pytest's own faulthandler prints, and a crashed session prints no summary.
    scripts/test_python.sh shows the file when a session dies of a signal."""
    logs = REPO / ".local" / "test-logs"
    logs.mkdir(parents=True, exist_ok=True)
    config._msk_fault_log = (logs / f"faulthandler-{os.getpid()}.log").open("w")
    config._msk_failure_log = (logs / f"failures-{os.getpid()}.log").open("w")
    config._msk_current_test = logs / f"current-{os.getpid()}"
    config._msk_threads_log = (logs / f"threads-{os.getpid()}.log").open("w")
    gc.disable()  # collected on the main thread between tests (pytest_runtest_teardown)
    # A zero threshold also keeps automatic collection off should a library call gc.enable() (pyspark's
    # Broadcast.load re-enables it unconditionally).
    gc.set_threshold(0)
    faulthandler.enable(file=config._msk_fault_log, all_threads=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """The test this session is in, kept in a file: a session killed by a signal prints no summary, and
    scripts/test_python.sh names the test it died in."""
    path = getattr(item.config, "_msk_current_test", None)
    if path is not None:
        path.write_text(item.nodeid + "\n")


def _log_threads(item) -> None:
    """One line per module: the threads alive after it (Python's, and the process's own, which counts
    librdkafka's and the JVM bridges'). A module that leaks clients or threads shows here before it can crash a
    later one."""
    log = getattr(item.config, "_msk_threads_log", None)
    if log is None:
        return
    native = "?"
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Threads:"):
                native = line.split()[1]
    except OSError:
        pass
    log.write(f"{item.nodeid.split('::')[0]}: python threads {threading.active_count()}, process threads {native}\n")
    log.flush()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    if nextitem is None or nextitem.module is not item.module:
        # The test clients kept per bootstrap (kafka_helpers) go with the module that made them: a rehearsal's
        # clusters are gone by then, and a client left reconnecting for the rest of the session to a port that
        # a later cluster (another cluster id) may take is librdkafka state no test needs.
        helpers = sys.modules.get("tests.kafka_helpers")
        if helpers is not None:
            helpers.close_all()
        _log_threads(item)
    global _last_full_collection
    now = time.monotonic()
    if item.stash.get(_FAILED, False) or nextitem is None or now - _last_full_collection >= FULL_COLLECTION_SECONDS:
        gc.collect()
        _last_full_collection = time.monotonic()
    else:
        gc.collect(1)


FULL_COLLECTION_SECONDS = 30.0
_last_full_collection = time.monotonic()


@pytest.fixture(scope="session")
def local_env():
    """Started once; torn down at the end of the session (processes stopped, data wiped)."""
    require("java", "install a Java 17 JDK (make setup does not install Java)")
    require("mvn", "install Maven (apt-get install maven)")
    from msk_migrate.local.harness import LocalEnvironment

    # One directory per pytest process, so concurrent sessions never stop each other's clusters.
    base = Path(os.environ.get("MSK_MIGRATE_TEST_ENV_DIR", REPO / ".local" / "test-env" / f"session-{os.getpid()}"))
    env = LocalEnvironment(base)
    env.down(wipe=True)
    env.up()
    yield env
    env.down(wipe=os.environ.get("MSK_MIGRATE_KEEP_TEST_ENV") != "1")


@pytest.fixture
def msk_migrate_cli(capfd):
    """``msk-migrate ARGV`` in this process, behind the entry point's own error boundary: (exit code, stdout,
    stderr). A subprocess would pay the package's import (about 1.5 s) once per call."""
    from msk_migrate.cliutil import run_cli
    from msk_migrate.commands.root import cli

    def run(*argv: str) -> tuple[int, str, str]:
        capfd.readouterr()
        code = run_cli(cli, list(argv), "msk-migrate")
        out, err = capfd.readouterr()
        return code, out, err

    return run


@pytest.fixture
def unique():
    """A short unique suffix for topic and group names, so tests never share data."""
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
def moto_url():
    """moto's server on a free port of 127.0.0.1, once per session (suites that reset its state define their own)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()
