"""Credentials the stack generates itself (Connect REST basic auth, Prometheus web basic auth).

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
        stack = TerraformStack.of(self)
        ephemeral_name = f"{stack.get_logical_id(self.secret)}_password"
        stack.add_override(
            f"ephemeral.aws_secretsmanager_random_password.{ephemeral_name}",
            {
                "password_length": PASSWORD_LENGTH,
                "exclude_punctuation": True,
                "include_space": False,
                "require_each_included_type": True,
            },
        )
        password = f"ephemeral.aws_secretsmanager_random_password.{ephemeral_name}.random_password"
        fields = [f'username = "{username}"', f"password = {password}"]
        if bcrypt:
            fields.append(f"password_bcrypt = bcrypt({password}, 10)")
        self.version = SecretsmanagerSecretVersion(self, "value", secret_id=self.secret.id)
        self.version.add_override("secret_string_wo", "${jsonencode({" + ", ".join(fields) + "})}")
        self.version.add_override("secret_string_wo_version", credentials_version)

    @property
    def arn(self) -> str:
        return self.secret.arn

    def value_from(self, key: str) -> str:
        """ECS ``valueFrom`` of one JSON key of the secret."""
        return f"{self.secret.arn}:{key}::"
