"""The worker pins its environment's clusters as the renderer writes them (issue 37): what
io.mskmigrate.connect.pinning.PinnedConnectorConfigExtension compares connector configs against. The refusals
themselves are shown on a real worker (tests/integration/test_pinned_configs_real_worker.py) and in JUnit."""

from __future__ import annotations

import re

import pytest

from msk_migrate.config.auth import AuthConfig
from msk_migrate.config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec
from msk_migrate.connectors import worker_env as wenv
from msk_migrate.connectors.render import render_connectors, render_reverse_connectors
from msk_migrate.paths import JVM_DIR

ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:mm2-AbCdEf"
VAR = re.compile(r"\$\{env:([A-Za-z0-9_]+)\}")


def _ep(alias: str, mode: str, bootstrap: str, **auth) -> ClusterEndpoint:
    if mode in ("scram", "mtls"):
        auth.setdefault("secret_arn", ARN)
    return ClusterEndpoint(alias=alias, bootstrap_servers=bootstrap, auth=AuthConfig(mode=mode, **auth))


def _unescape(props: dict[str, str], role: str) -> dict[str, str]:
    prefix = f"{wenv.PINNED_PREFIX}{role}."
    return {k[len(prefix):]: v.replace(wenv.PINNED_ESCAPED_VARIABLE, "${env:") for k, v in props.items() if k.startswith(prefix)}


@pytest.mark.parametrize(("smode", "tmode"), [("scram", "iam"), ("mtls", "scram"), ("plaintext", "plaintext")])
def test_every_cluster_setting_the_renderer_writes_is_pinned_verbatim(smode, tmode):
    source, target = _ep("src", smode, "s-1:9096,s-2:9096"), _ep("tgt", tmode, "b-1:9098")
    props = wenv.worker_properties(target, WorkerSpec(), source)
    assert props[wenv.PINNED_CLUSTERS] == "target,source"
    pinned = {"source": _unescape(props, "source"), "target": _unescape(props, "target")}
    m = MigrationSpec(name="p", topics=["orders"])
    for configs in (render_connectors(source, target, m), render_reverse_connectors(source, target, m, None)):
        for cfg in configs.values():
            for side in ("source.cluster.", "target.cluster.", "producer.override."):
                given = {k[len(side):]: v for k, v in cfg.items()
                         if k.startswith(side) and not k.startswith(side + "alias") and re.match(r"(bootstrap|security|sasl|ssl)\.", k[len(side):])}
                if given:
                    assert given in pinned.values(), (side, given)


def test_the_worker_never_resolves_the_pinned_text_and_the_allowlist_is_exactly_the_rendered_variables():
    source, target = _ep("src", "scram", "s:9096", tls=True), _ep("tgt", "iam", "b:9098")
    props = wenv.worker_properties(target, WorkerSpec(), source)
    pinned_values = [v for k, v in props.items() if k.startswith(wenv.PINNED_PREFIX)]
    assert not [v for v in pinned_values if "${" in v]  # Kafka's ConfigTransformer would resolve ${...}
    assert any("$[env:MM2_SOURCE_SASL_PASSWORD}" in v for v in pinned_values)
    rendered = {n for cfg in render_connectors(source, target, MigrationSpec(name="p", topics=["o"])).values()
                for v in cfg.values() for n in VAR.findall(v)}
    assert props["config.providers.env.param.allowlist.pattern"] == wenv.env_allowlist_pattern(sorted(rendered))
    assert wenv.connector_env_names(target, source) == sorted(rendered)


def test_the_filter_is_registered_after_authentication_and_built_by_connect_extensions():
    props = wenv.worker_properties(_ep("tgt", "plaintext", "b:9092"), WorkerSpec())
    classes = props["rest.extension.classes"].split(",")
    assert classes.index(wenv.BASIC_AUTH_EXTENSION) < classes.index(wenv.PINNED_CONFIG_EXTENSION)
    ext = JVM_DIR / "connect-extensions" / "src" / "main"
    java = (ext / "java" / "io/mskmigrate/connect/pinning/PinnedClusters.java").read_text()
    assert f'PREFIX = "{wenv.PINNED_PREFIX}"' in java and f'ESCAPED_VARIABLE = "{wenv.PINNED_ESCAPED_VARIABLE}"' in java
    manifest = (ext / "resources/META-INF/services/org.apache.kafka.connect.rest.ConnectRestExtension").read_text()
    assert wenv.PINNED_CONFIG_EXTENSION in manifest.split()
