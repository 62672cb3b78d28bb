"""Helpers of the environment models: cross-field errors located at the exact field."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError


def field_error(model: str, loc: tuple[str, ...], value: object, message: str) -> ValidationError:
    """A validation error located at ``loc`` below the model being validated (cross-field checks
    can then name the exact field, e.g. ``connect.max_capacity``)."""
    return ValidationError.from_exception_data(
        model,
        [InitErrorDetails(type=PydanticCustomError("value_error", "{message}", {"message": message}), loc=loc, input=value)],
    )
