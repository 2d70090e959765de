"""Discriminated unions whose variants are created on the first use of their tag (issue 34).

A model with a union field created every variant the first time it was used: an agent's
first ``session/update`` created all 14 v1 update kinds and what they refer to. So a
union alias told apart by one constant field, whose members are all classes, is generated
twice: for checkers as it was, and at run time as ``acp_runtime``'s ``LazyTaggedUnion``
marker naming each variant's module (``_lazy_union.py``). Its variants then count as no
dependency of the alias (``lazy_models`` gives them modules of their own), and the alias's
module imports them for checkers only.

Left eager: a union another alias refers to (an open union's known part: the labels
pydantic-core gives the outer union's choices would change), and one with a member that
is not a class (a nested union).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import lru_cache

from .authoring import ModelIndex, _literal_constant, _name_of, _unannotated


@dataclass(frozen=True)
class LazyUnion:
    name: str
    field: str  # the discriminator's Python name
    wire: str  # ... and its name on the wire
    variants: tuple[tuple[str, str], ...]  # (tag, class), in the union's order


@lru_cache(maxsize=8)
def lazy_unions(source: str) -> dict[str, LazyUnion]:
    """The union aliases of a models module made lazy, by name."""
    index = ModelIndex(source)
    in_aliases = {
        n.id
        for value in index.aliases.values()
        for n in ast.walk(value)
        if isinstance(n, ast.Name)
    }
    found: dict[str, LazyUnion] = {}
    for name in index.aliases:
        union = index.union_members(name)
        if union is None or name in in_aliases:
            continue
        members, field = union
        classes = [_name_of(m) for m in members]
        if field is None or not all(c in index.classes for c in classes):
            continue
        tags = [_tag(index, c, field) for c in classes]
        known = [t for t in tags if t is not None]
        if len(known) != len(tags) or len({wire for _tag_value, wire in known}) != 1:
            continue  # a shape this does not know: pydantic's own union, as before
        variants = tuple((tag, cls) for (tag, _wire), cls in zip(known, classes, strict=True))
        found[name] = LazyUnion(name, field, known[0][1], variants)
    return found


def _tag(index: ModelIndex, cls: str, field: str) -> tuple[str, str] | None:
    """(constant, wire name) of a variant's tag field, if it is one string constant."""
    for f in index.fields(cls):
        if f.name == field:
            constant = _literal_constant(_unannotated(f.annotation))
            wire = _validation_alias(f.annotation) or field
            return None if constant is None else (constant, wire)
    return None


def _validation_alias(annotation: ast.expr) -> str | None:
    for node in ast.walk(annotation):
        if isinstance(node, ast.keyword) and node.arg == "validation_alias":
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return None


def render_lazy(union: LazyUnion, chunk: str, modules: dict[str, str]) -> str:
    """The alias's definition ``chunk`` (and its docstring) for checkers, with the run-time
    marker beside it; ``modules`` maps each variant to its module, relative to the part's."""
    tree = ast.parse(chunk)
    statement = tree.body[0]
    lines = chunk.split("\n")
    end = statement.end_lineno or statement.lineno
    eager = "\n".join("    " + line if line else line for line in lines[:end])
    rest = "\n".join(lines[end:])
    entries = "".join(
        f"            {_str(tag)}: ({_str(modules[cls])}, {_str(cls)}),\n"
        for tag, cls in union.variants
    )
    discriminator = f"({_str(union.field)}, {_str(union.wire)})"
    lazy = (
        f"    {union.name} = TypeAliasType(\n"
        f"        {_str(union.name)},\n"
        f"        Annotated[object, LazyTaggedUnion(__package__, {discriminator}, {{\n"
        f"{entries}"
        "        })],\n"
        "    )"
    )
    text = (
        "if TYPE_CHECKING:\n"
        + eager
        + "\nelse:  # each variant's class is created on the first use of its tag\n"
        + lazy
    )
    return text + ("\n" + rest if rest else "")


def _str(text: str) -> str:
    return json.dumps(text)


def checker_only_names(chunk: str) -> set[str]:
    """Names a rendered lazy alias uses for checkers only (its variants)."""
    (statement, *_) = ast.parse(chunk).body
    assert isinstance(statement, ast.If)
    eager = {n.id for s in statement.body for n in ast.walk(s) if isinstance(n, ast.Name)}
    lazy = {n.id for s in statement.orelse for n in ast.walk(s) if isinstance(n, ast.Name)}
    return eager - lazy
