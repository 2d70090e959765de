"""A discriminated union whose variant classes are created on the first use of their tag.

Validating a union needs every variant's validator, so a model with a union field creates
all its variants the first time it is used: the first ``session/update`` an agent sends
created the 14 update kinds of v1 and the classes they refer to (42 classes, 12-18 ms,
plus 9-12 ms to build the larger validator), although it sends one kind (issue 34). Here
each variant is a plain validator function that imports its class when its tag first
comes up; the union itself is pydantic-core's tagged union, so what is accepted, the
errors (types and locations) and the dump are those of ``Field(discriminator=...)``.

The generated modules give checkers the ordinary union (``if TYPE_CHECKING:``) and
pydantic this marker, ``TypeAliasType("X", Annotated[object, LazyTaggedUnion(...)])``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pydantic_core import core_schema

LAZY_VARIANT_KEY = "acp_lazy_variant"
"""Metadata key of a variant's validator schema: the function returning its class (the
lenient salvage walks into the class's own schema through it)."""


class LazyTaggedUnion:
    """``Annotated`` marker of a union of models told apart by one constant field.

    ``discriminator`` is the field's Python name and wire name; ``variants`` maps each tag
    to the module (relative to ``package``) and name of its class.
    """

    __slots__ = ("_discriminator", "_package", "_variants")

    def __init__(
        self,
        package: str,
        discriminator: tuple[str, str],
        variants: Mapping[str, tuple[str, str]],
    ) -> None:
        self._package = package
        self._discriminator = discriminator
        self._variants = dict(variants)

    def __repr__(self) -> str:
        return f"LazyTaggedUnion({self._discriminator[1]!r}: {', '.join(self._variants)})"

    def variant(self, tag: str) -> type[Any]:
        """The class of ``tag``'s variant, created (imported) now if it was not yet."""
        module, name = self._variants[tag]
        cls: type[Any] = getattr(importlib.import_module(module, self._package), name)
        return cls

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(self._variants)

    @property
    def discriminator(self) -> tuple[str, str]:
        """The tag field's Python name and wire name."""
        return self._discriminator

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return self._union({tag: self._lazy_choice(tag) for tag in self._variants})

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        # A JSON schema describes every variant: only here are they all created.
        eager = {tag: self.variant(tag).__pydantic_core_schema__ for tag in self._variants}
        return handler(self._union(eager))

    def _union(self, choices: dict[Any, core_schema.CoreSchema]) -> core_schema.CoreSchema:
        field, alias = self._discriminator
        paths: list[list[str | int]] = [[field], [alias]]
        return core_schema.tagged_union_schema(
            choices,
            discriminator=paths if alias != field else field,
            strict=False,
            from_attributes=True,
            serialization=core_schema.simple_ser_schema("any"),  # each value's own class
        )

    def _lazy_choice(self, tag: str) -> core_schema.CoreSchema:
        load = partial(self.variant, tag)
        check = _checker(load, self._variants[tag][1])
        return core_schema.no_info_plain_validator_function(
            check, metadata={LAZY_VARIANT_KEY: load}
        )


class _NotLoaded:
    """What a variant's class is before it is imported: no value is an instance of it."""


def _checker(load: Callable[[], type[Any]], name: str) -> Callable[[Any], Any]:
    """The validator function of one variant: an instance of its class is taken as it is
    (as a model validator does, ``revalidate_instances="never"``), anything else goes
    through the class's validator, whose errors pydantic-core places under the tag."""
    cls: type[Any] = _NotLoaded
    validate: Callable[[Any], Any]

    def first(value: Any) -> Any:
        nonlocal cls, validate
        cls = load()
        validate = cls.__pydantic_validator__.validate_python
        return check(value)

    validate = first

    def check(value: Any) -> Any:
        return value if isinstance(value, cls) else validate(value)

    # pydantic-core names a choice after its function (``function-plain[Name()]``)
    check.__name__ = check.__qualname__ = name
    return check
