"""Names of the process environment variables an operator may export for the Connect REST client.

The command options ``--connect-ca`` / ``--connect-secret-arn`` read them as their default (click's
``envvar``) and pass the values on the :class:`~msk_migrate.config.flow.Flow`; the REST client falls
back to them when used as a library. Defined here, below both, so the options need not import the client.
"""

from __future__ import annotations

CONNECT_USER_ENV = "MSK_MIGRATE_CONNECT_USER"
CONNECT_PASSWORD_ENV = "MSK_MIGRATE_CONNECT_PASSWORD"
#: PEM CA bundle of an HTTPS worker with a private CA (``--connect-ca``).
CA_ENV = "MSK_MIGRATE_CONNECT_CA"
#: Secrets Manager secret holding the worker's REST username/password (``--connect-secret-arn``).
SECRET_ARN_ENV = "MSK_MIGRATE_CONNECT_SECRET_ARN"
#: The IAM role ``cleanup --yes`` assumes to delete on an IAM target (the stack names it in the operator task:
#: deleting is no standing right of the operator task role). ``--cleanup-role-arn`` reads it as its default.
CLEANUP_ROLE_ENV = "MSK_MIGRATE_CLEANUP_ROLE_ARN"
