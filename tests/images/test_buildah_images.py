"""The image tier: the three images REALLY built with buildah (chroot isolation, vfs storage) against
the stand-in bases, pushed to a TLS docker-registry on 127.0.0.1 that only accepts the credentials
moto's ECR GetAuthorizationToken issues, checked with skopeo, and run.

`make images` is the same code (msk_migrate.imagebuild.localbuild). The first run on a machine pays for
debootstrap, the stand-ins and the Maven stage (cached under .local/images/ afterwards).
What is not verified here: the public base images themselves (stand-ins from Debian packages replace
them) and the Grafana binary (its stand-in base has none).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest
import requests

from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint, WorkerSpec
from msk_migrate.connectors.worker_env import (
    BASIC_AUTH_EXTENSION,
    ECS_REST,
    ENV_REST_TLS_CA_SEED,
    IMAGE_CONFIG_DIR,
    REST_TLS_DIR,
    RestSecurity,
    worker_environment,
)
from tests.conftest import require
from tests.images.support import ACCOUNT, IMAGES, REGION, REPO, TinyDns, dead_endpoint

# The module fixtures build the stand-in bases and all three images once (debootstrap, apt in chroots, the
# Connect Maven stage): on a fresh 2-core machine that alone can take longer than the suite's 900 s default.
pytestmark = pytest.mark.timeout(3000)

LOCAL = Path(os.environ.get("MSK_MIGRATE_LOCAL_DIR", REPO / ".local"))


@pytest.fixture(scope="session")
def local_build():
    """`make images`, once per session; the registry stays up for the tests, then stops."""
    for tool in ("buildah", "skopeo", "docker-registry", "debootstrap", "htpasswd", "openssl"):
        require(tool, "run `make setup` (scripts/setup-images.sh)")
    from msk_migrate.imagebuild import localbuild

    out = localbuild.run(REPO, LOCAL, list(IMAGES), say=lambda m: print(f"[images] {m}", file=sys.stderr), keep_registry=True)
    yield out
    out["_registry"].stop()


def _store():
    from msk_migrate.imagebuild.buildah import Store

    return Store(LOCAL / "images")


def buildah(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    st = _store()
    proc = subprocess.run(["buildah", *st.global_args(), *args], capture_output=True, text=True, env=st.env(), timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"buildah {' '.join(args[:2])} failed: {proc.stderr[-2000:]}")
    return proc


def _buildah_failed(stderr: str) -> bool:
    """buildah could not run the command at all (its own error), as opposed to the command exiting non-zero."""
    return any(line.startswith(("Error:", "error running container")) for line in stderr.splitlines())


class Container:
    """A buildah working container of an image, removed on exit."""

    def __init__(self, image: str, *from_args: str):
        self.image, self.from_args = image, from_args

    def __enter__(self) -> Container:
        self.name = buildah("from", "--pull=never", *self.from_args, self.image).stdout.strip().splitlines()[-1]
        return self

    def env(self, **values: str) -> Container:
        args = ["config"]
        for key, value in values.items():  # buildah config expands $NAME in values (Go's os.Expand): $$ is a literal $
            args += ["--env", f"{key}={value.replace('$', '$$')}"]
        buildah(*args, self.name)
        return self

    def run(self, *cmd: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``cmd`` in the container; its own exit status and output. buildah's own failure to start it (its
        ``Error:`` line, seen under load with test sessions sharing two cores) is tried twice more:
        that is the tool, not what the test checks; a command's own failure is returned at once."""
        for attempt in range(3):
            proc = buildah("run", "--isolation", "chroot", "--network", "host", self.name, "--", *cmd, check=False, timeout=timeout)
            if proc.returncode == 0 or not _buildah_failed(proc.stderr) or attempt == 2:
                return proc
            time.sleep(2)
        raise AssertionError("unreachable")

    def popen(self, *cmd: str, log: Path) -> subprocess.Popen:
        st = _store()
        return subprocess.Popen(["buildah", *st.global_args(), "run", "--isolation", "chroot", "--network", "host", self.name, "--", *cmd],
                                stdout=log.open("w"), stderr=subprocess.STDOUT, env=st.env(), start_new_session=True)

    def __exit__(self, *exc) -> None:
        buildah("rm", self.name, check=False)


def _uri(local_build, name: str) -> str:
    return local_build["build"]["images"][name]["uri"]


# ---- build, push, skopeo -------------------------------------------------------------------------

def test_every_amd64_image_is_pushed_and_the_manifest_pins_the_registry_digests(local_build):
    manifest = json.loads(Path(local_build["build"]["manifest_path"]).read_text())
    assert Path(local_build["build"]["manifest_path"]).parent == LOCAL / "images"  # never build/ (the stacks' manifest)
    assert (manifest["account"], manifest["region"]) == (ACCOUNT, REGION)
    assert list(manifest["images"]) == list(IMAGES)
    for name in IMAGES:
        entry, seen = manifest["images"][name], local_build["skopeo"][name]
        assert entry["uri"].startswith(f"{local_build['registry']}/msk-migrate-dev-{name}:")
        assert seen["architecture"] == "amd64"
        assert seen["digest"] == entry["digest"]
        assert seen["media_type"] == "application/vnd.docker.distribution.manifest.v2+json"
        assert local_build["build"]["builder"] == "buildah"


def test_pushed_images_run_as_the_dockerfiles_non_root_users_with_their_entrypoints(local_build):
    users = {name: local_build["skopeo"][name]["user"] for name in IMAGES}
    assert users == {"kafka-connect": "10001:10001", "prometheus": "nobody", "grafana": "472", "operator": "65534:65534"}
    assert local_build["skopeo"]["kafka-connect"]["entrypoint"] == ["/opt/kafka-connect/entrypoint.sh"]
    assert local_build["skopeo"]["prometheus"]["entrypoint"] == ["/usr/local/bin/prometheus-entrypoint.sh"]
    assert local_build["skopeo"]["grafana"]["entrypoint"] == ["/usr/local/bin/require-admin-password.sh", "/run.sh"]
    # the operator runs only the runbook command its task sends (msk_migrate.aws.operator_entry): no command override
    assert local_build["skopeo"]["operator"]["entrypoint"] == ["/opt/msk-migrate/bin/python", "-I", "-m", "msk_migrate.commands.in_task"]
    for name in IMAGES:
        labels = local_build["skopeo"][name]["labels"]
        assert labels["org.opencontainers.image.revision"] == local_build["build"]["git_commit"]
        assert labels["org.opencontainers.image.version"] == local_build["build"]["images"][name]["tag"]


def test_local_registry_refuses_anonymous_and_wrong_credentials(local_build):
    reg = local_build["_registry"]
    assert requests.get(f"https://{reg.host}/v2/", verify=str(reg.ca_file), timeout=10).status_code == 401
    assert requests.get(f"https://{reg.host}/v2/", auth=("AWS", "not-the-token"), verify=str(reg.ca_file), timeout=10).status_code == 401


# ---- what is inside, run ------------------------------------------------------------------------

def test_connect_image_holds_the_pinned_runtime_and_policy_jar_and_its_entrypoint_renders_the_worker_config(local_build):
    from msk_migrate.versions import checkout_kafka_version

    kv = checkout_kafka_version(REPO)
    with Container(_uri(local_build, "kafka-connect")) as c:
        libs = c.run("ls", "/opt/kafka-connect/libs").stdout.split()
        assert f"connect-runtime-{kv}.jar" in libs and f"connect-mirror-{kv}.jar" in libs
        assert any(j.startswith("replication-policy-") for j in libs) and any(j.startswith("aws-msk-iam-auth-") for j in libs)
        uid = c.run("id", "-u")
        assert uid.stdout.strip() == "10001", (uid.returncode, uid.stderr[-2000:])
        assert c.run("sh", "-c", "command -v wget || echo none").stdout.strip() == "none"
        # The environment the ECS task definition gives it: rendered by the same function, IAM to MSK.
        target = ClusterEndpoint(alias="target", bootstrap_servers="b-1.example:9098", auth=AuthConfig(mode="iam"))
        env = worker_environment(target, WorkerSpec(), rest=RestSecurity())
        secrets = {name: "from-secrets-manager" for name in env.get("CONNECT_REQUIRED_ENV", "").split()}
        c.env(**env, **secrets, CONNECT_DRY_RUN="1")
        out = c.run("/opt/kafka-connect/entrypoint.sh")
    assert out.returncode == 0, out.stderr
    written = dict(ln.split("=", 1) for ln in out.stdout.splitlines() if "=" in ln and not ln.startswith("#"))
    assert written["bootstrap.servers"] == "b-1.example:9098"
    assert written["sasl.mechanism"] == "AWS_MSK_IAM"
    assert written["rest.extension.classes"].startswith(BASIC_AUTH_EXTENSION)


def test_connect_image_makes_its_rest_certificate_at_start_from_the_internal_ca_seed(local_build):
    """The deployed posture (ECS_REST): the entrypoint runs serving-cert.sh *inside the image* (its openssl and
    keytool), and the worker config points the HTTPS listener at the keystore it wrote."""
    target = ClusterEndpoint(alias="target", bootstrap_servers="b-1.example:9098", auth=AuthConfig(mode="iam"))
    env = worker_environment(target, WorkerSpec(), rest=ECS_REST)
    seed = secrets.token_hex(32)
    values = {name: "from-secrets-manager" for name in env["CONNECT_REQUIRED_ENV"].split()}
    values[ENV_REST_TLS_CA_SEED] = seed
    with Container(_uri(local_build, "kafka-connect")) as c:
        c.env(**env, **values, CONNECT_DRY_RUN="1")
        tls = f"{IMAGE_CONFIG_DIR}/{REST_TLS_DIR}"
        # one run (one /tmp): the entrypoint, then what it left, each part after a marker line
        out = c.run("sh", "-c", f"""/opt/kafka-connect/entrypoint.sh || exit 1
            echo @@; ls {tls}
            echo @@; openssl x509 -in {tls}/cert.pem -noout -ext subjectAltName
            echo @@; openssl verify -CAfile {tls}/ca.pem {tls}/cert.pem || echo NOT-VERIFIED
            echo @@; stat -c '%a %n' {tls}/key.pem {tls}/keystore.p12""")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    config, listing, san, verify, modes = out.stdout.split("@@\n")
    assert {"ca.pem", "cert.pem", "key.pem", "keystore.p12", "truststore.p12", "store-password"} <= set(listing.split()), listing
    assert "IP Address:127.0.0.1" in san and "DNS:localhost" in san, san
    assert verify.strip().endswith("OK") and "NOT-VERIFIED" not in verify, verify
    assert [m.split()[0] for m in modes.splitlines() if m.strip()] == ["600", "600"], modes
    written = dict(ln.split("=", 1) for ln in config.splitlines() if "=" in ln and not ln.startswith("#"))
    assert written["listeners"].startswith("https://")
    assert written["listeners.https.ssl.keystore.location"] == f"{tls}/keystore.p12"
    assert seed not in out.stdout + out.stderr


def test_grafana_image_refuses_to_start_without_a_password_and_hands_over_to_run_sh_with_one(local_build):
    # The stand-in base has NO Grafana binary: its /run.sh only says so. Everything else is the real image.
    with Container(_uri(local_build, "grafana")) as c:
        refused = c.run("/usr/local/bin/require-admin-password.sh", "/run.sh")
        assert refused.returncode == 2 and "GF_SECURITY_ADMIN_PASSWORD is not set" in refused.stderr
        assert c.run("test", "-f", "/etc/grafana/provisioning/datasources/prometheus.yaml").returncode == 0 or \
            c.run("sh", "-c", "ls /etc/grafana/provisioning/datasources/*.yaml").returncode == 0
        assert c.run("sh", "-c", "ls /etc/grafana/dashboards/*.json").returncode == 0
        c.env(GF_SECURITY_ADMIN_PASSWORD="s3cret-from-secrets-manager")
        started = c.run("/usr/local/bin/require-admin-password.sh", "/run.sh")
    assert started.returncode == 0, started.stderr
    assert "grafana stand-in: no Grafana binary" in started.stdout


def test_operator_image_entrypoint_runs_isolated_and_refuses_a_callers_environment_before_anything_runs(local_build):
    # The image's ENTRYPOINT, as ECS starts it with a caller's environment overrides: with -I, PYTHONWARNINGS
    # cannot import antigravity (which would run BROWSER) at interpreter start, and the entrypoint refuses.
    # The stand-in base (imagebuild/standins/python.Containerfile) sets REQUESTS_CA_BUNDLE and PIP_CERT for its
    # own pip; python:3.11.11-slim-bookworm sets neither, and the entrypoint refuses a CA bundle variable.
    unset = ["--env", "REQUESTS_CA_BUNDLE-", "--env", "PIP_CERT-"]
    with Container(_uri(local_build, "operator")) as c:
        entry = json.loads(buildah("inspect", "--type", "container", c.name).stdout)["OCIv1"]["config"]["Entrypoint"]
        buildah("config", *unset, c.name)
        c.env(MSK_MIGRATE_OPERATOR_ARGV=json.dumps(["connectors", "status"]), PYTHONWARNINGS="ignore::antigravity.x",
              BROWSER='sh -c "touch /tmp/pwned" %s')
        hostile = c.run(*entry)
        pwned = c.run("test", "-e", "/tmp/pwned").returncode == 0
    with Container(_uri(local_build, "operator")) as c:
        buildah("config", *unset, c.name)
        c.env(MSK_MIGRATE_OPERATOR_ARGV=json.dumps(["connectors", "status"]))
        bare = c.run(*entry)  # the request alone, on a task definition the stack did not write
    assert hostile.returncode == 2 and "environment variable BROWSER" in hostile.stderr, hostile.stderr
    assert not pwned, "a shell command of the caller's ran in the operator image"
    assert bare.returncode == 2 and "MSK_MIGRATE_STACK_SUBNETS is not set" in bare.stderr, bare.stderr
    assert "Traceback" not in hostile.stderr + bare.stderr


#: Runs "$@" in /tmp (the image's WORKDIR, writable) with a caller's Python environment: a sitecustomize on
#: PYTHONPATH, a module named by a warning filter, a package shadowing msk_migrate in the working directory.
#: Prints the exit code, the stderr lines and which of them ran.
_HOSTILE_PYTHON = r"""
mkdir -p /tmp/evil /tmp/msk_migrate
echo 'open("/tmp/ran-sitecustomize", "w").close()' > /tmp/evil/sitecustomize.py
echo 'open("/tmp/ran-warnings", "w").close()' > /tmp/evil/evilwarn.py
echo 'open("/tmp/ran-startup", "w").close()' > /tmp/evil/startup.py
echo 'open("/tmp/ran-cwd", "w").close()' > /tmp/msk_migrate/__init__.py
cd /tmp
PYTHONPATH=/tmp/evil PYTHONWARNINGS=ignore::evilwarn.X PYTHONSTARTUP=/tmp/evil/startup.py PYTHONINSPECT=1 \
  "$@" </dev/null >/tmp/out.txt 2>/tmp/err.txt
echo "exit=$?"
echo "--- stderr"
cat /tmp/err.txt
echo "--- ran"
ls /tmp | grep '^ran-' || true
"""


def _hostile_python(uri: str, *cmd: str) -> tuple[int, list[str], set[str]]:
    with Container(uri) as c:
        proc = c.run("sh", "-c", _HOSTILE_PYTHON, "sh", *cmd)
    assert proc.returncode == 0, proc.stderr[-2000:]
    head, _, rest = proc.stdout.partition("--- stderr\n")
    stderr, _, ran = rest.partition("--- ran\n")
    return int(head.strip().splitlines()[-1].removeprefix("exit=")), [ln for ln in stderr.splitlines() if ln.strip()], set(ran.split())


def test_operator_image_python_runs_no_code_from_pythonpath_a_warning_filter_or_the_working_directory(local_build):
    """``-I`` in the ENTRYPOINT (issue 42). The control, the same interpreter and module without ``-I``, runs the
    caller's code by each route; the ENTRYPOINT as the image declares it runs none and reaches its own checks."""
    entry = local_build["skopeo"]["operator"]["entrypoint"]
    assert entry[:3] == ["/opt/msk-migrate/bin/python", "-I", "-m"]
    _, _, ran = _hostile_python(_uri(local_build, "operator"), *[a for a in entry if a != "-I"])
    assert {"ran-sitecustomize", "ran-warnings", "ran-cwd"} <= ran, f"the control ran only {sorted(ran)}"
    code, stderr, ran = _hostile_python(_uri(local_build, "operator"), *entry)
    assert ran == set(), f"the caller's code ran before the entrypoint: {sorted(ran)}"
    assert not any(w in ln for ln in stderr for w in ("Traceback", "No module named", "Invalid -W option")), stderr
    assert code == 2 and len(stderr) == 1 and stderr[0].startswith("error: "), (code, stderr)  # no request: refused


def test_operator_image_cli_is_a_regular_install_that_isolated_python_finds_in_site_packages(local_build):
    python, module = local_build["skopeo"]["operator"]["entrypoint"][0], local_build["skopeo"]["operator"]["entrypoint"][-1]
    probe = (f"import importlib.util, sys; print(importlib.util.find_spec({module!r}).origin); print(sys.flags.isolated); "
             "print(any('editable' in type(f).__name__.lower() for f in sys.meta_path))")
    with Container(_uri(local_build, "operator")) as c:
        proc = c.run(python, "-I", "-c", probe)
    assert proc.returncode == 0, proc.stderr[-2000:]
    origin, isolated, editable = proc.stdout.split()
    assert origin.startswith("/opt/msk-migrate/lib/python3.11/site-packages/msk_migrate/"), origin
    assert (isolated, editable) == ("1", "False")


# ---- bad input: one line, exit 2, nothing pushed, no manifest ------------------------------------

def _build_images(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "MSK_MIGRATE_NO_REEXEC": "1",
            "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull, **(env or {})}
    return subprocess.run([sys.executable, str(REPO / "build_images.py"), ACCOUNT, REGION, *args], capture_output=True,
                          text=True, env=full, timeout=timeout, cwd=REPO)


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_unknown_builder_is_one_line_exit_2():
    line = _one_line(_build_images("--builder", "kaniko", "--no-push"))
    assert "--builder" in line and "kaniko" in line and "auto, docker, buildah" in line


def test_buildah_not_installed_is_one_line_exit_2(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "git").symlink_to(shutil.which("git"))
    line = _one_line(_build_images("--builder", "buildah", "--no-push", env={"PATH": str(bindir)}))
    assert "buildah is not installed" in line and "make setup" in line


def test_base_image_missing_with_pulls_disabled_is_one_line_exit_2_and_builds_nothing(tmp_path):
    empty = tmp_path / "local"
    line = _one_line(_build_images("--builder", "buildah", "--local-bases", "--no-push", "--images", "prometheus",
                                   env={"MSK_MIGRATE_LOCAL_DIR": str(empty)}))
    assert "--local-bases: base image prom/prometheus:v2.55.1 is not in buildah's local storage and pulls are disabled" in line
    assert not (empty / "build" / "prometheus.log").exists()


@pytest.fixture
def moto_ecr(moto_url):
    requests.post(f"{moto_url}/moto-api/reset", timeout=10)
    client = boto3.client("ecr", region_name=REGION, endpoint_url=moto_url, aws_access_key_id="testing", aws_secret_access_key="testing")
    for image in IMAGES:
        client.create_repository(repositoryName=f"msk-migrate-dev-{image}", imageTagMutability="IMMUTABLE")
    return moto_url


def test_registry_refusing_the_ecr_credentials_is_one_line_exit_2_and_nothing_is_pushed(moto_ecr, tmp_path):
    from msk_migrate.imagebuild import localregistry

    require("docker-registry", "run `make setup` (scripts/setup-images.sh)")
    reg = localregistry.start(tmp_path / "registry", "AWS", "a-password-ecr-never-issued")
    manifest = LOCAL / "images" / f"manifest-{ACCOUNT}-{REGION}.json"
    before = manifest.read_text() if manifest.exists() else None
    try:
        line = _one_line(_build_images("--builder", "buildah", "--local-bases", "--registry", reg.host, "--registry-ca", str(reg.ca_file),
                                       "--images", "grafana", env={"AWS_ENDPOINT_URL_ECR": moto_ecr}))
        assert f"registry {reg.host}: refused the ECR token's credentials (401)" in line
        catalog = requests.get(f"https://{reg.host}/v2/_catalog", auth=("AWS", "a-password-ecr-never-issued"), verify=str(reg.ca_file), timeout=10)
        assert catalog.json()["repositories"] == []
        assert (manifest.read_text() if manifest.exists() else None) == before  # no manifest written
    finally:
        reg.stop()


def test_unreachable_registry_is_one_line_exit_2(moto_ecr, tmp_path):
    host = dead_endpoint().removeprefix("http://")
    ca = tmp_path / "ca.pem"
    ca.write_text("not used: nothing answers\n")
    line = _one_line(_build_images("--builder", "buildah", "--registry", host, "--registry-ca", str(ca), "--images", "grafana",
                                   env={"AWS_ENDPOINT_URL_ECR": moto_ecr}))
    assert f"registry {host} is unreachable" in line


# ---- run what was built: the Connect worker from the image, Prometheus from its image -------------

def test_the_worker_from_the_image_copies_to_a_proven_match_and_the_prometheus_image_scrapes_it(local_build, tmp_path):
    """The runbook through `validate` with Connect from the image: the image's part is its worker (plugins, policy JAR,
    JMX agent), which every later step uses the same way; test_rehearsal.py walks the rest with the local worker, and
    `make rehearse WORKER=image` walks all of it with this one."""
    require("java", "install a Java 17 JDK")
    from msk_migrate.local.harness import LocalEnvironment
    from msk_migrate.rehearsal import rehearse

    base = tmp_path / "env"
    os.environ.pop("MSK_MIGRATE_WORKER", None)
    try:
        res = rehearse(with_monitoring=False, validate=True, base_dir=base, worker="image", through="validate")
        assert json.loads((base / "connect" / "image.json").read_text())["image"].startswith("localhost/msk-migrate/kafka-connect:")
        failed = [s.to_dict() for s in res.steps if not s.ok]
        assert res.ok and not failed, failed or res.to_dict()
        assert [s.name for s in res.steps][-1] == "validate", [s.name for s in res.steps]
        assert res.validation.get("verdict") == "match", res.to_dict()
        metrics_port = LocalEnvironment(base).worker_spec().metrics_port
        metrics = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text
        assert "kafka_connect" in metrics  # the image's JMX agent and rules

        # Prometheus from its image: the entrypoint renders the config from the task environment and
        # discovers the worker through DNS (a one-name DNS server stands in for Cloud Map).
        dns = TinyDns("connect.msk-migrate.internal")
        from msk_migrate.local.procs import free_port

        port = free_port()
        log = tmp_path / "prometheus.log"
        try:
            with Container(_uri(local_build, "prometheus"), "--dns", dns.ip) as c:
                # the web credentials as ECS injects them from the prometheus-web secret (bcrypt hash + password)
                user, password = "mm2-operator", secrets.token_urlsafe(18)
                bcrypt_hash = subprocess.run(["htpasswd", "-niB", "-C", "10", user], input=password, capture_output=True,
                                             text=True, check=True).stdout.strip().split(":", 1)[1]
                c.env(MM2_CONNECT_DNS_NAME="connect.msk-migrate.internal", MM2_CONNECT_METRICS_PORT=str(metrics_port),
                      MM2_ENVIRONMENT="rehearsal", MM2_PROMETHEUS_WEB_USER=user, MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT=bcrypt_hash,
                      MM2_PROMETHEUS_WEB_PASSWORD=password)
                proc = c.popen("/usr/local/bin/prometheus-entrypoint.sh", "--config.file=/etc/prometheus/prometheus.yml",
                               "--storage.tsdb.path=/prometheus", f"--web.listen-address=127.0.0.1:{port}", log=log)
                try:
                    deadline, up = time.monotonic() + 180, []
                    while time.monotonic() < deadline and proc.poll() is None:
                        try:
                            targets = requests.get(f"http://127.0.0.1:{port}/api/v1/targets", auth=(user, password),
                                                   timeout=5).json()["data"]["activeTargets"]
                            up = [t for t in targets if t["labels"].get("job") == "kafka-connect" and t["health"] == "up"]
                            if up:
                                break
                        except (requests.RequestException, ValueError, KeyError):
                            pass
                        time.sleep(2)
                    assert up, log.read_text()[-3000:]
                    assert up[0]["labels"]["instance"] == f"127.0.0.1:{metrics_port}"
                    assert up[0]["labels"]["dns_name"] == "connect.msk-migrate.internal"
                    assert "scraping connect.msk-migrate.internal" in log.read_text()
                    assert requests.get(f"http://127.0.0.1:{port}/api/v1/targets", timeout=5).status_code == 401
                finally:
                    with contextlib.suppress(ProcessLookupError):  # the entrypoint may have exited on its own
                        os.killpg(proc.pid, 15)
                    proc.wait(timeout=30)
        finally:
            dns.close()
    finally:
        env = LocalEnvironment(base)
        rest_port = env.worker_spec().rest_port if (base / "state.json").exists() else None
        env.down(wipe=True)
        os.environ.pop("MSK_MIGRATE_WORKER", None)
        if rest_port:  # stopping the recorded `buildah run` stopped the worker inside the container too
            from msk_migrate.local.procs import port_open

            assert not port_open(rest_port), "the Connect worker from the image outlived `local down`"
        from msk_migrate.local.image_worker import remove_container

        remove_container(base / "connect")
