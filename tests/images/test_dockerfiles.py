"""The Dockerfiles: lint, pinning, the contract with entrypoint.sh and the monitoring files, the Maven
build stage (run for real, outside Docker) and Grafana's admin-password guard.

Nothing in this file builds an image: tests/images/test_buildah_images.py builds them for real."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.images.support import REPO

IMAGES_DIR = REPO / "images"
DOCKERFILES = sorted(IMAGES_DIR.glob("*/Dockerfile"))
HADOLINT = REPO / ".venv" / "bin" / "hadolint"
CONNECT = IMAGES_DIR / "kafka-connect" / "Dockerfile"
GUARD = IMAGES_DIR / "grafana" / "require-admin-password.sh"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    current = ""
    for raw in dockerfile.read_text().splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if current and line.startswith("#"):
            continue
        current += (" " if current else "") + line.rstrip("\\").strip()
        if not line.endswith("\\"):
            word, _, rest = current.partition(" ")
            out.append((word.upper(), rest))
            current = ""
    return out


def stages(dockerfile: Path) -> list[list[tuple[str, str]]]:
    out: list[list[tuple[str, str]]] = []
    for ins in instructions(dockerfile):
        if ins[0] == "FROM":
            out.append([])
        if out:
            out[-1].append(ins)
    return out


def test_there_is_a_dockerfile_per_image():
    from msk_migrate.imagebuild.images import IMAGES

    assert [p.parent.name for p in DOCKERFILES] == ["grafana", "kafka-connect", "operator", "prometheus"]
    assert sorted(IMAGES) == [p.parent.name for p in DOCKERFILES]


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_hadolint_passes_at_the_strictest_threshold(dockerfile, tmp_path):
    config = tmp_path / "hadolint.yaml"
    config.write_text("failure-threshold: style\n")  # our own config: no repo-wide ignores sneak in
    proc = subprocess.run([str(HADOLINT), "--no-color", "-c", str(config), str(dockerfile)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_every_hadolint_ignore_is_justified_inline(dockerfile):
    lines = dockerfile.read_text().splitlines()
    for i, line in enumerate(lines):
        if "hadolint ignore" in line:
            justification = line.split("hadolint ignore", 1)[1].partition(" ")[2].strip(" -:#")
            previous = lines[i - 1].strip() if i else ""
            assert justification or (previous.startswith("#") and len(previous) > 10), f"{dockerfile}:{i + 1} ignore without a reason"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_every_base_image_is_a_pinned_release_named_by_an_arg_the_stand_ins_can_override(dockerfile):
    from msk_migrate.imagebuild.bases import read_bases

    bases = {f"${{{b.arg}}}": b for b in read_bases(dockerfile)}
    names = [s[0][1].split(" AS ")[0].split() for s in stages(dockerfile)]
    for words in names:
        image = next(w for w in words if not w.startswith("--"))
        assert image in bases, f"{dockerfile.parent.name}: FROM {image} is not a *_IMAGE ARG (tests could not use a stand-in)"
    for base in bases.values():
        assert base.tag != "latest" and re.search(r"\d+\.\d+\.\d+", base.tag), f"{base.pinned} is not pinned to a release"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_every_base_image_is_pinned_by_digest_and_its_stand_in_is_named_by_the_same_tag(dockerfile):
    from msk_migrate.imagebuild.bases import read_bases
    from msk_migrate.imagebuild.standins import CONTAINERFILES, HERE

    bases = read_bases(dockerfile)
    assert bases, f"{dockerfile.parent.name}: no *_IMAGE base"
    for base in bases:
        assert base.digest, f"{dockerfile.parent.name}: {base.pinned} is pinned by tag only (a tag can move)"
        assert base.pinned == f"{base.by_tag}@{base.digest}"
        # The stand-in a local build resolves instead (tagged base.by_tag) is found by repository, and its
        # Containerfile says which release it stands in for: the one pinned here.
        containerfile = HERE / CONTAINERFILES[base.name]
        header = containerfile.read_text().splitlines()[0]
        assert header.startswith(f"# Stand-in for {base.by_tag}"), f"{containerfile.name} says {header!r}; the Dockerfile pins {base.by_tag}"
    assert "TAG ONLY" not in dockerfile.read_text()


def test_operator_image_runs_as_nobody_behind_the_runbook_entrypoint_with_no_command():
    text = (IMAGES_DIR / "operator" / "Dockerfile").read_text()
    runtime = stages(IMAGES_DIR / "operator" / "Dockerfile")[-1]
    assert ("USER", "65534:65534") in runtime
    # ECS overrides replace CMD, never the entrypoint: the entrypoint alone decides what runs (issue 37)
    # -I: the interpreter ignores PYTHON* variables, the user site and the working directory, so an ECS
    # environment override (PYTHONPATH, PYTHONWARNINGS, PYTHONSTARTUP...) runs nothing before the entrypoint's checks
    assert ("ENTRYPOINT", '["/opt/msk-migrate/bin/python", "-I", "-m", "msk_migrate.commands.in_task"]') in runtime
    assert not any(ins == "CMD" for ins, _ in runtime)
    # Run-time dependencies only (no Spark), every file hash-checked against the lock (issue 37), built by the
    # hash-checked backend of requirements-build.lock (issue 42).
    assert "--require-hashes --no-deps --no-build-isolation -r /tmp/runtime.lock" in text and "lock_subset.py requirements.lock /src" in text
    # The CLI installed as a regular package (not editable): `python -I -m msk_migrate...` finds it in site-packages.
    assert "pip install --quiet --no-deps --no-build-isolation /src" in text and " -e " not in text
    assert "pyspark" not in text and "PIP_CONSTRAINT" not in text


def test_connect_runtime_is_a_pinned_java_17_jre_running_as_a_numeric_non_root_user():
    from msk_migrate.imagebuild.bases import read_bases

    build, runtime = stages(CONNECT)
    jre = {b.arg: b for b in read_bases(CONNECT)}["JRE_IMAGE"]
    assert runtime[0][1] == "${JRE_IMAGE} AS runtime"
    assert re.fullmatch(r"eclipse-temurin:17\.0\.\d+_\d+-jre-jammy", jre.by_tag)
    users = [args for ins, args in runtime if ins == "USER"]
    assert users and re.fullmatch(r"[1-9]\d{3,}(:[1-9]\d{3,})?", users[-1])
    runs = " ".join(args for ins, args in runtime if ins == "RUN")
    assert "apt-get install" not in runs and not re.search(r"\b(ssh|openssh|maven|mvn|gcc|make|jdk)\b", runs)
    # The only thing taken from the Maven stage is its output directory.
    assert all("--from=build /out/" in args for ins, args in runtime if ins == "COPY" and "--from" in args)
    assert "--platform=$BUILDPLATFORM" in build[0][1]  # jars are portable: Maven runs natively on ARM laptops


def _entrypoint_default(var: str) -> str:
    text = (IMAGES_DIR / "kafka-connect" / "entrypoint.sh").read_text()
    m = re.search(r"\$\{" + var + r":-([^}]+)\}", text)
    assert m, f"entrypoint.sh has no default for {var}"
    return m.group(1)


def test_connect_image_puts_jars_agent_and_rules_where_the_entrypoint_looks_by_default():
    copies = {args.split()[-1]: args.split()[-2] for ins, args in stages(CONNECT)[-1] if ins == "COPY"}
    assert _entrypoint_default("CONNECT_CLASSPATH") == "/opt/kafka-connect/libs/*"
    assert copies["/opt/kafka-connect/libs/"] == "/out/libs/"
    assert copies[_entrypoint_default("JMX_AGENT_JAR")] == "/out/jmx_prometheus_javaagent.jar"
    assert copies[_entrypoint_default("JMX_EXPORTER_CONFIG")] == "prometheus/jmx-exporter/kafka-connect-mm2.yaml"
    entry = [args for ins, args in stages(CONNECT)[-1] if ins == "ENTRYPOINT"]
    assert entry == ['["/opt/kafka-connect/entrypoint.sh"]']
    assert copies["/opt/kafka-connect/entrypoint.sh"] == "images/kafka-connect/entrypoint.sh"
    assert _entrypoint_default("CONNECT_CONFIG_DIR").startswith("/tmp/")  # writable by the non-root user


def _dockerignore_allows(rel: str) -> bool:
    """Last matching pattern wins (Docker's rule), for the simple patterns our .dockerignore uses."""
    allowed = True
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.lstrip("!").rstrip("/")
        if pattern == "*":
            matches = True
        elif pattern.startswith("**/"):
            matches = f"/{pattern[3:]}/" in f"/{rel}/"
        else:
            matches = rel == pattern or rel.startswith(pattern + "/")
        if matches:
            allowed = negate
    return allowed


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_every_copied_repository_file_exists_and_is_in_the_build_context(dockerfile):
    for ins, args in instructions(dockerfile):
        if ins != "COPY" or "--from" in args:
            continue
        sources = [a for a in args.split()[:-1] if not a.startswith("--")]
        for source in sources:
            matches = sorted(REPO.glob(source.rstrip("/"))) if any(c in source for c in "*?[") else [REPO / source.rstrip("/")]
            assert matches and all(m.exists() for m in matches), f"{dockerfile.parent.name}: COPY source {source} is missing"
            for m in matches:
                files = [m] if m.is_file() else [f for f in m.rglob("*") if f.is_file()]
                for f in files:
                    rel = f.relative_to(REPO).as_posix()
                    if "/target/" not in f"/{rel}" and "/__pycache__/" not in f"/{rel}":  # build outputs: excluded on purpose
                        assert _dockerignore_allows(rel), f"{rel} is excluded by .dockerignore"


def test_dockerignore_keeps_maven_output_and_the_rest_of_the_repo_out_of_the_context():
    for rel in ("jvm/replication-policy/target/x.jar", "python/msk_migrate/__pycache__/cli.cpython-311.pyc", ".git/HEAD", ".venv/bin/python",
                ".local/build/kafka-connect.log", "build/manifest-1-r.json", "docs/images.md"):
        assert not _dockerignore_allows(rel), rel
    for rel in ("jvm/pom.xml", "images/kafka-connect/entrypoint.sh", "prometheus/rules/x.yml", "grafana/dashboards/x.json",
                "python/msk_migrate/cli.py", "pyproject.toml", "requirements.lock", "requirements-build.lock"):  # the operator image installs the CLI
        assert _dockerignore_allows(rel), rel


def test_prometheus_rule_files_are_where_the_baked_config_looks():
    config = yaml.safe_load((REPO / "prometheus" / "prometheus.yml").read_text())
    copies = {args.split()[-1]: args.split()[-2] for ins, args in instructions(IMAGES_DIR / "prometheus" / "Dockerfile") if ins == "COPY"}
    assert copies["/etc/prometheus/prometheus.yml"] == "prometheus/prometheus.yml"
    assert copies["/etc/prometheus/rules/"] == "prometheus/rules/*.yml"
    for pattern in config.get("rule_files") or []:
        in_image = pattern if pattern.startswith("/") else f"/etc/prometheus/{pattern}"
        assert in_image.startswith("/etc/prometheus/rules/"), f"rule_files entry {pattern} is not under the baked rules dir"


def test_grafana_dashboard_provider_reads_the_directory_the_image_fills():
    providers = sorted((REPO / "grafana" / "provisioning" / "dashboards").glob("*.y*ml"))
    assert providers, "grafana/provisioning/dashboards/*.yaml is missing"
    paths = [p["options"]["path"] for f in providers for p in yaml.safe_load(f.read_text()).get("providers", [])]
    assert paths and all(path.rstrip("/") == "/etc/grafana/dashboards" for path in paths), paths
    assert sorted((REPO / "grafana" / "provisioning" / "datasources").glob("*.y*ml")), "no provisioned datasource"


def test_grafana_uids_have_the_format_grafana_12_enforces():
    """Grafana 12 rejects a provisioned data source whose uid is not letters, digits and dashes, at most 40
    characters (upgrade guide v12.0: failWrongDSUID on by default); dashboards and folders use the same rule."""
    valid = re.compile(r"[A-Za-z0-9-]{1,40}")
    provisioning = REPO / "grafana" / "provisioning"
    uids = [d["uid"] for f in sorted((provisioning / "datasources").glob("*.y*ml")) for d in yaml.safe_load(f.read_text())["datasources"]]
    providers = [p for f in sorted((provisioning / "dashboards").glob("*.y*ml")) for p in yaml.safe_load(f.read_text())["providers"]]
    uids += [p["folderUid"] for p in providers if "folderUid" in p]
    uids += [json.loads(f.read_text())["uid"] for f in sorted((REPO / "grafana" / "dashboards").glob("*.json"))]
    assert len(uids) >= 3
    assert [u for u in uids if not valid.fullmatch(u)] == []


def test_grafana_image_turns_anonymous_access_off_and_bakes_no_admin_password():
    text = (IMAGES_DIR / "grafana" / "Dockerfile").read_text()
    assert re.search(r"GF_AUTH_ANONYMOUS_ENABLED=false", text)
    assert not re.search(r"GF_SECURITY_ADMIN_PASSWORD\w*=", text)
    entry = [args for ins, args in instructions(IMAGES_DIR / "grafana" / "Dockerfile") if ins == "ENTRYPOINT"]
    assert entry == ['["/usr/local/bin/require-admin-password.sh", "/run.sh"]']


def _guard(env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(GUARD), *(command or ("echo", "grafana started"))], capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], **env})


def test_grafana_refuses_to_start_without_an_admin_password():
    proc = _guard({})
    assert proc.returncode == 2 and proc.stdout == ""
    assert "GF_SECURITY_ADMIN_PASSWORD is not set" in proc.stderr


def test_grafana_refuses_to_start_with_the_default_admin_password():
    proc = _guard({"GF_SECURITY_ADMIN_PASSWORD": "admin"})
    assert proc.returncode == 2 and "default" in proc.stderr


def test_grafana_starts_with_the_password_from_the_environment():
    proc = _guard({"GF_SECURITY_ADMIN_PASSWORD": "s3cret-from-secrets-manager"}, "sh", "-c", "echo started as $GF_SECURITY_ADMIN_PASSWORD")
    assert proc.returncode == 0 and proc.stdout.strip() == "started as s3cret-from-secrets-manager"


def test_grafana_accepts_a_password_file_and_refuses_an_empty_one(tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("from-a-file\n")
    assert _guard({"GF_SECURITY_ADMIN_PASSWORD__FILE": str(secret)}).returncode == 0
    secret.write_text("")
    proc = _guard({"GF_SECURITY_ADMIN_PASSWORD__FILE": str(secret)})
    assert proc.returncode == 2 and "is empty" in proc.stderr


def _maven_stage_script() -> str:
    build = stages(CONNECT)[0]
    [run] = [args for ins, args in build if ins == "RUN"]
    return re.sub(r"^--mount=\S+\s+", "", run)


@pytest.mark.parametrize("kafka_version", ["", "4.1.2"], ids=["pinned-3.9", "kafka-4.1"])
def test_connect_maven_stage_builds_the_policy_jar_and_the_runtime_classpath(tmp_path, kafka_version):
    """Runs the build stage's RUN script outside Docker, on a copy of jvm/, with /out redirected."""
    if not shutil.which("mvn"):
        pytest.fail("mvn is required: apt-get install maven", pytrace=False)
    src = tmp_path / "src"
    shutil.copytree(REPO / "jvm", src / "jvm", ignore=shutil.ignore_patterns("target"))
    out = tmp_path / "out"
    script = _maven_stage_script().replace("/out/", f"{out}/")
    proc = subprocess.run(["sh", "-c", script], cwd=src, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "KAFKA_VERSION": kafka_version})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    jars = {p.name for p in (out / "libs").iterdir()}
    expected = kafka_version or re.search(r"<kafka.version>(.+)</kafka.version>", (REPO / "jvm" / "pom.xml").read_text()).group(1)
    for name in ("connect-runtime", "connect-mirror", "connect-mirror-client", "connect-json", "kafka-clients"):
        assert f"{name}-{expected}.jar" in jars
    assert any(j.startswith("replication-policy-") for j in jars)
    assert any(j.startswith("aws-msk-iam-auth-") for j in jars)
    assert not any("jmx_prometheus" in j for j in jars)  # the agent is not on the classpath twice
    assert (out / "jmx_prometheus_javaagent.jar").is_file()


def _materialize_copies(dockerfile: Path, root: Path) -> None:
    """Lays out the files a Dockerfile COPYs from the repository under ``root`` (the image's /)."""
    for ins, args in instructions(dockerfile):
        if ins != "COPY" or "--from" in args:
            continue
        *sources, dest = [a for a in args.split() if not a.startswith("--")]
        for source in sources:
            matches = sorted(REPO.glob(source)) if any(c in source for c in "*?[") else [REPO / source.rstrip("/")]
            for m in matches:
                target = root / dest.lstrip("/")
                if dest.endswith("/"):
                    target = target / m.name if m.is_file() else target
                if m.is_dir():
                    shutil.copytree(m, target, dirs_exist_ok=True)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(m, target)


def test_prometheus_image_layout_renders_checks_and_starts_through_its_entrypoint(tmp_path):
    """The baked files + ENTRYPOINT + CMD of images/prometheus, run outside Docker with the Debian
    promtool and a stand-in for /bin/prometheus that records its arguments."""
    promtool = shutil.which("promtool")
    if not promtool:
        pytest.fail("promtool is required: apt-get install prometheus", pytrace=False)
    dockerfile = IMAGES_DIR / "prometheus" / "Dockerfile"
    root = tmp_path / "image"
    _materialize_copies(dockerfile, root)
    # What the build's RUN does: the baked config and rules parse.
    check = subprocess.run([promtool, "check", "config", str(root / "etc/prometheus/prometheus.yml")], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    entrypoint = json.loads([a for i, a in instructions(dockerfile) if i == "ENTRYPOINT"][-1])
    cmd = json.loads([a for i, a in instructions(dockerfile) if i == "CMD"][-1])
    stub = tmp_path / "prometheus-stub"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$STUB_ARGS"\n')
    stub.chmod(0o755)
    args_file = tmp_path / "args"
    reroot = lambda a: re.sub(r"(=|^)(/etc/|/usr/local/)", lambda m: m.group(1) + str(root) + m.group(2), a)  # noqa: E731
    proc = subprocess.run(
        [reroot(a) for a in entrypoint + cmd], capture_output=True, text=True,
        env={"PATH": os.environ["PATH"], "PROMTOOL_BIN": promtool, "PROMETHEUS_BIN": str(stub), "STUB_ARGS": str(args_file),
             "MM2_CONNECT_DNS_NAME": "connect.msk-migrate-dev.internal", "MM2_CONNECT_METRICS_PORT": "9404", "MM2_ENVIRONMENT": "dev",
             "MM2_PROMETHEUS_WEB_AUTH": "none"},  # basic auth: tests/monitoring/test_prometheus_rules.py
    )
    assert proc.returncode == 0, proc.stderr
    passed = args_file.read_text().splitlines()
    [config_flag] = [a for a in passed if a.startswith("--config.file=")]
    rendered = Path(config_flag.split("=", 1)[1]).read_text()
    assert '"connect.msk-migrate-dev.internal"' in rendered and f"{root}/etc/prometheus/rules/" in rendered
    assert "--storage.tsdb.path=/prometheus" in passed
