"""Source -> source fixes over dcg's output (AST-located, applied as text edits).

* every model derives from the runtime's ``AcpModel`` (from ``acp_runtime.codegen_support``), which
  carries the config (extra fields kept, names and aliases both accepted, camelCase out)
  instead of a ``model_config`` per class;
* ``alias=`` becomes ``validation_alias=`` + ``serialization_alias=`` so that type checkers
  (pydantic's ``dataclass_transform``, no plugin) see snake_case constructor keywords;
* dict-literal defaults of model fields become ``default_factory`` (type-correct);
* ``float`` becomes ``int | float`` so ``1`` round-trips as ``1``, not ``1.0``, and a lone
  ``int`` becomes the runtime's ``JsonInt``, which takes ``1.0`` as JSON Schema does (the
  models are strict, so ``true`` and ``"1"`` stay refused);
* open unions are tried left to right (known tags first) and their catch-all refuses
  known tags, so a malformed known variant is an error instead of silently "other";
* unions of models dump through the value's own class (``SerializeAsAny``, the runtime's
  copy of pydantic's): pydantic's union serializer re-tries choices and, for JSON, goes
  through Python objects first;
* a variant's constant tag (``type: Literal["text"]``) gets its value as a default for type
  checkers only (``if TYPE_CHECKING``): parsing still requires the tag, and ``AcpModel``'s
  constructor fills it in, so ``TextContentBlock(text="hi")`` type-checks and works;
* the schema's ``x-deserialize-*`` annotations (dcg's ``json_schema_extra``) become the
  runtime's markers ``DefaultOnError`` / ``SkipInvalidItems`` / ``DefaultOnNull``
  (``acp_runtime.codegen_support``); union tags refuse them;
* a ``format: uri`` string gets the marker ``UriFormat`` (``acp_runtime.codegen_support``):
  the WHATWG URL parser's check, as the TypeScript SDK's ``z.url()``;
* definitions are reordered after their dependencies (``ordering.py``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from .ordering import dependency_order
from .preprocess import OpenUnion

_MODEL_CONFIG = re.compile(
    r"\n    model_config = ConfigDict\(\n        extra=\"allow\",\n"
    r"        populate_by_name=True,\n    \)\n"
)
_TYPING_IMPORT = re.compile(r"^from typing import (.+)$", re.MULTILINE)
_ALIAS = re.compile(r'(?<![_\w])alias="([^"]+)"')

SUPPORT = "acp_runtime.codegen_support"
"""The one runtime module generated code imports internals from (the rest is private)."""

BASE_IMPORT = f"from {SUPPORT} import AcpModel as AcpModel, unknown_tag"
"""The handwritten base (``AcpModel``): config, fast paths, the open-union tag guard;
``AcpModel`` is re-exported, so ``acp_generated.v1.AcpModel`` names it too."""


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


class PostprocessError(Exception):
    """dcg produced something the post-processing does not recognise."""


def _offsets(data: bytes) -> list[int]:
    """Byte offset of each line start (ast columns are UTF-8 byte offsets)."""
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _apply(data: bytes, edits: list[_Edit]) -> str:
    parts: list[bytes] = []
    pos = 0
    for e in sorted(edits, key=lambda e: e.start):
        if e.start < pos:
            raise PostprocessError("overlapping edits")
        parts += [data[pos : e.start], e.text.encode()]
        pos = e.end
    parts.append(data[pos:])
    return b"".join(parts).decode()


def _span(node: ast.AST, starts: list[int]) -> tuple[int, int]:
    return (
        starts[node.lineno - 1] + node.col_offset,  # type: ignore[attr-defined]
        starts[node.end_lineno - 1] + node.end_col_offset,  # type: ignore[attr-defined]
    )


def _core_type(annotation: ast.expr) -> ast.expr:
    """``Annotated[X, ...]`` -> ``X``."""
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        if annotation.value.id == "Annotated" and isinstance(annotation.slice, ast.Tuple):
            return annotation.slice.elts[0]
    return annotation


def _structural_edits(
    source: str, open_unions: list[OpenUnion], ordered: set[str]
) -> tuple[str, set[str]]:
    tree = ast.parse(source)
    data = source.encode()
    starts = _offsets(data)

    def seg(node: ast.AST) -> str:
        start, end = _span(node, starts)
        return data[start:end].decode()

    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    fields_of = {
        n.name: {
            _wire_name(stmt, seg): (stmt.target.id, seg(_core_type(stmt.annotation)))
            for stmt in n.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
        }
        for n in tree.body
        if isinstance(n, ast.ClassDef)
    }
    model_unions = _model_unions(tree, classes)
    guards = {cls: u for u in open_unions for cls in u.classes}
    unguarded = set(guards)
    markers_used: set[str] = set()
    floats = [_Edit(*_span(n, starts), text) for n, text in _lone_numbers(tree)]
    edits: list[_Edit] = []

    def fixed_seg(node: ast.AST) -> str:
        """``seg`` with the number edits inside it applied (they are then done)."""
        start, end = _span(node, starts)
        inside = [e for e in floats if start <= e.start and e.end <= end]
        for e in inside:
            floats.remove(e)
        shifted = [_Edit(e.start - start, e.end - start, e.text) for e in inside]
        return _apply(data[start:end], shifted)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            guard = guards.get(node.name)
            for stmt in node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                if isinstance(stmt.value, (ast.Dict, ast.List)) and stmt.value is not None:
                    core = seg(_core_type(stmt.annotation))
                    built = _constructed(core, stmt.value, fields_of, seg)
                    if built is not None:
                        factory = f"lambda: {built}"
                    elif core in classes:
                        factory = f"lambda: {core}.model_validate({seg(stmt.value)})"
                    elif (
                        isinstance(stmt.value, ast.Dict)
                        and not stmt.value.keys
                        and core.startswith("dict[")
                    ):
                        # typed empty container: a bare ``dict`` is partially unknown to pyright
                        factory = f"lambda: {core}()"
                    elif (
                        isinstance(stmt.value, ast.List)
                        and not stmt.value.elts
                        and core.startswith("list[")
                    ):
                        factory = f"lambda: {core}()"
                    else:
                        raise PostprocessError(f"unhandled default in {node.name}.{stmt.target.id}")
                    s, e = _span(stmt.value, starts)
                    edits.append(_Edit(s, e, f"Field(default_factory={factory})"))
                constant = _constant_tag(stmt)
                is_tag = guard is not None and _wire_name(stmt, seg) == guard.tag
                lenient = _lenient_edit(stmt.annotation, fixed_seg)
                if lenient is not None:
                    if is_tag or constant is not None:
                        raise PostprocessError(
                            f"{node.name}.{stmt.target.id}: a union tag stays strict, "
                            "but the schema marks it lenient"
                        )
                    markers_used.update(lenient[1])
                    edits.append(_Edit(*_span(stmt.annotation, starts), lenient[0]))
                if constant is not None:
                    field = _checker_default(seg(stmt), seg(constant))
                    edits.append(_Edit(*_span(stmt, starts), field))
                if guard is not None and is_tag:
                    known = ", ".join(f'"{k}"' for k in guard.known)
                    core_node = _core_type(stmt.annotation)  # keep the Field(alias) around it
                    s, e = _span(core_node, starts)
                    core = seg(core_node)
                    edits.append(
                        _Edit(
                            s,
                            e,
                            f"Annotated[{core}, "
                            f"AfterValidator(unknown_tag(frozenset({{{known}}})))]",
                        )
                    )
                    unguarded.discard(node.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if not (isinstance(target, ast.Name) and _is_alias(node.value)):
                continue
            assert isinstance(node.value, ast.Call)
            value = node.value.args[1]
            text = seg(value)
            if target.id in ordered:
                text = f'Annotated[{text}, Field(union_mode="left_to_right")]'
                ordered.discard(target.id)
            if target.id in model_unions:
                # the subscript form, which type checkers read as the bare type
                text = f"SerializeAsAny[{text}]"
                markers_used.add("SerializeAsAny")
            if text != seg(value):
                edits.append(_Edit(*_span(value, starts), text))
    if unguarded:
        raise PostprocessError(f"catch-all tag field not found in {sorted(unguarded)}")
    return _apply(data, edits + floats), markers_used


LENIENT_MARKERS = {
    "x-deserialize-default-on-error": "DefaultOnError",
    "x-deserialize-skip-invalid-items": "SkipInvalidItems",
    "x-deserialize-default-on-null": "DefaultOnNull",
    "x-acp-not-null": "NotNull",  # preprocess.NOT_NULL
    "x-acp-uri": "UriFormat",  # preprocess.URI
}
"""Schema annotation -> the runtime marker the field carries (from :data:`SUPPORT`).
dcg hands them over as ``Field(json_schema_extra=...)`` (``--field-extra-keys``)."""


def _one_line(text: str) -> str:
    """dcg's wrapped layout of an expression, joined back onto one line."""
    joined = " ".join(line.strip() for line in text.splitlines())
    for a, b in (("[ ", "["), ("( ", "("), (", ]", "]"), (", )", ")"), (",]", "]"), (",)", ")")):
        joined = joined.replace(a, b)
    return joined


def _lenient_edit(
    annotation: ast.expr, seg: Callable[[ast.AST], str]
) -> tuple[str, list[str]] | None:
    """``Annotated[T, Field(..., json_schema_extra={x-deserialize-...})]`` ->
    ``Annotated[T, Field(...), DefaultOnError, ...]``; None without such keys."""
    parts = _annotated_parts(annotation)
    if not parts:
        return None
    for index, part in enumerate(parts):
        is_field = isinstance(part, ast.Call) and isinstance(part.func, ast.Name)
        if not (is_field and part.func.id == "Field"):  # type: ignore[attr-defined]
            continue
        assert isinstance(part, ast.Call)
        extra = next((k for k in part.keywords if k.arg == "json_schema_extra"), None)
        if extra is None:
            continue
        if not isinstance(extra.value, ast.Dict):
            raise PostprocessError(f"json_schema_extra is not a dict literal: {seg(extra)}")
        markers: list[str] = []
        kept: list[str] = []
        for key, value in zip(extra.value.keys, extra.value.values, strict=True):
            name = key.value if isinstance(key, ast.Constant) else None
            if isinstance(name, str) and name in LENIENT_MARKERS:
                markers.append(LENIENT_MARKERS[name])
            elif key is not None:
                kept.append(f"{_one_line(seg(key))}: {_one_line(seg(value))}")
        if not markers:
            return None
        # A default-on-error field falls back to its default (``[]`` for a required list, as
        # the TS SDK and serde do), so the fallback must satisfy the field: ``minItems``
        # goes, or the salvage would produce a value the model refuses.
        dropped = {"min_length"} if "DefaultOnError" in markers else set()
        rest = [
            _one_line(seg(k)) for k in part.keywords if k is not extra and k.arg not in dropped
        ]
        if kept:
            rest.append(f"json_schema_extra={{{', '.join(kept)}}}")
        texts = [_one_line(seg(p)) for p in parts]
        texts[index] = f"Field({', '.join(rest)})" if rest else ""
        texts = [t for t in texts if t] + markers
        return f"Annotated[{', '.join(texts)}]", markers
    return None


def _constant_tag(stmt: ast.AnnAssign) -> ast.expr | None:
    """The value of a required ``Literal`` field with one value, else None."""
    core = _core_type(stmt.annotation)
    if (
        stmt.value is None
        and isinstance(core, ast.Subscript)
        and isinstance(core.value, ast.Name)
        and core.value.id == "Literal"
        and isinstance(core.slice, ast.Constant)
    ):
        return core.slice
    return None


def _checker_default(field: str, value: str) -> str:
    """``name: T`` -> the same field with ``= value`` where type checkers look only."""
    nested = field.replace("\n", "\n    ")
    return f"if TYPE_CHECKING:\n        {nested} = {value}\n    else:\n        {nested}"


def _is_alias(value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "TypeAliasType"
    )


def _annotated_parts(node: ast.expr) -> list[ast.expr] | None:
    """The elements of ``Annotated[X, ...]``, else None."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Annotated"
        and isinstance(node.slice, ast.Tuple)
    ):
        return node.slice.elts
    return None


def _model_unions(tree: ast.Module, classes: set[str]) -> set[str]:
    """Type aliases whose value is a union with at least one model (directly or via an alias)."""
    values = {
        n.targets[0].id: n.value.args[1]
        for n in tree.body
        if isinstance(n, ast.Assign)
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.Call)
        and _is_alias(n.value)
    }

    def members(node: ast.expr) -> list[ast.expr]:
        parts = _annotated_parts(node)
        return _union_members(parts[0] if parts else node)

    found: set[str] = set()
    changed = True
    while changed:  # an alias may be a union of other aliases (``Known | Other``)
        changed = False
        for name, value in values.items():
            names = [m.id for m in members(value) if isinstance(m, ast.Name)]
            if name not in found and len(members(value)) > 1:
                if any(n in classes or n in found for n in names):
                    found.add(name)
                    changed = True
    return found


def _union_members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    return [node]


def _lone_numbers(tree: ast.Module) -> list[tuple[ast.Name, str]]:
    """``float`` and ``int`` names in annotations and type aliases whose union has not the
    other beside them, each with its replacement (``int | float``, ``JsonInt``)."""
    roots: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "TypeAliasType"
        ):
            roots.append(node.args[1])
    found: list[tuple[ast.Name, str]] = []
    lone = {"float": "int | float", "int": "JsonInt"}

    def visit(node: ast.expr) -> None:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            members = _union_members(node)
            names = {m.id for m in members if isinstance(m, ast.Name)}
            for m in members:
                if isinstance(m, ast.Name) and m.id in lone:
                    if not {"int", "float"} <= names:
                        found.append((m, lone[m.id]))
                else:
                    visit(m)
        elif isinstance(node, ast.Name) and node.id in lone:
            found.append((node, lone[node.id]))
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    visit(child)

    for root in roots:
        visit(root)
    return found


_LINE = 88
"""Longer ``model_construct`` defaults get one argument per line."""

_VERBATIM = {"bool": bool, "str": str}
"""Field types whose validation keeps a JSON constant of that type as it is (the models
are strict: nothing is coerced), so a default can hold the constant unvalidated."""


def _constructed(
    cls: str,
    value: ast.expr,
    fields_of: dict[str, dict[str, tuple[str, str]]],
    seg: Callable[[ast.AST], str],
    *,
    top: bool = True,
) -> str | None:
    """A schema default for a field of model type ``cls`` as ``model_construct`` calls, or
    None unless every value is one validation would keep unchanged: a ``bool`` or ``str``
    for a field of that type, an object for a field of a model type.

    Such a default is the same model as ``cls.model_validate(value)`` (the same values and
    fields set; a test holds every generated default to it), but creating it builds no
    validator: an ``initialize`` that leaves out capabilities does not build the validators
    of the capability models its defaults fill in (issue 34: 5 of the 9 validators the echo
    example built before its ``initialize`` answer)."""
    fields = fields_of.get(cls)
    if fields is None or not isinstance(value, ast.Dict):
        return None
    arguments: list[str] = []
    for key, item in zip(value.keys, value.values, strict=True):
        if not (isinstance(key, ast.Constant) and key.value in fields):
            return None  # an extra key: validation decides where it goes
        name, core = fields[key.value]
        if isinstance(item, ast.Dict):
            nested = _constructed(core, item, fields_of, seg, top=False)
            if nested is None:
                return None
            arguments.append(f"{name}={nested}")
        elif isinstance(item, ast.Constant) and type(item.value) is _VERBATIM.get(core):
            arguments.append(f"{name}={seg(item)}")
        else:
            return None
    call = f"{cls}.model_construct({', '.join(arguments)})"
    if not top or len(call) <= _LINE:
        return call
    lines = "".join(f"        {argument},\n" for argument in arguments)
    return f"{cls}.model_construct(\n{lines}    )"


def _wire_name(stmt: ast.AnnAssign, seg: object) -> str:
    """The JSON name of a field: its alias if any, else its Python name."""
    assert isinstance(stmt.target, ast.Name)
    for node in ast.walk(stmt.annotation):
        if (
            isinstance(node, ast.keyword)
            and node.arg == "alias"
            and isinstance(node.value, ast.Constant)
        ):
            return str(node.value.value)
    return stmt.target.id


def postprocess(
    source: str, header: str, open_unions: list[OpenUnion], ordered_unions: list[str]
) -> str:
    """Turn dcg's module into the committed ``models.py``."""
    source, markers = _structural_edits(source, open_unions, set(ordered_unions))
    source = _MODEL_CONFIG.sub("\n", source)
    source = source.replace("(BaseModel):", "(AcpModel):")
    if "model_config = " in source:
        raise PostprocessError("a model_config differs from the expected dcg output")
    source = _ALIAS.sub(r'validation_alias="\1", serialization_alias="\1"', source)
    source = source.replace("validate_default=True", "").replace(", )", ")").replace(", ,", ",")
    body = source.split("\n\n", 1)[1]  # drop dcg's own header comment
    body = body.replace(
        "from pydantic import BaseModel, ConfigDict, Field",
        "from pydantic import AfterValidator, Field",
    )
    last_import = max(
        n.end_lineno or 0
        for n in ast.parse(body).body
        if isinstance(n, (ast.Import, ast.ImportFrom))
    )
    if "if TYPE_CHECKING:" in body:
        body = _TYPING_IMPORT.sub(r"from typing import TYPE_CHECKING, \1", body, count=1)
    lines = body.split("\n")
    head, rest = "\n".join(lines[:last_import]), "\n".join(lines[last_import:]).lstrip("\n")
    names = sorted(markers | ({"JsonInt"} if "JsonInt" in rest else set()))
    imports = f"from {SUPPORT} import {', '.join(names)}\n{BASE_IMPORT}" if names else BASE_IMPORT
    return dependency_order(header + head + "\n\n" + imports + "\n\n\n" + rest)
