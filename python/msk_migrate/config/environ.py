"""Names of the process environment variables through which the Connect REST credentials reach the client.

Defined here, below both their writer (the command options, :mod:`msk_migrate.config.flow`) and their
reader (:mod:`msk_migrate.connect_api.rest`), so the options need not import the REST client. (A later
round passes these values as parameters instead; see docs/design.md, "Layers".)
"""

from __future__ import annotations

CONNECT_USER_ENV = "MSK_MIGRATE_CONNECT_USER"
CONNECT_PASSWORD_ENV = "MSK_MIGRATE_CONNECT_PASSWORD"
#: PEM CA bundle of an HTTPS worker with a private CA (``--connect-ca``).
CA_ENV = "MSK_MIGRATE_CONNECT_CA"
#: Secrets Manager secret holding the worker's REST username/password (``--connect-secret-arn``).
SECRET_ARN_ENV = "MSK_MIGRATE_CONNECT_SECRET_ARN"
