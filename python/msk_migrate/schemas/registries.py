"""Where a command's source and target schema registries are: the ONE resolver (:func:`resolve_registries`).

Every command that talks to the registries asks it: ``schemas plan|copy|verify``, the gates' "schemas in sync"
(``lag``, ``cutover check``) and, for the validator's proof per record, ``validate`` (:meth:`Registries.urls`);
:func:`msk_migrate.commands.schemas.registries_from_options` gathers its inputs: the options, and the flow's own
(read once with the flow: :attr:`msk_migrate.config.flow.Flow.registry_file` / ``local_registries``), or for the
``schemas`` commands, which need no cluster settings, the file's section alone. Its inputs are
already read; the resolver itself reads no file, no local state and no environment variable, opens no
connection, and never decides on an exception's text:

- the registry options: ``--source-registry`` / ``--target-registry`` (or MSK_MIGRATE_<ROLE>_REGISTRY_URL, checked
  where click parses them) and ``--<role>-registry-secret-arn``;
- the flow's file (``--env`` / ``--config``) as a :class:`~msk_migrate.config.schema_registry.RegistryFile`: its
  ``schema_registry`` section, or none;
- the local environment's registries (:class:`~msk_migrate.config.schema_registry.LocalRegistries`), recorded by ``msk-migrate local up --schema-registry``.

Rules, for each role (source, target) on its own:

1. the role's option names its registry: it wins (the options override the file's section);
2. else the ``schema_registry`` section of the flow's file (``--env`` / ``--config``);
3. else the local environment's registry, and only when no file was given: beside ``--env`` / ``--config``,
   ``--local`` chooses the Connect worker and nothing else, so a file with no section means no registry, never
   the local ones (every command resolves the pair ``--config F --local`` the same way);
4. registries are *wanted* when the command needs them (``required=True``: ``schemas``) or an option names one
   (the gates). Then the source of the flow given must name registries: a file without a ``schema_registry``
   section, or (no file) a local environment that runs none, is bad input naming ``--env``/``--config`` or
   ``--local``, even when both options are given (the rule ``schemas``, ``lag`` and ``cutover check`` always had;
   ``validate`` takes its two options both or neither, and consults the file only without them: its command,
   ``commands/validate_request.py``, calls this resolver under that rule);
5. not wanted and no role named anywhere: ``None`` (nothing to check);
6. one role named and the other not: bad input (exit 2) naming the other's option (``no target registry given``);
7. a URL or secret that came from an exported variable (MSK_MIGRATE_<ROLE>_REGISTRY_URL / _SECRET_ARN, not the
   command line) and differs from what the file's section names for it is bad input naming the variable: a
   leftover of another environment would otherwise send this one's schemas (and credentials) to another registry.

Invariants: each URL returned carries the name of the option or setting that gave it (``--source-registry``,
``--config (schema_registry.source)``, ``--local``) into every later message; a section's URL passes
:func:`~msk_migrate.schemas.client.check_registry_url` under that name here (the options' URLs are checked where
click parses them, the local ones are the harness's own); a role's basic-auth secret is its option's, else the
section's ``<role>_secret_arn``; the same inputs give the same answer whatever the command. Which of
``--env``/``--config``/``--local`` a command accepts together is the command's option rule, not the resolver's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..errors import UsageError

if TYPE_CHECKING:  # the HTTP client (requests) is loaded when a command builds its clients
    from ..config.schema_registry import LocalRegistries, RegistryFile
    from .client import RegistryClient
    from .tls import RegistryTls

Role = Literal["source", "target"]
ROLES: tuple[Role, Role] = ("source", "target")


@dataclass(frozen=True)
class RegistryEndpoint:
    """One registry a command talks to: its URL, what named it, and the secret of its basic auth (if any)."""

    role: Role
    url: str
    named_by: str  #: the option or setting that gave the URL, as messages name it
    secret_arn: str | None = None
    secret_named_by: str = ""  #: the option or setting that gave ``secret_arn``

    def client(self, tls: RegistryTls | None = None) -> RegistryClient:
        """The registry's HTTP client: credentials from MSK_MIGRATE_<ROLE>_REGISTRY_USER/_PASSWORD, else the secret;
        TLS material (``tls``, else read now) from MSK_MIGRATE_<ROLE>_REGISTRY_CA/_CERT/_KEY."""
        from .client import RegistryClient, credentials, env_tls

        tls = env_tls(self.role) if tls is None else tls
        return RegistryClient(self.role, self.url, self.named_by, auth=credentials(self.role, self.secret_arn, self.secret_named_by),
                              cert=tls.cert, verify=tls.verify)


@dataclass(frozen=True)
class Registries:
    """The source and target registries of a command (:func:`resolve_registries`)."""

    source: RegistryEndpoint
    target: RegistryEndpoint

    def urls(self) -> dict[str, str]:
        """``{"source": URL, "target": URL}`` (the validation request's ``schema_registry``)."""
        return {"source": self.source.url, "target": self.target.url}

    def clients(self) -> tuple[RegistryClient, RegistryClient]:
        """(source, target) HTTP clients; both roles' TLS settings are checked before any credential is read."""
        from .tls import env_tls

        tls = {role: env_tls(role) for role in ROLES}
        return self.source.client(tls["source"]), self.target.client(tls["target"])


def _option(role: Role) -> str:
    return f"--{role}-registry"


def resolve_registries(*, source_url: str | None = None, target_url: str | None = None, source_secret: str | None = None,
                       target_secret: str | None = None, file: RegistryFile | None = None, local: LocalRegistries | None = None,
                       required: bool = False, exported: Mapping[str, str] | None = None) -> Registries | None:
    """The command's registries by the module's rules, or None when nothing names one (``required``: bad input).
    ``exported``: which of the values came from an exported variable rather than the command line (``source_url``,
    ``target_secret``, ... -> the variable's name), for rule 7."""
    from .client import check_registry_url

    _check_exported(exported or {}, {"source_url": source_url, "target_url": target_url, "source_secret": source_secret,
                                     "target_secret": target_secret}, file)

    if required or source_url or target_url:  # rule 4
        if file is not None and file.section is None:
            raise file.no_section()
        if file is None and local is not None and not local.urls:
            raise _no_local(local)
    given = {"source": source_url, "target": target_url}
    secrets = {"source": source_secret, "target": target_secret}
    named = file if file is not None and file.section is not None else None  # rule 2: a file that has a section
    local_urls = local.urls if local is not None and file is None else {}  # rule 3: a file's flow takes no local registry
    found: dict[str, RegistryEndpoint] = {}
    for role in ROLES:
        url, by = given[role], _option(role)
        secret, secret_by = secrets[role], f"{_option(role)}-secret-arn"
        if named is not None:
            section = named.required()
            if not url:
                by = named.where(role)
                url = check_registry_url(getattr(section, role), by)
            if not secret and getattr(section, f"{role}_secret_arn"):
                secret, secret_by = getattr(section, f"{role}_secret_arn"), named.where(f"{role}_secret_arn")
        elif not url and local_urls.get(role):
            url, by = local_urls[role], "--local"
        if url:
            found[role] = RegistryEndpoint(role, url, by, secret, secret_by)
    if not found and not required:
        return None
    for role in ROLES:
        if role not in found:  # rule 6 (or a local environment that recorded one side only)
            if local is not None and local_urls:
                raise _no_local(local)
            raise UsageError(_option(role), f"no {role} registry given",
                             f"pass {_option(role)} URL, --local, or --env/--config with a schema_registry section")
    return Registries(found["source"], found["target"])


def _check_exported(exported: Mapping[str, str], values: Mapping[str, str | None], file: RegistryFile | None) -> None:
    """Rule 7: a value that came from an exported variable, beside a file whose section names that setting otherwise,
    is a leftover of another environment or flow, not this command's choice: bad input naming the variable (the
    same value typed as the option is the operator's choice and wins, rule 1)."""
    if file is None or file.section is None:
        return
    for key, variable in exported.items():
        role, _, kind = key.partition("_")
        setting = role if kind == "url" else f"{role}_secret_arn"
        named, value = getattr(file.section, setting, None), values.get(key)
        if value and named and value.rstrip("/") != named.rstrip("/"):
            option = f"--{role}-registry" + ("" if kind == "url" else "-secret-arn")
            raise UsageError(variable, f"{value} contradicts {file.where(setting)}, which names {named}",
                             f"unset {variable} (or pass {option} to choose another for this command)")


def _no_local(local: LocalRegistries) -> UsageError:
    return UsageError("--local", f"the local environment under {local.base} runs no schema registry",
                      "run `msk-migrate local up --schema-registry`")
