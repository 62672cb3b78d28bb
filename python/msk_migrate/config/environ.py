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
