"""Credentials the stack generates itself (Connect REST basic auth, Prometheus web basic auth) and the
seed of the environment's internal CA (:class:`InternalCaSeed`: the tasks' own TLS certificates).

The value never enters the Terraform plan or state: the password comes from the *ephemeral* resource
``aws_secretsmanager_random_password`` (Secrets Manager's GetRandomPassword, Terraform >= 1.10) and is
written through the *write-only* argument ``secret_string_wo`` of ``aws_secretsmanager_secret_version``
(Terraform >= 1.11, provider >= 5.90). State keeps only the secret's ARN and ``secret_string_wo_version``;
bump the version (``credentials_version`` below) to generate a new password on the next apply.

The secret is JSON::

    {"username": "<user>", "password": "<random, letters and digits>"[, "password_bcrypt": "<bcrypt>"]}

``password_bcrypt`` (Terraform's ``bcrypt()``) is for servers that only take a hash (Prometheus'
web config). ECS injects single keys into the containers (``<arn>:<key>::``); operators and the CLI
read the secret with ``secretsmanager:GetSecretValue``.
"""

from __future__ import annotations

from cdktf import TerraformStack
from cdktf_cdktf_provider_aws.secretsmanager_secret import SecretsmanagerSecret
from cdktf_cdktf_provider_aws.secretsmanager_secret_version import SecretsmanagerSecretVersion
from constructs import Construct

from .checkov import skip

#: Length of generated passwords (letters and digits only: safe in URLs, HTTP basic auth and JAAS files).
PASSWORD_LENGTH = 40


class GeneratedCredentials(Construct):
    """One secret ``<prefix>/<name>`` holding a generated username/password pair."""

    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        description: str,
        username: str,
        kms_key_arn: str,
        bcrypt: bool = False,
        credentials_version: int = 1,
    ) -> None:
        super().__init__(scope, id_)
        self.username = username
        self.secret = SecretsmanagerSecret(
            self,
            "secret",
            name=name,
            description=description,
            kms_key_id=kms_key_arn,
            recovery_window_in_days=7,
        )
        skip(
            self.secret,
            "CKV2_AWS_57",
            "rotation needs a Lambda per secret and a rolling restart of the readers; the stack regenerates the "
            "password when credentials_version is bumped (docs/infra.md), and the secret lives only as long as "
            "the migration",
        )
        password = random_password(self.secret, "password")
        fields = [f'username = "{username}"', f"password = {password}"]
        if bcrypt:
            fields.append(f"password_bcrypt = bcrypt({password}, 10)")
        self.version = write_only_json(self, self.secret, fields, credentials_version)

    @property
    def arn(self) -> str:
        return self.secret.arn

    def value_from(self, key: str) -> str:
        """ECS ``valueFrom`` of one JSON key of the secret."""
        return f"{self.secret.arn}:{key}::"


#: Length of the internal CA's seed (letters and digits: about 238 bits).
CA_SEED_LENGTH = 40


class InternalCaSeed(Construct):
    """One secret ``<prefix>/internal-ca`` holding the seed the tasks derive the environment's internal CA
    from (``{"tls_ca_seed": "<random>"}``): images/kafka-connect/serving-cert.sh explains the scheme. Only
    the three services' execution roles read it (ECS injects it); no operator needs it."""

    def __init__(self, scope: Construct, id_: str, *, name: str, description: str, key: str, kms_key_arn: str,
                 seed_version: int = 1) -> None:
        super().__init__(scope, id_)
        self.key = key
        self.secret = SecretsmanagerSecret(
            self, "secret", name=name, description=description, kms_key_id=kms_key_arn, recovery_window_in_days=7,
        )
        skip(
            self.secret,
            "CKV2_AWS_57",
            "a new seed is a new internal CA: every task must restart with it at once; bump seed_version and "
            "redeploy (docs/infra.md) instead of a rotation Lambda",
        )
        seed = random_password(self.secret, "seed", length=CA_SEED_LENGTH)
        self.version = write_only_json(self, self.secret, [f"{key} = {seed}"], seed_version)

    @property
    def arn(self) -> str:
        return self.secret.arn

    def value_from(self) -> str:
        return f"{self.secret.arn}:{self.key}::"


def random_password(secret: SecretsmanagerSecret, label: str, length: int = PASSWORD_LENGTH) -> str:
    """A Terraform expression of a fresh random string from the *ephemeral* Secrets Manager generator
    (letters and digits): usable only in write-only arguments, never stored in plan or state."""
    stack = TerraformStack.of(secret)
    ephemeral_name = f"{stack.get_logical_id(secret)}_{label}"
    stack.add_override(
        f"ephemeral.aws_secretsmanager_random_password.{ephemeral_name}",
        {
            "password_length": length,
            "exclude_punctuation": True,
            "include_space": False,
            "require_each_included_type": True,
        },
    )
    return f"ephemeral.aws_secretsmanager_random_password.{ephemeral_name}.random_password"


def write_only_json(scope: Construct, secret: SecretsmanagerSecret, fields: list[str], version: int) -> SecretsmanagerSecretVersion:
    """The secret's value ``{fields}`` as JSON through the write-only ``secret_string_wo``."""
    value = SecretsmanagerSecretVersion(scope, "value", secret_id=secret.id)
    value.add_override("secret_string_wo", "${jsonencode({" + ", ".join(fields) + "})}")
    value.add_override("secret_string_wo_version", version)
    return value
