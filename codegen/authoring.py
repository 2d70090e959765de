"""What the authoring helpers (``builders.py``, ``remote.py``) are made of, read from the models.

Both are derived from the generated ``models.py`` source (its classes, fields, annotations
and defaults, as dcg wrote them from the schema) and from the method table, so a schema bump
updates them with nothing to edit here:

* a **builder** per variant of the unions an author builds (:data:`BUILT_UNIONS`): one
  keyword-only function that fills in the variant's tag(s), plus one per model those
  variants hold in a list or a plain union (``PlanEntry``, ``ToolCallLocation``,
  ``TextResourceContents``);
* a **remote** method per method a side handles, on the facade the *other* side holds,
  named as the handler method is (``codegen/method_names.py``).

Parameters keep the models' snake_case names and types; ``list[X]`` is taken as
``Sequence[X]``; an optional field is only set when given (not ``None``), so the wire carries
exactly what a hand-built model with the same arguments would.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .method_table import Method
from .render import docstring

BUILT_UNIONS: tuple[tuple[str, str], ...] = (
    ("ContentBlock", "{tag}"),
    ("SessionUpdate", "{tag}"),
    ("ToolCallContent", "tool_{tag}"),
)
"""The unions an agent or client author builds by hand, with the builder name pattern of
their variants (``{tag}``: the variant's tag values joined by ``_``). Which unions to offer is
the one design choice here; their variants, tags and fields all come from the schema."""

REMOTE_DOCS = {
    "agent": "The agent, as a client calls it: one method per method the agent handles.",
    "client": "The client, as an agent calls it: one method per method the client handles.",
    "proxy": "A proxy, as its conductor calls it: one method per method a proxy handles.",
}

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


class AuthoringError(Exception):
    """The models do not have the shape the helpers are derived from."""


@dataclass(frozen=True)
class Param:
    """One keyword-only parameter of a builder or remote method."""

    name: str
    annotation: str
    required: bool
    default: str  # Python source of the default ("None" for an optional model field)
    sequence: bool  # the field is a list: the parameter takes any Sequence
    omit_none: bool  # optional field: left unset when None

    def signature(self) -> str:
        return f"{self.name}: {self.annotation}" + ("" if self.required else f" = {self.default}")

    def value(self) -> str:
        """The expression passed to the model for this parameter."""
        if not self.sequence:
            return self.name
        return f"listed({self.name})" if self.omit_none else f"list({self.name})"


@dataclass(frozen=True)
class Construction:
    """How to build one model from keyword-only parameters."""

    model: str
    tags: tuple[tuple[str, str], ...]  # (field, constant) pairs the builder fills in
    params: tuple[Param, ...]

    @property
    def required(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.omit_none)

    @property
    def optional(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.omit_none)

    @property
    def uses_listed(self) -> bool:
        return any(p.sequence and p.omit_none for p in self.params)

    @property
    def uses_sequence(self) -> bool:
        return any(p.sequence for p in self.params)

    def names(self) -> set[str]:
        """Every name its signature and body refer to (to import from the models)."""
        found = {self.model}
        for p in self.params:
            tree = ast.parse(p.annotation, mode="eval")
            found |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        return found


@dataclass(frozen=True)
class Builder:
    name: str
    doc: str
    docstring: str
    construction: Construction


@dataclass(frozen=True)
class RemoteMethod:
    """One method of a remote facade: send ``method`` with params built from keywords."""

    name: str
    kind: str
    const_name: str
    params_type: str
    result_type: str
    docstring: str
    construction: Construction | None  # None: the params type is a union, passed as it is


@dataclass(frozen=True)
class Remote:
    """The facade one side holds for its counterpart ``side`` (the methods ``side`` handles)."""

    name: str
    side: str
    doc: str
    methods: tuple[RemoteMethod, ...]


@dataclass(frozen=True)
class _Field:
    name: str
    annotation: ast.expr
    default: ast.expr | None


class ModelIndex:
    """The classes and aliases of one generated ``models.py``."""

    def __init__(self, source: str) -> None:
        self.classes: dict[str, ast.ClassDef] = {}
        self.aliases: dict[str, ast.expr] = {}
        for node in _checker_view(ast.parse(source).body):  # a lazy union's checker view
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                self.aliases[node.targets[0].id] = node.value

    def defined(self, names: set[str]) -> list[str]:
        """The ones of ``names`` the models define, sorted (what a helper module imports)."""
        return sorted(n for n in names if n in self.classes or n in self.aliases)

    def fields(self, name: str) -> list[_Field]:
        """The class's fields in pydantic's order (bases first, redefinitions in place)."""
        cls = self.classes[name]
        found: dict[str, _Field] = {}
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in self.classes:
                for f in self.fields(base.id):
                    found[f.name] = f
        for node in _checker_view(cls.body):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found[node.target.id] = _Field(node.target.id, node.annotation, node.value)
        return list(found.values())

    def is_catch_all(self, name: str) -> bool:
        """An open union's fallback for unknown tags (its tag field refuses the known ones)."""
        return any("unknown_tag(" in ast.unparse(f.annotation) for f in self.fields(name))

    def doc(self, name: str) -> str:
        return ast.get_docstring(self.classes[name]) or ""

    def union_members(self, name: str) -> tuple[list[ast.expr], str | None] | None:
        """(members, discriminator) of a union alias; None if ``name`` is not one."""
        value = self.aliases.get(name)
        if not (isinstance(value, ast.Call) and _name_of(value.func) == "TypeAliasType"):
            return None
        inner = value.args[1]
        discriminator = None
        while isinstance(inner, ast.Subscript) and _name_of(inner.value) in (
            "SerializeAsAny",
            "Annotated",
        ):
            if _name_of(inner.value) == "Annotated":
                assert isinstance(inner.slice, ast.Tuple)
                for extra in inner.slice.elts[1:]:
                    if isinstance(extra, ast.Call):
                        for kw in extra.keywords:
                            if kw.arg == "discriminator" and isinstance(kw.value, ast.Constant):
                                discriminator = str(kw.value.value)
                inner = inner.slice.elts[0]
            else:
                inner = inner.slice
        members = list(_union_parts(inner))
        return (members, discriminator) if len(members) > 1 else None

    def variants(
        self, union: str, path: tuple[str, ...] = ()
    ) -> Iterator[tuple[str, tuple[str, ...]]]:
        """(class, discriminators on the way) of every tagged variant of ``union``.

        Nested unions are followed (an open union's known part, a variant that is itself a
        union); an open union's catch-all for unknown tags is not a variant an author builds.
        """
        found = self.union_members(union)
        if found is None:
            raise AuthoringError(f"{union} is not a union of models")
        members, discriminator = found
        here = (*path, discriminator) if discriminator else path
        for member in members:
            name = _name_of(member)
            if name in self.aliases and self.union_members(name) is not None:
                yield from self.variants(name, here)
            elif name in self.classes and (discriminator or not self.is_catch_all(name)):
                yield name, here

    def construction(self, model: str) -> Construction:
        """A field typed as one string constant is a tag (with a default or not): filled in."""
        tags: list[tuple[str, str]] = []
        params: list[Param] = []
        for f in self.fields(model):
            annotation = _unannotated(f.annotation)
            constant = _literal_constant(annotation)
            if constant is not None:
                tags.append((f.name, constant))
                continue
            params.append(_param(f.name, annotation, f.default))
        return Construction(model, tuple(tags), tuple(params))


def _checker_view(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A class body as type checkers read it: ``if TYPE_CHECKING:`` blocks taken, their
    ``else`` skipped (constant tags carry their default only there; see postprocess)."""
    for node in body:
        if isinstance(node, ast.If) and _name_of(node.test) == "TYPE_CHECKING":
            yield from node.body
        else:
            yield node


def _name_of(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ast.unparse(node)


def _union_parts(node: ast.expr) -> Iterator[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        yield from _union_parts(node.left)
        yield from _union_parts(node.right)
    else:
        yield node


def _unannotated(node: ast.expr) -> ast.expr:
    """``Annotated[T, Field(...)]`` -> ``T`` (aliases and constraints are the model's job)."""
    if isinstance(node, ast.Subscript) and _name_of(node.value) == "Annotated":
        assert isinstance(node.slice, ast.Tuple)
        return node.slice.elts[0]
    return node


def _literal_constant(node: ast.expr) -> str | None:
    if (
        isinstance(node, ast.Subscript)
        and _name_of(node.value) == "Literal"
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.slice.value
    return None


def _as_sequence(node: ast.expr) -> tuple[ast.expr, bool]:
    """``list[X]`` (alone or in a union) -> ``Sequence[X]``; ``list[str]`` stays a list."""
    if (
        isinstance(node, ast.Subscript)
        and _name_of(node.value) == "list"
        and _name_of(node.slice) != "str"
    ):
        return ast.Subscript(ast.Name("Sequence"), node.slice), True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, a = _as_sequence(node.left)
        right, b = _as_sequence(node.right)
        return ast.BinOp(left, ast.BitOr(), right), a or b
    return node, False


_RESERVED = frozenset({"self", "m", "given", "listed", "Any", "Sequence", "Awaitable"})
"""Names the generated helper bodies use: a field named so would shadow them."""


def _param(name: str, annotation: ast.expr, default: ast.expr | None) -> Param:
    if name in _RESERVED:
        raise AuthoringError(f"a field named {name!r} would shadow a helper's own name")
    converted, sequence = _as_sequence(annotation)
    # ``JsonInt`` is the model's business (it takes ``1.0``); a caller passes an ``int``.
    text = re.sub(r"\bJsonInt\b", "int", ast.unparse(converted))
    if default is None:
        return Param(name, text, True, "", sequence, False)
    if isinstance(default, ast.Constant) and default.value is not None:
        # A constant default (``False``, ``"object"``): the parameter has it too.
        return Param(name, text, False, ast.unparse(default), sequence, False)
    if not (isinstance(default, ast.Constant) and default.value is None):
        text += " | None"  # a factory default: None asks for it
    return Param(name, text, False, "None", sequence, True)


def snake(name: str) -> str:
    return _SNAKE.sub("_", name).lower()


def _identifier(text: str) -> str:
    out = re.sub(r"\W+", "_", text).strip("_").lower()
    if not out.isidentifier() or keyword.iskeyword(out):
        raise AuthoringError(f"cannot name a builder {text!r}")
    return out


def builders(index: ModelIndex) -> list[Builder]:
    """Every builder of one package, in a stable order, names checked unique."""
    out: list[Builder] = []
    held: list[str] = []
    for union, pattern in BUILT_UNIONS:
        if index.union_members(union) is None:
            continue  # a schema without this union: nothing to build
        for model, discriminators in index.variants(union):
            construction = index.construction(model)
            by_field = dict(construction.tags)
            values = [by_field[d] for d in discriminators if d in by_field]
            if len(values) != len(discriminators):
                raise AuthoringError(f"{model}: no constant for {discriminators}")
            name = _identifier(pattern.format(tag="_".join(values)))
            out.append(_builder(index, name, construction))
            held += [m for p in construction.params for m in _held_models(index, p)]
    for model in dict.fromkeys(held):
        out.append(_builder(index, snake(model), index.construction(model)))
    names = [b.name for b in out]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise AuthoringError(f"builder names collide: {duplicates}")
    return out


def _builder(index: ModelIndex, name: str, construction: Construction) -> Builder:
    doc = index.doc(construction.model)
    return Builder(name, doc, docstring(_first_paragraph(doc), 4), construction)


def _first_paragraph(doc: str) -> str:
    return doc.strip().split("\n\n")[0]


def _held_models(index: ModelIndex, param: Param) -> Iterator[str]:
    """Models a parameter holds in a list, or as a member of a plain (untagged) union."""
    node = ast.parse(param.annotation, mode="eval").body
    for part in _union_parts(node):
        if isinstance(part, ast.Subscript) and _name_of(part.value) == "Sequence":
            item = _name_of(part.slice)
            if item in index.classes:
                yield item
        elif _name_of(part) in index.aliases:
            found = index.union_members(_name_of(part))
            if found is not None and found[1] is None:
                members = [_name_of(m) for m in found[0]]
                if all(m in index.classes for m in members):
                    yield from (m for m in members if not index.is_catch_all(m))


def remotes(index: ModelIndex, methods: list[Method], sides: list[str]) -> list[Remote]:
    """One facade per side that handles methods; ``$/`` methods stay the runtime's."""
    out: list[Remote] = []
    for side in sides:
        built: list[RemoteMethod] = []
        for m in (m for m in methods if m.side == side):
            construction = index.construction(m.params) if m.params in index.classes else None
            built.append(
                RemoteMethod(
                    name=m.py_name,
                    kind=m.kind,
                    const_name=m.const_name,
                    params_type=m.params,
                    result_type=m.result or "None",
                    docstring=docstring(m.description, 8),
                    construction=construction,
                )
            )
        out.append(
            Remote(
                f"Remote{side.capitalize()}",
                side,
                REMOTE_DOCS.get(side, f"The {side} side: one method per method it handles."),
                tuple(built),
            )
        )
    return out
