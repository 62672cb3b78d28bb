"""./build_images.py against moto's ECR server with a RECORDING docker on PATH.

The recording docker (tests/images/fake_docker.py) stands in for the Docker engine, which this
machine does not have: these tests prove the exact commands, the ECR calls, the login and the
manifest, never that an image really builds.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from msk_migrate.cliutil import json_shape_problems
from msk_migrate.versions import checkout_kafka_version
from tests.images.support import ACCOUNT, IMAGES, REGION, REGISTRY, REPO, copy_image_inputs, dead_endpoint, git, head

MANIFEST = f"build/manifest-{ACCOUNT}-{REGION}.json"


def _one_line_error(run) -> str:
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_recording_docker_sees_amd64_buildx_builds_tagged_with_the_commit_pushed_in_order(build, checkout, ecr):
    run = build(ACCOUNT, REGION)
    assert run.code == 0, run.stderr
    sha = head(checkout)
    builds = run.docker("buildx", "build")
    assert [b[b.index("--file") + 1] for b in builds] == [f"images/{n}/Dockerfile" for n in IMAGES]
    for name, argv in zip(IMAGES, builds, strict=False):
        metadata = str(checkout / ".local" / "build" / f"{name}.metadata.json")
        expected = ["buildx", "build", "--platform", "linux/amd64", "--file", f"images/{name}/Dockerfile",
                    "--tag", f"{REGISTRY}/msk-migrate-dev-{name}:{sha[:12]}"]
        if name == "kafka-connect":
            expected += ["--build-arg", f"KAFKA_VERSION={checkout_kafka_version(REPO)}"]
        expected += ["--label", f"org.opencontainers.image.revision={sha}",
                     "--label", f"org.opencontainers.image.version={sha[:12]}",
                     "--provenance=false", "--progress=plain", "--metadata-file", metadata, "--push", "."]
        assert argv == expected


def test_preflight_then_login_then_builds_in_that_order(build, ecr):
    run = build(ACCOUNT, REGION)
    assert run.code == 0, run.stderr
    kinds = [" ".join(c["argv"][:2]) for c in run.calls]
    assert kinds == ["buildx version", "info --format", "buildx inspect", "login --username",
                     *["buildx build"] * len(IMAGES)]


def test_docker_login_reads_the_decoded_ecr_token_password_on_stdin(build, ecr):
    token = ecr.get_authorization_token(registryIds=[ACCOUNT])["authorizationData"][0]["authorizationToken"]
    user, _, password = base64.b64decode(token).decode().partition(":")
    run = build(ACCOUNT, REGION)
    assert run.code == 0, run.stderr
    [login] = [c for c in run.calls if c["argv"][0] == "login"]
    assert login["argv"] == ["login", "--username", user, "--password-stdin", REGISTRY]
    assert login["stdin"] == password
    assert all(password not in " ".join(c["argv"]) for c in run.calls)
    assert password not in run.stdout + run.stderr


def test_manifest_pins_each_image_by_the_digest_ecr_holds(build, checkout, ecr):
    run = build(ACCOUNT, REGION)
    assert run.code == 0, run.stderr
    sha = head(checkout)
    manifest = json.loads((checkout / MANIFEST).read_text())
    assert set(manifest) == {"account", "region", "git_commit", "images"}
    assert (manifest["account"], manifest["region"], manifest["git_commit"]) == (ACCOUNT, REGION, sha)
    assert list(manifest["images"]) == list(IMAGES)
    for name in IMAGES:
        repo = f"msk-migrate-dev-{name}"
        in_ecr = ecr.describe_images(repositoryName=repo, imageIds=[{"imageTag": sha[:12]}])["imageDetails"][0]["imageDigest"]
        assert manifest["images"][name] == {"repository": repo, "uri": f"{REGISTRY}/{repo}:{sha[:12]}", "tag": sha[:12], "digest": in_ecr}


def test_release_tag_is_pushed_next_to_the_commit_tag_and_named_in_the_manifest(build, checkout, ecr):
    run = build(ACCOUNT, REGION, "--tag", "v1.4.0")
    assert run.code == 0, run.stderr
    sha = head(checkout)
    for name, argv in zip(IMAGES, run.docker("buildx", "build"), strict=False):
        tags = [argv[i + 1] for i, a in enumerate(argv) if a == "--tag"]
        assert tags == [f"{REGISTRY}/msk-migrate-dev-{name}:{sha[:12]}", f"{REGISTRY}/msk-migrate-dev-{name}:v1.4.0"]
    manifest = json.loads((checkout / MANIFEST).read_text())
    assert manifest["images"]["grafana"]["uri"] == f"{REGISTRY}/msk-migrate-dev-grafana:v1.4.0"
    assert manifest["images"]["grafana"]["tag"] == "v1.4.0"
    tagged = ecr.describe_images(repositoryName="msk-migrate-dev-grafana")["imageDetails"][0]["imageTags"]
    assert sorted(tagged) == sorted([sha[:12], "v1.4.0"])


def test_missing_repository_is_named_and_nothing_is_built_or_pushed(build, checkout, ecr):
    ecr.delete_repository(repositoryName="msk-migrate-dev-prometheus")
    run = build(ACCOUNT, REGION)
    assert run.code == 2
    line = _one_line_error(run)
    assert "msk-migrate-dev-prometheus" in line and "msk-migrate-dev-grafana" not in line
    assert not run.docker("login") and not run.docker("buildx", "build")
    assert not (checkout / MANIFEST).exists()
    assert not ecr.describe_images(repositoryName="msk-migrate-dev-kafka-connect")["imageDetails"]


def test_dry_run_prints_every_command_and_runs_none(build, checkout, ecr):
    # A dead ECR endpoint and no credentials: any AWS call would fail the run.
    run = build(ACCOUNT, REGION, "--dry-run", "--tag", "v2.0.0", env={"AWS_ENDPOINT_URL_ECR": dead_endpoint(),
                                                          "AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None})
    assert run.code == 0, run.stderr
    assert run.calls == []
    assert not (checkout / MANIFEST).exists()
    sha = head(checkout)
    out = run.stdout
    for expected in ("docker buildx version", "docker buildx inspect --bootstrap",
                     "ecr.describe_repositories(registryId='123456789012', repositoryNames=['msk-migrate-dev-grafana'])",
                     "ecr.get_authorization_token(registryIds=['123456789012'])",
                     f"docker login --username AWS --password-stdin {REGISTRY}",
                     f"--tag {REGISTRY}/msk-migrate-dev-kafka-connect:{sha[:12]} --tag {REGISTRY}/msk-migrate-dev-kafka-connect:v2.0.0",
                     f"write {checkout / MANIFEST}"):
        assert expected in out, expected
    assert out.count("docker buildx build --platform linux/amd64") == len(IMAGES)
    assert out.index("ecr.describe_repositories") < out.index("docker login") < out.index("docker buildx build")


def test_dry_run_with_json_output_lists_the_commands_and_runs_none(build, checkout):
    run = build(ACCOUNT, REGION, "--dry-run", "--output", "json", "--images", "grafana",
                env={"AWS_ENDPOINT_URL_ECR": dead_endpoint()})
    assert run.code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["dry_run"] is True and doc["pushed"] is False and run.calls == []
    assert not json_shape_problems(doc) and [r["image"] for r in doc["rows"]] == ["grafana"]
    assert list(doc["images"]) == ["grafana"] and doc["images"]["grafana"]["digest"] is None
    assert sum(c.startswith("docker buildx build") for c in doc["commands"]) == 1


@pytest.mark.parametrize(
    "args, field",
    [
        (("12345678901", REGION), "ACCOUNT"),
        (("12345678901a", REGION), "ACCOUNT"),
        ((ACCOUNT, "us-east-9"), "REGION"),
        ((ACCOUNT, "mars-1"), "REGION"),
        ((ACCOUNT, REGION, "--images", "kafka"), "--images"),
        ((ACCOUNT, REGION, "--tag", "bad tag"), "--tag"),
        ((ACCOUNT, REGION, "--kafka-version", "latest"), "--kafka-version"),
        ((ACCOUNT, REGION, "--env", "Prod_1"), "--env"),
    ],
    ids=["account-11-digits", "account-not-digits", "unknown-region", "not-a-region", "unknown-image",
         "invalid-tag", "invalid-kafka-version", "invalid-env-name"],
)
def test_bad_input_is_one_line_exit_2_and_nothing_runs(build, checkout, ecr, args, field):
    run = build(*args)
    assert run.code == 2
    assert _one_line_error(run).startswith(f"error: {field}")
    assert run.calls == []
    assert not (checkout / MANIFEST).exists()


def test_docker_missing_from_path_is_one_line_exit_2_before_any_aws_call(build, tmp_path, ecr):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    run = build(ACCOUNT, REGION, path=f"{empty}:/usr/bin:/bin", env={"AWS_ENDPOINT_URL_ECR": dead_endpoint()})
    assert run.code == 2
    assert _one_line_error(run).startswith("error: docker: not found on PATH")


def test_buildx_missing_is_one_line_exit_2_before_any_aws_call(build, ecr):
    run = build(ACCOUNT, REGION, env={"FAKE_DOCKER_NO_BUILDX": "1", "AWS_ENDPOINT_URL_ECR": dead_endpoint()})
    assert run.code == 2
    assert _one_line_error(run).startswith("error: docker buildx: not available")
    assert [c["argv"] for c in run.calls] == [["buildx", "version"]]


def test_stopped_docker_engine_is_one_line_exit_2_before_any_aws_call(build, ecr):
    run = build(ACCOUNT, REGION, env={"FAKE_DOCKER_NO_ENGINE": "1", "AWS_ENDPOINT_URL_ECR": dead_endpoint()})
    assert run.code == 2
    assert "Docker engine is not reachable" in _one_line_error(run)
    assert not run.docker("login") and not run.docker("buildx", "build")


def test_builder_without_amd64_emulation_is_refused_with_the_binfmt_fix(build, ecr):
    run = build(ACCOUNT, REGION, env={"FAKE_DOCKER_PLATFORMS": "linux/arm64, linux/arm/v7"})
    assert run.code == 2
    line = _one_line_error(run)
    assert "cannot build linux/amd64" in line and "tonistiigi/binfmt --install amd64" in line
    assert not run.docker("login") and not run.docker("buildx", "build")


def test_not_a_git_checkout_is_one_line_exit_2_and_nothing_runs(build, tmp_path, ecr):
    plain = tmp_path / "not-a-checkout"
    plain.mkdir()
    copy_image_inputs(plain)
    run = build(ACCOUNT, REGION, root=plain)
    assert run.code == 2
    assert "not a git checkout" in _one_line_error(run)
    assert run.calls == []


def test_no_push_loads_locally_and_touches_neither_ecr_nor_the_manifest(build, checkout, ecr):
    run = build(ACCOUNT, REGION, "--no-push", env={"AWS_ENDPOINT_URL_ECR": dead_endpoint()})
    assert run.code == 0, run.stderr
    builds = run.docker("buildx", "build")
    assert len(builds) == len(IMAGES) and all("--load" in b and "--push" not in b for b in builds)
    assert not run.docker("login")
    assert not (checkout / MANIFEST).exists()


def test_failed_build_exits_1_naming_the_image_and_its_log_and_writes_no_manifest(build, checkout, ecr):
    run = build(ACCOUNT, REGION, env={"FAKE_DOCKER_FAIL_IMAGE": "prometheus"})
    assert run.code == 1
    line = _one_line_error(run)
    assert line.startswith("error: prometheus: docker buildx build failed")
    assert str(checkout / ".local" / "build" / "prometheus.log") in line
    assert "in ECR already: kafka-connect" in line
    assert len(run.docker("buildx", "build")) == 2  # grafana is not attempted
    assert not (checkout / MANIFEST).exists()
    assert "did not complete successfully" in (checkout / ".local" / "build" / "prometheus.log").read_text()


def test_rerun_after_a_failed_build_reuses_what_ecr_has_and_builds_the_rest(build, checkout, ecr):
    assert build(ACCOUNT, REGION, env={"FAKE_DOCKER_FAIL_IMAGE": "prometheus"}).code == 1
    connect_digest = ecr.describe_images(repositoryName="msk-migrate-dev-kafka-connect")["imageDetails"][0]["imageDigest"]
    run = build(ACCOUNT, REGION)
    assert run.code == 0, run.stderr
    # every image after the failed one is built on the rerun (the operator image included), kafka-connect is not
    assert [b[b.index("--file") + 1] for b in run.docker("buildx", "build")] == [f"images/{i}/Dockerfile" for i in IMAGES[1:]]
    assert "kafka-connect" in run.stdout and "already in ECR" in run.stdout
    manifest = json.loads((checkout / MANIFEST).read_text())
    assert manifest["images"]["kafka-connect"]["digest"] == connect_digest
    assert set(manifest["images"]) == set(IMAGES)


def test_rerun_of_a_pushed_commit_builds_nothing_and_needs_no_login(build, checkout, ecr):
    assert build(ACCOUNT, REGION).code == 0
    first = (checkout / MANIFEST).read_text()
    run = build(ACCOUNT, REGION)
    assert run.code == 0, run.stderr
    assert not run.docker("buildx", "build") and not run.docker("login")
    assert (checkout / MANIFEST).read_text() == first


def test_release_tag_is_added_in_ecr_to_an_already_pushed_commit_image_without_rebuilding(build, checkout, ecr):
    assert build(ACCOUNT, REGION, "--images", "grafana").code == 0
    run = build(ACCOUNT, REGION, "--images", "grafana", "--tag", "v1.5.0")
    assert run.code == 0, run.stderr
    assert not run.docker("buildx", "build")
    [image] = ecr.describe_images(repositoryName="msk-migrate-dev-grafana")["imageDetails"]
    assert sorted(image["imageTags"]) == sorted([head(checkout)[:12], "v1.5.0"])
    entry = json.loads((checkout / MANIFEST).read_text())["images"]["grafana"]
    assert (entry["tag"], entry["digest"]) == ("v1.5.0", image["imageDigest"])


def test_release_tag_already_naming_another_image_is_refused_before_any_build(build, checkout, ecr):
    assert build(ACCOUNT, REGION, "--images", "grafana", "--tag", "v1.0.0").code == 0
    (checkout / "grafana" / "dashboards" / "other.json").write_text("{}\n")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "change")
    run = build(ACCOUNT, REGION, "--images", "grafana", "--tag", "v1.0.0")
    assert run.code == 2
    line = _one_line_error(run)
    assert line.startswith("error: --tag: v1.0.0 already names another image in msk-migrate-dev-grafana")
    assert not run.docker("buildx", "build") and not run.docker("login")


def test_digest_comes_from_ecr_by_tag_when_buildx_metadata_has_none(build, checkout, ecr):
    run = build(ACCOUNT, REGION, "--images", "grafana", env={"FAKE_DOCKER_NO_METADATA_DIGEST": "1"})
    assert run.code == 0, run.stderr
    sha = head(checkout)
    in_ecr = ecr.describe_images(repositoryName="msk-migrate-dev-grafana", imageIds=[{"imageTag": sha[:12]}])["imageDetails"][0]["imageDigest"]
    assert json.loads((checkout / MANIFEST).read_text())["images"]["grafana"]["digest"] == in_ecr


def test_partial_build_keeps_other_images_and_keeps_the_replaced_manifest_for_rollback(build, checkout, ecr):
    assert build(ACCOUNT, REGION).code == 0
    first = json.loads((checkout / MANIFEST).read_text())
    (checkout / "grafana" / "dashboards" / "new.json").write_text("{}\n")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "new dashboard")
    run = build(ACCOUNT, REGION, "--images", "grafana")
    assert run.code == 0, run.stderr
    assert len(run.docker("buildx", "build")) == 1
    second = json.loads((checkout / MANIFEST).read_text())
    assert second["git_commit"] == head(checkout) != first["git_commit"]
    assert second["images"]["kafka-connect"] == first["images"]["kafka-connect"]
    assert second["images"]["prometheus"] == first["images"]["prometheus"]
    assert second["images"]["grafana"]["digest"] != first["images"]["grafana"]["digest"]
    previous = checkout / f"build/manifest-{ACCOUNT}-{REGION}.previous.json"
    assert json.loads(previous.read_text()) == first


def test_env_and_repository_prefix_choose_the_repositories(build, ecr):
    for image in IMAGES:
        ecr.create_repository(repositoryName=f"msk-migrate-prod-{image}")
        ecr.create_repository(repositoryName=f"team-a-mm2-{image}")
    run = build(ACCOUNT, REGION, "--env", "prod", "--images", "kafka-connect")
    assert run.code == 0, run.stderr
    assert f"{REGISTRY}/msk-migrate-prod-kafka-connect:" in run.docker("buildx", "build")[0][7]
    run = build(ACCOUNT, REGION, "--repository-prefix", "team-a-mm2", "--images", "prometheus")
    assert run.code == 0, run.stderr
    assert f"{REGISTRY}/team-a-mm2-prometheus:" in run.docker("buildx", "build")[0][7]


def test_kafka_version_option_becomes_the_connect_build_arg_and_its_own_commit_tag(build, checkout, ecr):
    assert checkout_kafka_version(REPO) != "4.1.2"
    run = build(ACCOUNT, REGION, "--images", "kafka-connect,grafana", "--kafka-version", "4.1.2")
    assert run.code == 0, run.stderr
    connect, grafana = run.docker("buildx", "build")
    assert "KAFKA_VERSION=4.1.2" in connect
    sha = head(checkout)
    assert f"{REGISTRY}/msk-migrate-dev-kafka-connect:{sha[:12]}-kafka4.1.2" in connect
    assert f"{REGISTRY}/msk-migrate-dev-grafana:{sha[:12]}" in grafana
    assert not any(a.startswith("KAFKA_VERSION") for a in grafana)


def test_env_file_supplies_the_stack_repository_names_ships_the_validation_job_and_must_match_account_and_region(build, checkout, ecr, tmp_path, moto_url):
    from msk_migrate.config.environment import load_environment

    dev = REPO / "infra" / "environments" / "dev.yaml"
    cfg = load_environment(dev)
    env_file = tmp_path / "dev.yaml"
    env_file.write_text(dev.read_text().replace(f'account_id: "{cfg.account_id}"', f'account_id: "{ACCOUNT}"')
                        .replace(f"region: {cfg.region}", f"region: {REGION}").replace(f":{cfg.account_id}:", f":{ACCOUNT}:")
                        .replace(f":{cfg.region}:", f":{REGION}:"))
    import boto3

    s3 = boto3.client("s3", region_name=REGION, endpoint_url=moto_url, aws_access_key_id="testing", aws_secret_access_key="testing")
    bucket = load_environment(env_file).config_bucket_name
    s3.create_bucket(Bucket=bucket)  # what `cdktf deploy migration-dev` leaves
    from msk_migrate.validation.spark_local import job_jars

    # the checkout holds the image inputs only: the job's jars come resolved from this repository's Maven run
    run = build(ACCOUNT, REGION, "--env-file", str(env_file), "--images", "prometheus", "--output", "json",
                env={"AWS_ENDPOINT_URL_S3": moto_url, "MSK_MIGRATE_SPARK_JARS": ",".join(job_jars())})
    assert run.code == 0, run.stderr
    assert f"{REGISTRY}/{load_environment(env_file).ecr_repository_names()['prometheus']}:" in " ".join(run.docker("buildx", "build")[0])
    # the build module ships the validation job package of this version to the environment's bucket, by digest
    shipped = json.loads(run.stdout)["validation_job"]
    assert shipped["bucket"] == bucket and shipped["uploaded"] and shipped["prefix"].endswith(f"/{shipped['digest']}/")
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="validation/job/")["Contents"]}
    assert shipped["prefix"] + "msk_migrate.zip" in keys and shipped["prefix"] + "spark_entry.py" in keys
    assert shipped["prefix"].removesuffix(f"{shipped['digest']}/") + "manifest.json" in keys
    run = build(ACCOUNT, "eu-central-1", "--env-file", str(env_file), "--images", "prometheus")
    assert run.code == 2
    assert _one_line_error(run).startswith("error: REGION: 'eu-central-1' differs from dev.yaml's")
    assert run.calls == []


def test_uncommitted_image_inputs_tag_the_build_dirty(build, checkout, ecr):
    (checkout / "images" / "grafana" / "Dockerfile").write_text((checkout / "images" / "grafana" / "Dockerfile").read_text() + "\n# local edit\n")
    run = build(ACCOUNT, REGION, "--images", "grafana")
    assert run.code == 0, run.stderr
    assert "uncommitted changes" in run.stdout
    [build_argv] = run.docker("buildx", "build")
    [tag] = [a for a in build_argv if a.startswith(f"{REGISTRY}/msk-migrate-dev-grafana:")]
    # Unique per build (immutable tags; the content has no commit of its own).
    assert re.fullmatch(rf"{REGISTRY}/msk-migrate-dev-grafana:{head(checkout)[:12]}-dirty-\d{{8}}T\d{{6}}Z", tag)


def test_json_output_is_one_document_on_stdout_with_the_manifest(build, checkout, ecr):
    run = build(ACCOUNT, REGION, "--output", "json")
    assert run.code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["manifest_path"] == str(checkout / MANIFEST)
    assert doc["images"] == json.loads((checkout / MANIFEST).read_text())["images"]
    assert doc["pushed"] is True and doc["dry_run"] is False


def test_hidden_ecr_endpoint_option_reaches_moto_without_the_env_variable(build, ecr, moto_url):
    run = build(ACCOUNT, REGION, "--images", "grafana", "--ecr-endpoint-url", moto_url,
                env={"AWS_ENDPOINT_URL_ECR": None, "FAKE_DOCKER_ECR_ENDPOINT": moto_url})
    assert run.code == 0, run.stderr


def test_env_file_and_repository_prefix_together_are_refused(build, checkout, ecr):
    env_file = checkout / "dev.yaml"
    env_file.write_text("name: dev\n")
    run = build(ACCOUNT, REGION, "--env-file", str(env_file), "--repository-prefix", "x-y")
    assert run.code == 2
    assert "conflicts with --repository-prefix" in _one_line_error(run)
    assert run.calls == []


def test_msk_migrate_build_images_is_the_same_command_as_the_script(build, checkout, ecr):
    from msk_migrate.commands.build_images import build_images_cmd
    from msk_migrate.commands.root import cli

    assert cli.get_command(None, "build-images") is build_images_cmd
    run = build(ACCOUNT, REGION, "--images", "grafana", via_msk_migrate=True)
    assert run.code == 0, run.stderr
    assert json.loads((checkout / MANIFEST).read_text())["images"]["grafana"]["digest"].startswith("sha256:")
    bad = build("123", REGION, via_msk_migrate=True)
    assert bad.code == 2 and _one_line_error(bad).startswith("error: ACCOUNT")


# ---- --builder: the same plan for docker and buildah ----------------------------------------------

def test_auto_builder_is_docker_when_its_daemon_answers_and_buildah_when_not(build, checkout):
    dead = {"AWS_ENDPOINT_URL_ECR": dead_endpoint()}
    with_daemon = build(ACCOUNT, REGION, "--builder", "auto", "--dry-run", "--images", "grafana", env=dead)
    assert with_daemon.code == 0, with_daemon.stderr
    assert "docker buildx build --platform linux/amd64" in with_daemon.stdout and "buildah " not in with_daemon.stdout
    without = build(ACCOUNT, REGION, "--builder", "auto", "--dry-run", "--images", "grafana", env={**dead, "FAKE_DOCKER_NO_ENGINE": "1"})
    assert without.code == 0, without.stderr
    assert " bud --platform linux/amd64 --isolation chroot" in without.stdout and "docker buildx build" not in without.stdout


def test_buildah_plan_logs_in_with_the_ecr_token_then_builds_and_pushes_every_tag(build, checkout):
    run = build(ACCOUNT, REGION, "--builder", "buildah", "--dry-run", "--tag", "v2.0.0", "--images", "prometheus",
                env={"AWS_ENDPOINT_URL_ECR": dead_endpoint()})
    assert run.code == 0, run.stderr
    out, sha = run.stdout, head(checkout)
    storage = f"--root {checkout / '.local' / 'images' / 'storage'} --runroot {checkout / '.local' / 'images' / 'run'} --storage-driver vfs"
    assert f"buildah {storage} login --username AWS --password-stdin {REGISTRY}" in out
    assert f"--tag {REGISTRY}/msk-migrate-dev-prometheus:{sha[:12]} --tag {REGISTRY}/msk-migrate-dev-prometheus:v2.0.0" in out
    for tag in (sha[:12], "v2.0.0"):
        assert f"{REGISTRY}/msk-migrate-dev-prometheus:{tag} docker://{REGISTRY}/msk-migrate-dev-prometheus:{tag}" in out
    assert out.index("get_authorization_token") < out.index(" login ") < out.index(" bud ") < out.index(" push ") < out.index("write ")
    assert run.calls == []  # the recording docker is never asked


def test_local_bases_build_against_the_pinned_names_without_digests_and_never_pull(build, checkout):
    run = build(ACCOUNT, REGION, "--builder", "buildah", "--local-bases", "--dry-run", "--images", "kafka-connect",
                env={"AWS_ENDPOINT_URL_ECR": dead_endpoint()})
    assert run.code == 0, run.stderr
    assert "--pull=never" in run.stdout
    assert "--build-arg MAVEN_IMAGE=maven:3.9.11-eclipse-temurin-17 " in run.stdout
    assert "--build-arg JRE_IMAGE=eclipse-temurin:17.0.16_8-jre-jammy " in run.stdout
    assert "@sha256" not in run.stdout


def test_a_base_pinned_by_tag_only_is_warned_about_on_every_build(build, checkout):
    dead = {"AWS_ENDPOINT_URL_ECR": dead_endpoint()}
    quiet = build(ACCOUNT, REGION, "--dry-run", env=dead)  # every image, as the repository pins them
    assert quiet.code == 0, quiet.stderr
    assert "pinned by tag only" not in quiet.stdout + quiet.stderr
    # A fork that moves a base to a new tag without its digest (the ARG default is what a build pulls).
    dockerfile = checkout / "images" / "grafana" / "Dockerfile"
    pinned = re.search(r"^ARG GRAFANA_IMAGE=(\S+)$", dockerfile.read_text(), re.M)
    assert pinned and "@sha256:" in pinned.group(1)
    dockerfile.write_text(dockerfile.read_text().replace(pinned.group(0), "ARG GRAFANA_IMAGE=grafana/grafana:12.1.2"))
    git(checkout, "commit", "-q", "-am", "grafana by tag")
    run = build(ACCOUNT, REGION, "--dry-run", "--images", "grafana", env=dead)
    assert run.code == 0, run.stderr
    assert "grafana: base image grafana/grafana:12.1.2 is pinned by tag only" in run.stdout
    assert "images/grafana/Dockerfile" in run.stdout.split("pinned by tag only", 1)[1].splitlines()[0]
