"""Unions of models whose variants are created on first use (issue 34).

A model with a union field created every variant the first time it was used: an agent's
first ``session/update`` created all 14 v1 update kinds and what they refer to, 115 classes
in v2. So a union alias made of tagged unions (told apart by one constant field) and
unions tried left to right (an open union's known part, then its catch-all), down to
classes, is generated twice: for checkers as it was, and at run time as ``acp_runtime``'s
``LazyUnion`` marker naming each variant's module (``_lazy_union.py``), with the unions it
is made of written out in it. Its variants and member unions then count as no dependency
of the alias (``lazy_models`` gives the variants modules of their own), and the alias's
module imports them for checkers only.

Left as pydantic's: a smart union (no discriminator, no ``union_mode``: pydantic-core picks
the best match, which a function per variant cannot tell it), a union with a member that is
not a class or such a union, and a union that a union left as pydantic's refers to (it
would label the lazy union's choices by their functions in error locations).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Union

from .authoring import ModelIndex, _literal_constant, _name_of, _unannotated, _union_parts


@dataclass(frozen=True)
class Tagged:
    field: str  # the discriminator's Python name
    wire: str  # ... and its name on the wire
    choices: tuple[tuple[str, Node], ...]  # (tag, variant), in the union's order
    name: str  # the alias


@dataclass(frozen=True)
class LeftToRight:
    choices: tuple[Node, ...]
    name: str  # the alias


Node = Union[str, Tagged, LeftToRight]  # noqa: UP007  # str: a class
"""What a union is made of, down to its classes."""


@dataclass(frozen=True)
class LazyUnion:
    name: str
    node: Tagged | LeftToRight


@lru_cache(maxsize=8)
def lazy_unions(source: str) -> dict[str, LazyUnion]:
    """The union aliases of a models module made lazy, by name."""
    index = ModelIndex(source)
    found: dict[str, LazyUnion] = {}
    for name in index.aliases:
        node = _node(index, name, frozenset())
        if isinstance(node, (Tagged, LeftToRight)):
            found[name] = LazyUnion(name, node)
    while True:  # a union pydantic builds labels its choices by their validators' names
        eager_unions = [u for u in _unions(index) if u[0] not in found]
        held = {n for _owner, members in eager_unions for n in members if n in found}
        if not held:
            return found
        for name in held:
            del found[name]


def classes(node: Node) -> list[str]:
    """The classes a union is made of, in order."""
    if isinstance(node, str):
        return [node]
    members = (c for _t, c in node.choices) if isinstance(node, Tagged) else node.choices
    return [cls for member in members for cls in classes(member)]


def _node(index: ModelIndex, name: str, seen: frozenset[str]) -> Node | None:
    if name in index.classes:
        return name
    union = index.union_members(name) if name not in seen else None
    if union is None:
        return None
    members, field = union
    nodes = [_node(index, _name_of(m), seen | {name}) for m in members]
    if any(n is None for n in nodes):
        return None
    known = [n for n in nodes if n is not None]
    if field is None:
        return LeftToRight(tuple(known), name) if _left_to_right(index, name) else None
    tags = [_tag(index, n, field) for n in known]
    found = [t for t in tags if t is not None]
    if len(found) != len(tags) or len({wire for _tag_value, wire in found}) != 1:
        return None  # a shape this does not know: pydantic's own union, as before
    choices = tuple((tag, n) for (tag, _wire), n in zip(found, known, strict=True))
    return Tagged(field, found[0][1], choices, name)


def _left_to_right(index: ModelIndex, name: str) -> bool:
    return _keyword(index.aliases[name], "union_mode") == "left_to_right"


def _keyword(tree: ast.AST, arg: str) -> object:
    """The constant given as the first ``arg=`` keyword in ``tree``, or None."""
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == arg:
            return node.value.value if isinstance(node.value, ast.Constant) else None
    return None


def _tag(index: ModelIndex, node: Node, field: str) -> tuple[str, str] | None:
    """(constant, wire name) the variant's tag field has in every class of it."""
    found: set[tuple[str, str]] = set()
    for cls in classes(node):
        for f in index.fields(cls):
            if f.name == field:
                constant = _literal_constant(_unannotated(f.annotation))
                if constant is None:
                    return None
                wire = _keyword(f.annotation, "validation_alias")
                found.add((constant, wire if isinstance(wire, str) else field))
                break
        else:
            return None
    return found.pop() if len(found) == 1 else None


def _unions(index: ModelIndex) -> list[tuple[str | None, set[str]]]:
    """(alias or None for a class field, names) of every union of names written in the
    module, leaving out ``X | None`` (no label: a nullable value)."""
    found: list[tuple[str | None, set[str]]] = []
    for alias, value in index.aliases.items():
        found += [(alias, names) for names in _union_names(value)]
    for cls in index.classes.values():
        found += [(None, names) for names in _union_names(cls)]
    return found


def _union_names(tree: ast.AST) -> list[set[str]]:
    out: list[set[str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            parts = [p for p in _union_parts(node) if not _is_none(p)]
            if len(parts) > 1:
                out.append(names)
    return out


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def render_lazy(union: LazyUnion, chunk: str, modules: dict[str, str]) -> str:
    """The alias's definition ``chunk`` (and its docstring) for checkers, with the run-time
    marker beside it; ``modules`` maps each class to its module, relative to the part's."""
    tree = ast.parse(chunk)
    statement = tree.body[0]
    lines = chunk.split("\n")
    end = statement.end_lineno or statement.lineno
    eager = "\n".join("    " + line if line else line for line in lines[:end])
    rest = "\n".join(lines[end:])
    lazy = (
        f"    {union.name} = TypeAliasType(\n"
        f"        {_str(union.name)},\n"
        f"        Annotated[object, LazyUnion(__package__, {_render(union.node, modules, 2)})],\n"
        "    )"
    )
    text = (
        "if TYPE_CHECKING:\n"
        + eager
        + "\nelse:  # each variant's class is created on its first use\n"
        + lazy
    )
    return text + ("\n" + rest if rest else "")


def _render(node: Node, modules: dict[str, str], depth: int, top: bool = True) -> str:
    pad, inner = "    " * depth, "    " * (depth + 1)
    if isinstance(node, str):
        return f"({_str(modules[node])}, {_str(node)})"
    name = "" if top else f"{inner}name={_str(node.name)},\n"
    if isinstance(node, Tagged):
        entries = "".join(
            f"{inner}    {_str(tag)}: {_render(c, modules, depth + 2, False)},\n"
            for tag, c in node.choices
        )
        return (
            f"Tagged(\n{inner}({_str(node.field)}, {_str(node.wire)}),\n"
            f"{inner}{{\n{entries}{inner}}},\n{name}{pad})"
        )
    entries = "".join(f"{inner}{_render(c, modules, depth + 1, False)},\n" for c in node.choices)
    return f"LeftToRight(\n{entries}{name}{pad})"


def _str(text: str) -> str:
    return json.dumps(text)


def checker_only_names(statement: ast.If) -> set[str]:
    """Names a rendered lazy alias uses for checkers only (its variants and member unions)."""
    eager = {n.id for s in statement.body for n in ast.walk(s) if isinstance(n, ast.Name)}
    lazy = {n.id for s in statement.orelse for n in ast.walk(s) if isinstance(n, ast.Name)}
    return eager - lazy
