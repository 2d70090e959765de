"""The base of every generated model, written once here instead of in each generated package.

Generated packages (``acp_generated.v1``, ``v2``, and their unstable supersets) define their
models on :class:`AcpModel` and guard the tags of open unions with :func:`unknown_tag`.
Keeping both in the runtime makes them one typed, tested piece of code, and lets a schema
bump regenerate models without touching how every model validates and dumps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict


class AcpModel(BaseModel):
    """Base of every generated model: wire names are camelCase aliases, unknown fields are kept."""

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    if not TYPE_CHECKING:  # checkers keep pydantic's signatures; these only add a fast path

        # pydantic's wrappers forward all 6-15 keywords to pydantic-core, whose argument
        # parsing then costs more than validating a small model (measured, bench/).
        # Validation needs no wrapper at all: once a class is complete, its
        # ``model_validate(_json)`` is its validator's own method, which takes the same
        # keywords; no Python frame runs between the caller and pydantic-core.
        @classmethod
        def __pydantic_on_complete__(cls):
            validator = cls.__pydantic_validator__
            cls.model_validate = validator.validate_python
            cls.model_validate_json = validator.validate_json

        @classmethod
        def __pydantic_init_subclass__(cls, **kwargs):
            super().__pydantic_init_subclass__(**kwargs)
            if "model_validate" not in cls.__dict__:  # incomplete: not a base's validator
                cls.model_validate = vars(BaseModel)["model_validate"]
                cls.model_validate_json = vars(BaseModel)["model_validate_json"]

        # ``by_alias`` None and True are the same here: the config serializes by alias.
        def model_dump(self, *, mode="python", by_alias=None, exclude_unset=False, **options):
            if options or by_alias is False:
                return super().model_dump(
                    mode=mode, by_alias=by_alias, exclude_unset=exclude_unset, **options
                )
            return self.__pydantic_serializer__.to_python(
                self, mode=mode, exclude_unset=exclude_unset
            )

        def model_dump_json(self, *, by_alias=None, exclude_unset=False, **options):
            if options or by_alias is False:
                return super().model_dump_json(
                    by_alias=by_alias, exclude_unset=exclude_unset, **options
                )
            return self.__pydantic_serializer__.to_json(self, exclude_unset=exclude_unset).decode()


def unknown_tag(known: frozenset[str]) -> Callable[[str], str]:
    """Validator for a catch-all variant's tag: a known tag must match its own variant.

    An open union (``ContentBlock``, ``SessionUpdate``, ...) ends in a variant that takes
    any tag, so a newer peer's kinds survive a relay. Without this guard, a known tag whose
    payload is malformed would silently parse as that catch-all instead of failing.
    """

    def check(value: str) -> str:
        if value in known:
            raise ValueError(f"known tag {value!r} did not match its variant's schema")
        return value

    return check
