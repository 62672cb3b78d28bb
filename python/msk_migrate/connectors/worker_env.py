"""The Kafka Connect worker's configuration: the only writer of ``worker.properties``.

:func:`worker_properties` renders every worker setting (cluster, internal topics, REST listener and its
authentication, config providers and their limits, the security settings of the worker's clients from
:func:`msk_migrate.access.client_security.client_properties`, the very function that renders the connectors' client settings).
:func:`worker_environment` carries that rendering to images/kafka-connect/entrypoint.sh, the same way on
ECS (infra puts it in the task definition) and locally (msk_migrate.local starts the entrypoint with it).
The entrypoint does not know any Kafka setting: it writes the file from ``CONNECT_WORKER_PROPERTIES``
after checking that every variable named in ``CONNECT_REQUIRED_ENV`` is set, prefixes the two values
only known at run time (the task's address, the REST keystore password) and writes the two secret files
Kafka's REST extensions read from disk (basic-auth credentials, REST keystore) into its tmpfs directory.

Secret values never appear here: the worker's clients reference ``${env:MM2_TARGET_...}`` (resolved in
the JVM by Kafka's EnvVarConfigProvider, restricted to exactly the MM2 secret variables), ECS injects the
variables from Secrets Manager (:func:`worker_secret_env`).

Environment contract (names; the infra-security helper and the harness read them from here):

============================  =====================================================================
plain (``environment``)
``CONNECT_WORKER_PROPERTIES``  worker.properties, lines joined by a literal ``\\n`` (one line, so the
                               ECS console and the config bucket's ``KEY=value`` reference file show it)
``CONNECT_REQUIRED_ENV``       space-separated variables the entrypoint requires (exit 2 if one is unset)
``CONNECT_REST_JAAS_CONFIG``   JAAS entry ``KafkaConnect`` for the basic-auth REST extension
``CONNECT_BOOTSTRAP_SERVERS``  the target cluster, for the entrypoint's start line only
``CONNECT_CONFIG_DIR``         writable (tmpfs) directory for the rendered files
``CONNECT_HEAP``, ``CONNECT_METRICS_PORT``  JVM heap and the JMX exporter port
secret (ECS ``secrets``)
``CONNECT_REST_USERNAME``, ``CONNECT_REST_PASSWORD``  REST basic-auth credentials (not readable by
                               connectors: outside the env provider's allowlist)
``CONNECT_REST_TLS_KEYSTORE``, ``CONNECT_REST_TLS_KEYSTORE_PASSWORD``  base64 PKCS#12 keystore and
                               its password, when the worker serves HTTPS with a given certificate
``CONNECT_REST_TLS_CA_SEED``   the environment's internal-CA seed, when the worker makes its certificate
                               at start (ECS: images/kafka-connect/serving-cert.sh)
``MM2_SOURCE_*``, ``MM2_TARGET_*`` cluster credentials (:mod:`msk_migrate.access.secrets`)
============================  =====================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..access.client_security import client_properties
from ..access.secrets import secret_refs
from ..config.migration import ClusterEndpoint, MigrationSpec, WorkerSpec

#: The image's writable directory (a tmpfs/ephemeral volume on ECS); the entrypoint's default too.
IMAGE_CONFIG_DIR = "/tmp/connect"

ENV_WORKER_PROPERTIES = "CONNECT_WORKER_PROPERTIES"
ENV_REQUIRED = "CONNECT_REQUIRED_ENV"
ENV_REST_JAAS_CONFIG = "CONNECT_REST_JAAS_CONFIG"
ENV_BOOTSTRAP = "CONNECT_BOOTSTRAP_SERVERS"
ENV_CONFIG_DIR = "CONNECT_CONFIG_DIR"
ENV_HEAP = "CONNECT_HEAP"
ENV_METRICS_PORT = "CONNECT_METRICS_PORT"
ENV_REST_USERNAME = "CONNECT_REST_USERNAME"
ENV_REST_PASSWORD = "CONNECT_REST_PASSWORD"
ENV_REST_TLS_KEYSTORE = "CONNECT_REST_TLS_KEYSTORE"
ENV_REST_TLS_KEYSTORE_PASSWORD = "CONNECT_REST_TLS_KEYSTORE_PASSWORD"

#: Files the entrypoint writes into CONNECT_CONFIG_DIR (named here, referenced by the rendered settings).
REST_CREDENTIALS_FILE = "rest-credentials.properties"
REST_KEYSTORE_FILE = "rest-keystore.p12"
#: Where serving-cert.sh writes the certificate made at start (keystore.p12, truststore.p12, ca.pem, ...).
REST_TLS_DIR = "rest-tls"
ENV_REST_TLS_CA_SEED = "CONNECT_REST_TLS_CA_SEED"
#: The JSON key of the internal-CA seed in the generated REST secret (infra/mskinfra/credentials.py).
CA_SEED_KEY = "tls_ca_seed"

#: Kafka's basic-auth REST extension (org.apache.kafka:connect-basic-auth-extension, jvm/classpaths/connect).
BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
#: Our auto-restart of failed tasks (jvm/connect-extensions); its settings are ``msk.migrate.auto.restart.*``.
AUTO_RESTART_EXTENSION = "io.mskmigrate.connect.autorestart.AutoRestartExtension"
AUTO_RESTART_PREFIX = "msk.migrate.auto.restart."
#: Our connector client override policy (jvm/connect-extensions): overrides only for MM2's connectors, producer
#: tuning keys, and the source's connection settings with ``bootstrap.servers`` = the pinned cluster below.
OVERRIDE_POLICY = "io.mskmigrate.connect.policy.MirrorMakerOverridePolicy"
#: Worker setting the policy's configure() reads (Kafka hands a policy the worker's configs): the only cluster a
#: connector may point a client at (the reverse flow's producer writes to the source). Unset = none.
OVERRIDE_ALLOWED_BOOTSTRAP = "msk.migrate.client.override.allowed.bootstrap.servers"
#: Our REST filter (jvm/connect-extensions, io.mskmigrate.connect.pinning): refuses, before validation resolves any
#: provider, a connector config whose cluster settings are not exactly one pinned cluster's, or that names a
#: provider variable anywhere else; writes one audit line per changing request naming the user.
PINNED_CONFIG_EXTENSION = "io.mskmigrate.connect.pinning.PinnedConnectorConfigExtension"
#: Worker settings that filter reads: the aliases, then ``<prefix><alias>.<client key>=<rendered value>``.
PINNED_PREFIX = "msk.migrate.connector.pinned."
PINNED_CLUSTERS = PINNED_PREFIX + "clusters"
#: The worker resolves ``${...}`` in its own settings at start; the pinned text must stay the reference, so
#: it is written as ``$[env:NAME}`` and read back as ``${env:NAME}`` (PinnedClusters.ESCAPED_VARIABLE).
PINNED_ESCAPED_VARIABLE = "$[env:"
#: Kafka Connect's admin endpoints (KIP-495): an empty value disables them (RestServer skips the admin resources).
ADMIN_LISTENERS = "admin.listeners"
PROPERTY_FILE_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
ENV_CONFIG_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
BYTES_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"

#: Prefixes under which the worker's own clients take their settings (bare = the worker's group client).
CLIENT_PREFIXES = ("", "producer.", "consumer.", "admin.")

_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class RestSecurity:
    """How the worker's REST API is protected. Default: basic auth on, plain HTTP (the local harness).
    ``tls`` = the worker serves HTTPS, with a given keystore (``CONNECT_REST_TLS_KEYSTORE``) or, with
    ``internal_ca``, with a certificate it makes at start from the environment's internal CA
    (:data:`ECS_REST`, the product posture: the load balancer re-encrypts to the task, and workers
    forwarding requests to each other verify that certificate against the same CA)."""

    basic_auth: bool = True
    tls: bool = False
    internal_ca: bool = False
    bind_host: str = "0.0.0.0"
    advertised_host: str | None = None  #: None = the entrypoint's address at run time

    def __post_init__(self) -> None:
        if self.internal_ca and not self.tls:
            raise ValueError("RestSecurity: internal_ca needs tls=True (the certificate is for HTTPS)")


#: The REST posture of the deployed workers (infra/mskinfra/stack.py).
ECS_REST = RestSecurity(basic_auth=True, tls=True, internal_ca=True)


def pinned_clusters(target: ClusterEndpoint, source: ClusterEndpoint | None = None,
                    others: Mapping[str, ClusterEndpoint] | None = None) -> dict[str, dict[str, str]]:
    """``{role: {client key: value}}``: each cluster's settings exactly as the renderer writes them under
    ``source.cluster.*``/``target.cluster.*`` (and the reverse flow's ``producer.override.*``).

    ``others``: more clusters by role, pinned the same way. Only the local harness gives any (its optional
    peer cluster, a second source or target of the topology rehearsals, whose flows share the one local
    worker); a deployed worker pins exactly its environment's two clusters."""
    out = {"target": {"bootstrap.servers": target.bootstrap_servers, **client_properties("target", target.auth)}}
    if source is not None:
        out["source"] = {"bootstrap.servers": source.bootstrap_servers, **client_properties("source", source.auth)}
    for role, ep in (others or {}).items():
        out[role] = {"bootstrap.servers": ep.bootstrap_servers, **client_properties(role, ep.auth)}
    return out


def pinned_cluster_properties(target: ClusterEndpoint, source: ClusterEndpoint | None = None,
                              others: Mapping[str, ClusterEndpoint] | None = None) -> dict[str, str]:
    """The worker settings :data:`PINNED_CONFIG_EXTENSION` reads (``${env:`` escaped, see :data:`PINNED_ESCAPED_VARIABLE`)."""
    clusters = pinned_clusters(target, source, others)
    props = {PINNED_CLUSTERS: ",".join(clusters)}
    for role, settings in clusters.items():
        props.update({f"{PINNED_PREFIX}{role}.{k}": v.replace("${env:", PINNED_ESCAPED_VARIABLE) for k, v in settings.items()})
    return props


def connector_env_names(target: ClusterEndpoint, source: ClusterEndpoint | None = None,
                        others: Mapping[str, ClusterEndpoint] | None = None) -> list[str]:
    """Exactly the ``${env:NAME}`` variables the rendered configs (and the worker's own clients) reference."""
    values = [v for settings in pinned_clusters(target, source, others).values() for v in settings.values()]
    return sorted({m for v in values for m in re.findall(r"\$\{env:([A-Za-z0-9_]+)\}", v)})


def env_allowlist_pattern(names: list[str]) -> str:
    """Java regex matching exactly ``names`` (nothing at all when empty)."""
    return "^(?:" + "|".join(sorted(set(names))) + ")$" if names else "(?!)"


def worker_properties(
    target: ClusterEndpoint,
    worker: WorkerSpec,
    source: ClusterEndpoint | None = None,
    rest: RestSecurity = RestSecurity(),
    config_dir: str = IMAGE_CONFIG_DIR,
    migration: MigrationSpec | None = None,
    others: Mapping[str, ClusterEndpoint] | None = None,
) -> dict[str, str]:
    """Every worker setting, in file order. Add keys here (the one place worker settings are written).
    ``others``: more pinned clusters (:func:`pinned_clusters`; the local harness's peer only)."""
    scheme = "https" if rest.tls else "http"
    props: dict[str, str] = {
        "bootstrap.servers": target.bootstrap_servers,
        "group.id": worker.group_id,
        "config.storage.topic": worker.config_storage_topic,
        "offset.storage.topic": worker.offset_storage_topic,
        "status.storage.topic": worker.status_storage_topic,
        "config.storage.replication.factor": str(worker.replication_factor),
        "offset.storage.replication.factor": str(worker.replication_factor),
        "status.storage.replication.factor": str(worker.replication_factor),
        "offset.flush.interval.ms": str(worker.offset_flush_interval_ms),
        "scheduled.rebalance.max.delay.ms": str(worker.scheduled_rebalance_max_delay_ms),
        "key.converter": BYTES_CONVERTER,
        "value.converter": BYTES_CONVERTER,
        "header.converter": BYTES_CONVERTER,
        "listeners": f"{scheme}://{rest.bind_host}:{worker.rest_port}",
        "rest.advertised.listener": scheme,
        "rest.advertised.port": str(worker.rest_port),
        # Empty: Kafka serves no admin endpoint (/admin/loggers) at all. Left unset they would share the REST
        # listener, where any REST user could switch the audit logger off; on a listener of their own they would
        # get no authentication (REST extensions register on the main listener only). Nothing here uses them.
        ADMIN_LISTENERS: "",
    }
    if rest.advertised_host:
        props["rest.advertised.host.name"] = rest.advertised_host
    if rest.internal_ca:
        # Every listeners.https.* key also configures the client a worker uses to call the others (Kafka
        # takes that prefix all-or-nothing): it trusts only the internal CA and checks the address.
        props.update(
            {
                "listeners.https.ssl.keystore.type": "PKCS12",
                "listeners.https.ssl.keystore.location": f"{config_dir}/{REST_TLS_DIR}/keystore.p12",
                "listeners.https.ssl.truststore.type": "PKCS12",
                "listeners.https.ssl.truststore.location": f"{config_dir}/{REST_TLS_DIR}/truststore.p12",
                "listeners.https.ssl.endpoint.identification.algorithm": "https",
                "listeners.https.ssl.client.authentication": "none",
            }
        )
    elif rest.tls:
        props.update(
            {
                "listeners.https.ssl.keystore.type": "PKCS12",
                "listeners.https.ssl.keystore.location": f"{config_dir}/{REST_KEYSTORE_FILE}",
                "listeners.https.ssl.client.authentication": "none",
            }
        )
    # Authentication first: the pinned-config filter runs after it and names the authenticated user.
    extensions = [BASIC_AUTH_EXTENSION] if rest.basic_auth else []
    extensions.append(PINNED_CONFIG_EXTENSION)
    if worker.auto_restart:
        # The extension restarts failed tasks through this worker's REST API (restart?onlyFailed=true) with
        # back-off and a cap. With basic auth it reads the credentials file the entrypoint writes for the
        # basic-auth extension: no secret in worker.properties, no extra variable for the env provider.
        extensions.append(AUTO_RESTART_EXTENSION)
        if rest.basic_auth:
            props[AUTO_RESTART_PREFIX + "rest.credentials.file"] = f"{config_dir}/{REST_CREDENTIALS_FILE}"
        props.update({
            AUTO_RESTART_PREFIX + "initial.backoff.ms": str(worker.auto_restart_initial_backoff_seconds * 1000),
            AUTO_RESTART_PREFIX + "max.backoff.ms": str(worker.auto_restart_max_backoff_seconds * 1000),
            AUTO_RESTART_PREFIX + "max.restarts": str(worker.auto_restart_max_restarts),
        })
    props["rest.extension.classes"] = ",".join(extensions)
    # Exactly-once source support (KIP-618, Connect >= 3.5): every worker of the group must enable it.
    props["exactly.once.source.support"] = "enabled" if migration is not None and migration.exactly_once else "disabled"
    props.update(
        {
            # Not `All` (any connector could point its clients anywhere), not `None` (MM2's records are written by
            # the framework producer: tuning and the reverse flow are producer.override.*): docs/design.md.
            "connector.client.config.override.policy": OVERRIDE_POLICY,
            # Secrets: only the env provider, and only for the variables the rendered cluster settings name.
            # No file provider. Which key may name them is the pinned-config filter's check.
            "config.providers": "env",
            "config.providers.env.class": ENV_CONFIG_PROVIDER,
            "config.providers.env.param.allowlist.pattern": env_allowlist_pattern(connector_env_names(target, source, others)),
        }
    )
    props.update(pinned_cluster_properties(target, source, others))
    if source is not None:
        props[OVERRIDE_ALLOWED_BOOTSTRAP] = source.bootstrap_servers
    security = client_properties("target", target.auth)
    for prefix in CLIENT_PREFIXES:
        props.update({prefix + k: v for k, v in security.items()})
    return props


def render_properties(props: dict[str, str]) -> str:
    """``key=value`` lines. Keys and values are checked: the file format has no quoting we rely on."""
    lines = []
    for key, value in props.items():
        if not _KEY.match(key):
            raise ValueError(f"worker property key {key!r} is not a plain Kafka key")
        if any(c in value for c in "\\\n\r"):
            raise ValueError(f"worker property {key} contains a backslash or line break")
        lines.append(f"{key}={value}")
    return "\n".join(lines) + "\n"


def required_variables(props: dict[str, str], rest: RestSecurity) -> list[str]:
    """Variables the worker cannot start without: every ``${env:NAME}`` it references, REST secrets."""
    names = sorted({m for v in props.values() for m in re.findall(r"\$\{env:([A-Za-z0-9_]+)\}", v)})
    if rest.basic_auth:
        names += [ENV_REST_USERNAME, ENV_REST_PASSWORD]
    if rest.internal_ca:
        names += [ENV_REST_TLS_CA_SEED]
    elif rest.tls:
        names += [ENV_REST_TLS_KEYSTORE, ENV_REST_TLS_KEYSTORE_PASSWORD]
    return names


def worker_environment(
    target: ClusterEndpoint,
    worker: WorkerSpec,
    source: ClusterEndpoint | None = None,
    rest: RestSecurity = RestSecurity(),
    config_dir: str = IMAGE_CONFIG_DIR,
    migration: MigrationSpec | None = None,
    others: Mapping[str, ClusterEndpoint] | None = None,
) -> dict[str, str]:
    """Plain (non-secret) variables for a Connect worker whose home cluster is ``target``."""
    props = worker_properties(target, worker, source, rest, config_dir, migration, others)
    env = {
        ENV_WORKER_PROPERTIES: render_properties(props).rstrip("\n").replace("\n", "\\n"),
        ENV_REQUIRED: " ".join(required_variables(props, rest)),
        ENV_BOOTSTRAP: target.bootstrap_servers,
        ENV_CONFIG_DIR: config_dir,
        ENV_HEAP: worker.heap,
        ENV_METRICS_PORT: str(worker.metrics_port),
    }
    if rest.basic_auth:
        env[ENV_REST_JAAS_CONFIG] = (
            f'KafkaConnect {{ {PROPERTY_FILE_LOGIN_MODULE} required file="{config_dir}/{REST_CREDENTIALS_FILE}"; }};'
        )
    return env


def mm2_secret_env(target: ClusterEndpoint, source: ClusterEndpoint | None = None) -> dict[str, str]:
    """``{ENV_NAME: ecs valueFrom}`` of the cluster credentials (the worker's and its connectors')."""
    out: dict[str, str] = {}
    for role, ep in (("target", target), ("source", source)):
        if ep is not None:
            out.update({ref.env: ref.ecs_value_from for ref in secret_refs(role, ep.auth).values()})
    return out


def worker_secret_env(
    target: ClusterEndpoint,
    source: ClusterEndpoint | None = None,
    rest_secret_arn: str | None = None,
    rest_tls_secret_arn: str | None = None,
    rest_ca_seed_secret_arn: str | None = None,
) -> dict[str, str]:
    """``{ENV_NAME: ecs valueFrom}`` for every secret the worker and its connectors reference.

    ``rest_secret_arn``: the secret with JSON keys ``username``/``password`` of the REST API;
    ``rest_tls_secret_arn``: JSON keys ``keystore`` (base64 PKCS#12) and ``keystore_password``;
    ``rest_ca_seed_secret_arn``: JSON key ``tls_ca_seed`` (the environment's internal-CA seed).
    """
    out = mm2_secret_env(target, source)
    if rest_secret_arn:
        out[ENV_REST_USERNAME] = f"{rest_secret_arn}:username::"
        out[ENV_REST_PASSWORD] = f"{rest_secret_arn}:password::"
    if rest_tls_secret_arn:
        out[ENV_REST_TLS_KEYSTORE] = f"{rest_tls_secret_arn}:keystore::"
        out[ENV_REST_TLS_KEYSTORE_PASSWORD] = f"{rest_tls_secret_arn}:keystore_password::"
    if rest_ca_seed_secret_arn:
        out[ENV_REST_TLS_CA_SEED] = f"{rest_ca_seed_secret_arn}:{CA_SEED_KEY}::"
    return out


def health_check_command(worker: WorkerSpec, rest: RestSecurity = RestSecurity()) -> list[str]:
    """ECS container health check: an *authenticated* ``GET /`` on the worker's own REST port (an
    unauthenticated one answers 401). The credentials reach curl on stdin, not on its command line.
    A certificate made at start is verified against the internal CA (its SAN names localhost); a given
    keystore's is not (``-k``: liveness, not identity)."""
    scheme = "https" if rest.tls else "http"
    verify = {True: f" --cacert {IMAGE_CONFIG_DIR}/{REST_TLS_DIR}/ca.pem", False: " -k" if rest.tls else ""}[rest.internal_ca]
    auth = (f'printf \'user = "%s:%s"\\n\' "${ENV_REST_USERNAME}" "${ENV_REST_PASSWORD}" | curl -K -'
            if rest.basic_auth else "curl")
    return ["CMD-SHELL", f"{auth} -fsS{verify} -o /dev/null {scheme}://localhost:{worker.rest_port}/ || exit 1"]
