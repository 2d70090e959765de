"""Unions of models whose variant classes are created on the first use of their variant.

Validating a union needs every variant's validator, so a model with a union field created
all its variants the first time it was used: the first ``session/update`` an agent sent
created the 14 update kinds of v1 and the classes they refer to (38 classes, about 20 ms
with the larger validator), although it sends one kind; in v2, 115 (issue 34).
Here each variant is a plain validator function that imports its class when it first
comes up. The unions themselves are pydantic-core's: a tagged union (``Tagged``) and a
union tried left to right (``LeftToRight``, an open union's known part, then its catch-all),
whose choices carry the labels pydantic-core gives them itself (``tagged-union[A,B]``,
a class's name), so what is accepted, the errors (types and locations) and the dump are
those of the union written out, as checkers see it.

The generated modules give checkers the union (``if TYPE_CHECKING:``) and pydantic this
marker, ``TypeAliasType("X", Annotated[object, LazyUnion(__package__, node)])``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Union

from pydantic_core import core_schema

LAZY_VARIANT_KEY = "acp_lazy_variant"
"""Metadata key of a variant's validator schema: the function returning the variant's own
core schema (the lenient salvage walks into it)."""

Variant = tuple[str, str]
"""A variant class: its module (relative to the generated package) and its name."""


class Tagged:
    """Variants told apart by one constant field (its Python and wire names); ``name``:
    the alias a member union is written as (its JSON schema's ``$defs`` entry)."""

    __slots__ = ("choices", "discriminator", "name")

    def __init__(
        self,
        discriminator: tuple[str, str],
        choices: Mapping[str, Variant | Tagged | LeftToRight],
        name: str | None = None,
    ) -> None:
        self.discriminator = discriminator
        self.choices = choices
        self.name = name


class LeftToRight:
    """Choices tried in order: an open union's known part, then its catch-all."""

    __slots__ = ("choices", "name")

    def __init__(self, *choices: Variant | Tagged | LeftToRight, name: str | None = None) -> None:
        self.choices = choices
        self.name = name


Node = Union[Variant, Tagged, LeftToRight]  # noqa: UP007  # a runtime alias on Python 3.10


class LazyUnion:
    """``Annotated`` marker of a union whose variant classes are imported on first use."""

    __slots__ = ("_node", "_package")

    def __init__(self, package: str, node: Tagged | LeftToRight) -> None:
        self._package = package
        self._node = node

    @property
    def node(self) -> Tagged | LeftToRight:
        return self._node

    def __repr__(self) -> str:
        return f"LazyUnion({label(self._node)})"

    def variant(self, variant: Variant) -> type[Any]:
        """The class, created (imported) now if it was not yet."""
        module, name = variant
        cls: type[Any] = getattr(importlib.import_module(module, self._package), name)
        return cls

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return self._schema(self._node, self._lazy_choice)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        # A JSON schema describes every variant: only here are they all created. A member
        # union is a definition of its own, named as its alias (pydantic's ``$defs``).
        members: list[core_schema.CoreSchema] = []
        eager = self._schema(
            self._node, lambda v: self.variant(v).__pydantic_core_schema__, members
        )
        return handler(core_schema.definitions_schema(eager, members) if members else eager)

    def _schema(
        self,
        node: Node,
        leaf: Callable[[Variant], core_schema.CoreSchema],
        members: list[core_schema.CoreSchema] | None = None,
    ) -> core_schema.CoreSchema:
        union: core_schema.TaggedUnionSchema | core_schema.UnionSchema
        if isinstance(node, Tagged):
            field, wire = node.discriminator
            paths: list[list[str | int]] = [[field], [wire]]
            union = core_schema.tagged_union_schema(
                {tag: self._schema(c, leaf, members) for tag, c in node.choices.items()},
                discriminator=paths if wire != field else field,
                strict=False,
                from_attributes=True,
                serialization=core_schema.simple_ser_schema("any"),  # each value's own class
            )
        elif isinstance(node, LeftToRight):
            union = core_schema.union_schema(
                [(self._schema(c, leaf, members), label(c)) for c in node.choices],
                mode="left_to_right",
                serialization=core_schema.simple_ser_schema("any"),
            )
        else:
            return leaf(node)
        if members is None or node.name is None or node is self._node:
            return union
        union["ref"] = node.name
        members.append(union)
        return core_schema.definition_reference_schema(node.name)

    def _lazy_choice(self, variant: Variant) -> core_schema.CoreSchema:
        def load() -> type[Any]:
            return self.variant(variant)

        return core_schema.no_info_plain_validator_function(
            _checker(load, variant[1]),
            metadata={LAZY_VARIANT_KEY: lambda: load().__pydantic_core_schema__},
        )


def label(node: Node) -> str:
    """What pydantic-core calls the validator of the union written out: a model by its
    class's name, a union by its kind and its choices' names."""
    if isinstance(node, Tagged):
        return f"tagged-union[{','.join(label(c) for c in node.choices.values())}]"
    if isinstance(node, LeftToRight):
        return f"union[{','.join(label(c) for c in node.choices)}]"
    return node[1]


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

    # what tracebacks and a choice's repr show (its label in errors is set by the union)
    check.__name__ = check.__qualname__ = name
    return check
