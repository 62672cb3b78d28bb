"""docs/infra.md's tables of environment fields, generated from the pydantic ``Field`` definitions
(the way terraform-docs generates a module's inputs), so the reference cannot drift from the model.

    .venv/bin/python -m msk_migrate.config.environment.docs --check docs/infra.md   # exit 1 if stale
    .venv/bin/python -m msk_migrate.config.environment.docs --write docs/infra.md   # regenerate

In the document, each table sits between ``<!-- env-fields: <section> -->`` and
``<!-- /env-fields -->``; everything outside those markers is prose and left alone.
"""

from __future__ import annotations

import argparse
import re
import sys
import types
import typing
from pathlib import Path

from annotated_types import Ge, Le, MaxLen, MinLen
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from ..auth import AuthConfig
from ..migration import MigrationSpec, WorkerSpec
from ..schema_registry import RegistryNetwork, SchemaRegistrySection
from .clusters import MskCreate, SourceCluster, TargetCluster
from .model import EnvironmentConfig
from .monitoring import AlertmanagerRoute, MonitoringConfig
from .network import HttpsEgress, NetworkConfig, OperatorAccess, OperatorTls, Peers
from .proof import ProofService
from .services import ConnectService, GrafanaService, TaskSize
from .state import BackendConfig, EcrConfig
from .validation import ValidationHomes

#: section name (as written in the markers) -> model documented there.
SECTIONS: dict[str, type[BaseModel]] = {
    "top": EnvironmentConfig,
    "operator_access": OperatorAccess,
    "operator_tls": OperatorTls,
    "network": NetworkConfig,
    "network.https_egress": HttpsEgress,
    "peers": Peers,
    "source": SourceCluster,
    "auth": AuthConfig,
    "target": TargetCluster,
    "target.create": MskCreate,
    "migration": MigrationSpec,
    "worker": WorkerSpec,
    "connect": ConnectService,
    "monitoring": MonitoringConfig,
    "monitoring.prometheus": TaskSize,
    "monitoring.grafana": GrafanaService,
    "monitoring.alertmanager": AlertmanagerRoute,
    "proof": ProofService,
    "validation": ValidationHomes,
    "backend": BackendConfig,
    "ecr": EcrConfig,
    "schema_registry": SchemaRegistrySection,
    "schema_registry.network": RegistryNetwork,
}

#: Which section documents a nested model (for "see ..." links in the type column).
_MODEL_SECTION = {model: name for name, model in SECTIONS.items() if name not in ("top",)}

_BLOCK = re.compile(r"(<!-- env-fields: (?P<name>[a-z_.]+) -->\n)(?P<body>.*?)(<!-- /env-fields -->)", re.S)


def _code(value: object) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (list, tuple)):
        return "`[" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in value) + "]`"
    if isinstance(value, dict):
        return "`{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}`" if value else "`{}`"
    return f"`{value}`"


def _type(annotation: object) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return " or ".join(_type(a) for a in inner)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (list, tuple):
        return f"list of {_type(args[0])}s" if args else "list"
    if origin is dict:
        return "map"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        section = _MODEL_SECTION.get(annotation)
        return f"object (`{section}`)" if section else "object"
    names: dict[object, str] = {str: "string", int: "integer", bool: "boolean"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _bounds(metadata: list) -> str:
    lo = next((m.ge for m in metadata if isinstance(m, Ge)), None)
    hi = next((m.le for m in metadata if isinstance(m, Le)), None)
    if lo is not None and hi is not None:
        return f", {lo}–{hi}"
    if lo is not None:
        return f", ≥ {lo}"
    if hi is not None:
        return f", ≤ {hi}"
    n = next((m.min_length for m in metadata if isinstance(m, MinLen)), None)
    x = next((m.max_length for m in metadata if isinstance(m, MaxLen)), None)
    return f", {n}–{x} long" if n is not None and x is not None else ""


def _default(info) -> str:
    if info.is_required():
        return "**required**"
    if info.default_factory is not None:
        value = info.default_factory()
        if isinstance(value, BaseModel):
            return "defaults"
        return _code(value)
    if info.default is None or info.default is PydanticUndefined:
        return "—"
    return _code(info.default)


def table(model: type[BaseModel]) -> str:
    """The markdown table of ``model``'s fields: name, type, default, description."""
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        description = (info.description or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{name}` | {_type(info.annotation)}{_bounds(info.metadata)} | {_default(info)} | {description} |")
    return "\n".join(rows) + "\n"


def undocumented(model: type[BaseModel] = EnvironmentConfig, seen: set | None = None) -> list[str]:
    """Fields (recursively) without a description."""
    seen = seen if seen is not None else set()
    if model in seen:
        return []
    seen.add(model)
    out = []
    for name, info in model.model_fields.items():
        if not info.description:
            out.append(f"{model.__name__}.{name}")
        for arg in (info.annotation, *typing.get_args(info.annotation)):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                out += undocumented(arg, seen)
    return out


def render(text: str) -> str:
    """``text`` with every marked table regenerated."""

    def one(m: re.Match) -> str:
        name = m.group("name")
        if name not in SECTIONS:
            raise KeyError(f"unknown env-fields section {name!r}; known: {', '.join(SECTIONS)}")
        return m.group(1) + table(SECTIONS[name]) + m.group(4)

    return _BLOCK.sub(one, text)


def sections_in(text: str) -> list[str]:
    return [m.group("name") for m in _BLOCK.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m msk_migrate.config.environment.docs", description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if the tables differ from the model")
    mode.add_argument("--write", action="store_true", help="rewrite the tables in place")
    ap.add_argument("path", type=Path, help="the markdown file (docs/infra.md)")
    args = ap.parse_args(argv)
    text = args.path.read_text()
    new = render(text)
    if args.write:
        if new != text:
            args.path.write_text(new)
        print(f"{args.path}: {len(sections_in(text))} tables generated")
        return 0
    if new != text:
        print(f"{args.path}: environment field tables are stale; run python -m msk_migrate.config.environment.docs --write {args.path}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
