"""Load YAML into a pydantic model; turn the first validation error into one UsageError line."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import UsageError

M = TypeVar("M", bound=BaseModel)

#: libyaml's loader where PyYAML was built with it (the wheels are): the same safe constructors, parsed in C,
#: several times faster than the pure-Python one on the environment files every command reads.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> object:
    """``yaml.safe_load`` through libyaml when available; raises ``yaml.YAMLError`` like it."""
    return yaml.load(text, Loader=_SAFE_LOADER)


def first_error(exc: ValidationError, prefix: str = "") -> UsageError:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-after"))
    field = f"{prefix}{loc}" if loc else prefix.rstrip(". :") or "config"
    msg = err["msg"].removeprefix("Value error, ")
    fix = None
    if err["type"] == "extra_forbidden":
        msg, fix = "unknown field", "remove it or check its spelling"
    elif err["type"] == "missing":
        msg, fix = "required field is missing", "add it"
    return UsageError(field, msg, fix)


def validate_model(model: type[M], data: object, prefix: str = "") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, prefix) from None


def load_yaml_model(model: type[M], path: str | Path) -> M:
    path = Path(path)
    if not path.is_file():
        raise UsageError(str(path), "file not found", "pass the path of an existing YAML file")
    try:
        data = safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise UsageError(str(path), f"not valid YAML: {str(exc).splitlines()[0]}") from None
    return validate_model(model, data, prefix=f"{path.name}: ")
