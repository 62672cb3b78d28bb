"""Monitoring wiring of the stack: generated operator credentials and the MSK brokers Prometheus scrapes.

Credentials (:class:`.credentials.GeneratedCredentials`, nothing in the Terraform state):
  - ``<prefix>/connect-rest``: basic auth of the Connect REST API. ECS injects ``username``/``password``
    into the workers as ``CONNECT_REST_USERNAME``/``CONNECT_REST_PASSWORD``; the
    entrypoint turns them into the JAAS file of Kafka's BasicAuthSecurityRestExtension.
  - ``<prefix>/connect-rest/<person>``: one login per name in ``connect.people``, the person's own for the
    Connect REST API and Prometheus. ECS injects the password into the workers as ``CONNECT_REST_PERSON_<NAME>``
    (hyphens as underscores); the entrypoint adds one line per person to the credentials file, and the
    worker's REST audit line (``user=<name>``) then names who sent a change. Prometheus gets the bcrypt
    hash as ``MM2_PROMETHEUS_PERSON_<NAME>_BCRYPT`` (prometheus/entrypoint.sh: one ``basic_auth_users``
    entry per person beside the machine login). Grafana gets the password as
    ``MM2_GRAFANA_PERSON_<NAME>_PASSWORD``: images/grafana/people.sh makes the Grafana user ``<name>`` with it
    (org role Editor) once Grafana answers, so nobody needs the admin login day to day.
  - ``<prefix>/prometheus-web``: basic auth of Prometheus (web config ``basic_auth_users`` takes the
    bcrypt hash); Grafana's datasource logs in with the plain password.
  - ``<prefix>/internal-ca``: the seed of the internal CA every task issues its own TLS certificate from
    at start (images/kafka-connect/serving-cert.sh): the load balancer re-encrypts to the tasks, workers
    verify each other, Grafana verifies Prometheus.

MSK open monitoring (created clusters): Prometheus scrapes every broker's JMX exporter (11001) and node
exporter (11002). The broker DNS names come from ``data.aws_msk_broker_nodes`` and reach the Prometheus
task as ``MM2_MSK_BROKERS`` (comma-separated); prometheus/entrypoint.sh renders them as static targets.
Static targets rather than DNS service discovery: MSK publishes one DNS name per broker and no name
that resolves to all of them, so a DNS SD job would need the same list anyway. Adding brokers changes
the list, hence the task definition: Prometheus is redeployed with the new targets by the same apply.
"""

from __future__ import annotations

from dataclasses import dataclass

from constructs import Construct

from msk_migrate.config.environment import EnvironmentConfig
from msk_migrate.config.environment.services import SERVICE_LOGIN
from msk_migrate.connectors.worker_env import CA_SEED_KEY, ENV_REST_TLS_CA_SEED

from .credentials import GeneratedCredentials, InternalCaSeed

#: MSK open monitoring ports (fixed by MSK).
MSK_JMX_EXPORTER_PORT = 11001
MSK_NODE_EXPORTER_PORT = 11002

#: The variable the serving-certificate init container reads the internal CA's seed from.
SERVING_CERT_SEED_ENV = "MSK_MIGRATE_INTERNAL_CA_SEED"

#: Usernames of the generated credentials.
CONNECT_REST_USER = SERVICE_LOGIN
#: The worker variable holding one person's REST password (images/kafka-connect/entrypoint.sh reads them).
PERSON_PASSWORD_ENV = "CONNECT_REST_PERSON_"
PROMETHEUS_WEB_USER = "mm2-operator"
#: Prometheus' variable holding one person's bcrypt hash (prometheus/entrypoint.sh reads them).
PROMETHEUS_PERSON_ENV = "MM2_PROMETHEUS_PERSON_"
#: Grafana's variable holding one person's password (images/grafana/people.sh reads them).
GRAFANA_PERSON_ENV = "MM2_GRAFANA_PERSON_"


@dataclass
class OperatorCredentials:
    connect_rest: GeneratedCredentials
    prometheus_web: GeneratedCredentials
    internal_ca: InternalCaSeed
    #: person -> their own Connect REST login (``connect.people``)
    people: dict[str, GeneratedCredentials]

    def connect_secret_env(self) -> dict[str, str]:
        c = self.connect_rest
        return {"CONNECT_REST_USERNAME": c.value_from("username"), "CONNECT_REST_PASSWORD": c.value_from("password"),
                ENV_REST_TLS_CA_SEED: self.internal_ca.value_from(),
                **{person_env(name): cred.value_from("password") for name, cred in self.people.items()}}

    def connect_secret_arns(self) -> list[str]:
        """What the Connect execution role reads: the machine login, the CA seed and every person's login."""
        return [self.connect_rest.arn, self.internal_ca.arn, *(c.arn for c in self.people.values())]

    def serving_cert_secret_env(self) -> dict[str, str]:
        """The seed, for the serving-certificate init container of Prometheus and Grafana (:mod:`.ecs`)."""
        return {SERVING_CERT_SEED_ENV: self.internal_ca.value_from()}

    def prometheus_secret_env(self) -> dict[str, str]:
        p = self.prometheus_web
        return {
            "MM2_PROMETHEUS_WEB_USER": p.value_from("username"),
            "MM2_PROMETHEUS_WEB_PASSWORD_BCRYPT": p.value_from("password_bcrypt"),
            # the container's own health check logs in with it
            "MM2_PROMETHEUS_WEB_PASSWORD": p.value_from("password"),
            **{prometheus_person_env(name): cred.value_from("password_bcrypt") for name, cred in self.people.items()},
        }

    def prometheus_secret_arns(self) -> list[str]:
        """What the Prometheus execution role reads: its machine login, the CA seed and every person's login."""
        return [self.prometheus_web.arn, self.internal_ca.arn, *(c.arn for c in self.people.values())]

    def grafana_secret_arns(self, admin_arn: str) -> list[str]:
        """What the Grafana execution role reads: the admin login, the datasource's Prometheus login, the CA seed
        and every person's login (their Grafana user's password)."""
        return [admin_arn, self.prometheus_web.arn, self.internal_ca.arn, *(c.arn for c in self.people.values())]

    def grafana_secret_env(self) -> dict[str, str]:
        """The datasource's Prometheus login and every person's own password (their Grafana user; the admin
        password is added by the stack from its own secret)."""
        p = self.prometheus_web
        return {"PROMETHEUS_BASIC_AUTH_USER": p.value_from("username"), "PROMETHEUS_BASIC_AUTH_PASSWORD": p.value_from("password"),
                **{grafana_person_env(name): cred.value_from("password") for name, cred in self.people.items()}}


def _env_name(name: str) -> str:
    """A person's name as part of a variable name (``j-smith`` -> ``J_SMITH``): one to one, as person names are
    lower-case with single hyphens (the environment model checks them)."""
    return name.upper().replace("-", "_")


def person_env(name: str) -> str:
    """``alice`` -> ``CONNECT_REST_PERSON_ALICE``; ``j-smith`` -> ``CONNECT_REST_PERSON_J_SMITH`` (names are
    lower-case with single hyphens, so the mapping is one to one and the entrypoint inverts it)."""
    return PERSON_PASSWORD_ENV + _env_name(name)


def prometheus_person_env(name: str) -> str:
    """``alice`` -> ``MM2_PROMETHEUS_PERSON_ALICE_BCRYPT`` (the same one-to-one mapping as :func:`person_env`)."""
    return PROMETHEUS_PERSON_ENV + _env_name(name) + "_BCRYPT"


def grafana_person_env(name: str) -> str:
    """``j-smith`` -> ``MM2_GRAFANA_PERSON_J_SMITH_PASSWORD`` (the same one-to-one mapping as :func:`person_env`;
    images/grafana/people.sh inverts it into the Grafana login ``j-smith``)."""
    return GRAFANA_PERSON_ENV + _env_name(name) + "_PASSWORD"


def operator_credentials(scope: Construct, cfg: EnvironmentConfig, kms_key_arn: str) -> OperatorCredentials:
    p = cfg.resource_prefix
    people = {
        name: GeneratedCredentials(
            scope, f"connect_rest_person_{name.replace('-', '_')}", name=f"{cfg.connect_rest_secret_name}/{name}",
            description=f"{name}'s own login to the Kafka Connect REST API, Prometheus and Grafana of {p} "
            "(generated; keys username, password, password_bcrypt)",
            username=name, kms_key_arn=kms_key_arn, bcrypt=True,
        )
        for name in cfg.connect.people
    }
    return OperatorCredentials(
        people=people,
        connect_rest=GeneratedCredentials(
            scope, "connect_rest_auth", name=cfg.connect_rest_secret_name,
            description=f"Basic auth of the Kafka Connect REST API of {p} (generated; keys username, password)",
            username=CONNECT_REST_USER, kms_key_arn=kms_key_arn,
        ),
        prometheus_web=GeneratedCredentials(
            scope, "prometheus_web_auth", name=f"{p}/prometheus-web",
            description=f"Basic auth of Prometheus of {p} (generated; keys username, password, password_bcrypt)",
            username=PROMETHEUS_WEB_USER, kms_key_arn=kms_key_arn, bcrypt=True,
        ),
        internal_ca=InternalCaSeed(
            scope, "internal_ca", name=f"{p}/internal-ca", key=CA_SEED_KEY, kms_key_arn=kms_key_arn,
            description=f"Seed of the internal CA of {p}'s tasks (generated; key {CA_SEED_KEY}): the TLS "
            "certificates Connect, Prometheus and Grafana make at start",
        ),
    )


def broker_scrape_env(scope: Construct, cfg: EnvironmentConfig, msk) -> dict[str, str]:
    """``{"MM2_MSK_BROKERS": <broker DNS names>}`` for a created cluster (open monitoring is on there; the
    names come from target-<env>'s ``broker_endpoints`` output); ``{}`` for an existing cluster, whose open
    monitoring and firewall this stack does not manage."""
    if not cfg.target.create or not getattr(msk, "broker_endpoints", None):
        return {}
    return {"MM2_MSK_BROKERS": msk.broker_endpoints}
