"""Split a version's models into modules created on first use (cold start, issue #34).

Creating a pydantic class costs even when its validator is deferred (pydantic collects its
fields): creating all ~180 v1 classes was most of an agent's start beyond pydantic's own.
So the definitions go to small modules under ``vN/_models/`` (the stable package's and the
shared ones) and ``vN/unstable/_models/`` (the unstable package's own), each importing the
modules it refers to, and ``models`` / ``_shared_models`` / ``unstable.models`` become
facades that import a module on the first access of one of its names (PEP 562): using a
class creates it and what it refers to, nothing else.

A module holds the definitions of one dependency cycle (forward references resolve in
their own module), a cycle-free definition that only one other definition refers to goes
with that one (it is never needed alone), and the aliases that refer to nothing
(``SessionId = str``, literal enums) share one module, ``_scalars``: fewer modules, since
each costs its own import. A params class's module ends by importing its binding, which
links the class to it (``__acp_method__``), whichever module created the class first.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from .annotations import evaluated_annotations
from .authoring import snake
from .lazy_unions import checker_only_names, classes, lazy_unions, render_lazy
from .ordering import _Definition, definitions
from .ordering import _references as names_outside_lambdas
from .sharing import _head_and_tail, _prune_imports

SCALARS = "_scalars"
PARTS = "_models"
FIELDS = "_fields"
META_LINE = "    meta: "
"""Every ACP type has the ``_meta`` extension field, typed alike: its annotation is made
once, in ``_fields``, instead of once per class (about a sixth of creating a class)."""


def meta_annotation(homes: list[Home]) -> str | None:
    """The ``meta`` field's annotation most models share, or None if none has one."""
    found: dict[str, int] = {}
    for home in homes:
        for line in home.source.split("\n"):
            if line.startswith(META_LINE) and line.endswith(" = None"):
                text = line.removeprefix(META_LINE).removesuffix(" = None")
                found[text] = found.get(text, 0) + 1
    return max(found, key=lambda t: found[t]) if found else None


def render_fields(home: Home, header: str, annotation: str) -> str:
    """``_fields``: the annotations many models share."""
    head = _imports_only(_head_and_tail(home.source)[0])
    text = _header_comments(header) + '\n"""Field annotations the models share, made once."""\n\n'
    text += head.strip("\n") + "\n\n"
    text += f"Meta = {annotation}\n"
    text += '"""The ``_meta`` field every ACP type has (see the models\' docs)."""\n'
    return evaluated_annotations(_prune_imports(text))


def _header_comments(header: str) -> str:
    """The ``#`` lines of a package's header (a part or ``_fields`` has its own docstring)."""
    return "\n".join(line for line in header.split("\n") if line.startswith("#"))


@dataclass(frozen=True)
class Home:
    """Where a set of definitions lives: its parts package and the source they come from."""

    package: str  # "acp_generated.v1._models"
    source: str  # the models module (``from __future__`` annotations) holding their text
    names: frozenset[str]
    methods_module: str  # where their params classes' bindings are: "acp_generated.v1.methods"
    linked: tuple[tuple[str, str], ...] = ()  # (params class, binding constant)


@dataclass(frozen=True)
class Part:
    """One generated module of definitions."""

    home: Home
    module: str  # "content_block"
    names: tuple[str, ...]  # in the source's (dependency) order

    @property
    def qualified(self) -> str:
        return f"{self.home.package}.{self.module}"


Key = tuple[int, str]  # (home index, definition name)


def _references(node: ast.stmt, names: set[str], *, defaults: bool = True) -> set[str]:
    """Definitions ``node`` uses at run time, or names in a class base's string
    (``TypedRequest["X"]``). ``defaults=False`` leaves out what only a default factory
    (a ``lambda``) uses: the models a schema default builds, which the field's own type
    already refers to, one level down."""
    if defaults:
        found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in names}
    else:
        found = set(names_outside_lambdas(node, names))
    if isinstance(node, ast.ClassDef):
        for base in node.bases:
            found |= {
                str(n.value)
                for n in ast.walk(base)
                if isinstance(n, ast.Constant) and n.value in names
            }
    return found


class _Groups:
    """Union-find over definitions."""

    def __init__(self, keys: list[Key]) -> None:
        self.parent = {k: k for k in keys}

    def find(self, key: Key) -> Key:
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: Key, b: Key) -> None:
        self.parent[self.find(a)] = self.find(b)


def _resolve(homes: list[Home], home: int, name: str) -> Key | None:
    """Where a name used by a definition of ``homes[home]`` is defined: its own home, else
    the first home (the shared definitions), else nowhere (not a definition)."""
    if name in homes[home].names:
        return (home, name)
    if name in homes[0].names:
        return (0, name)
    return None


def plan_parts(homes: list[Home], messages: frozenset[str] = frozenset()) -> list[Part]:
    """The modules of every home (``homes[0]``: the definitions the others may use),
    deterministic for the same sources; ``messages`` are the methods' params and result
    classes, each kept out of the modules of the definitions it uses."""
    nodes: dict[Key, ast.stmt] = {}
    order: list[Key] = []
    for h, home in enumerate(homes):
        for d in defined_in(home.source):
            if d.name in home.names:
                nodes[(h, d.name)] = d.node
                order.append((h, d.name))
    every = {name for home in homes for name in home.names}
    deps: dict[Key, set[Key]] = {}
    for key in order:
        # A default's models stay with the field type that holds them (their only other
        # referrer), not split out because a message's default names them too.
        used = _references(nodes[key], every, defaults=False)
        if _is_lazy(homes, key):
            used = set[str]()  # its variants and member unions are imported on first use
        found = (_resolve(homes, key[0], n) for n in used)
        deps[key] = {k for k in found if k is not None and k != key}
    groups = _Groups(order)
    reach: dict[Key, set[Key]] = {}
    for key in order:  # cycles: every pair that reaches each other
        seen: set[Key] = set()
        stack = list(deps[key])
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack += deps[x]
        reach[key] = seen
    for key in order:
        for dep in deps[key]:
            if key in reach[dep]:
                groups.union(key, dep)
    scalars: dict[int, Key] = {}  # home -> its first dependency-free alias
    for key in order:
        if not deps[key] and not isinstance(nodes[key], ast.ClassDef) and not _is_lazy(homes, key):
            groups.union(key, scalars.setdefault(key[0], key))
    scalar_roots = {groups.find(k) for k in scalars.values()}
    changed = True
    while changed:  # a group only one other group refers to joins it (same home) ...
        changed = False
        root_of = {key: groups.find(key) for key in order}
        # ... but a message's module takes in no other definition: handlers build those (a
        # permission option, a capability) on their own, and creating one must not create
        # the message and all it refers to (issue 34: 27 classes for a permission option).
        holds_message = {root_of[k] for k in order if k[1] in messages}
        referrers: dict[Key, set[Key]] = {}
        for key in order:
            for dep in deps[key]:
                if root_of[key] != root_of[dep]:
                    referrers.setdefault(root_of[dep], set()).add(root_of[key])
        for group in sorted(referrers):
            (only, *more) = sorted(referrers[group])
            if more or group in scalar_roots or group[0] != only[0]:
                continue
            if only in holds_message and group not in holds_message:
                continue
            groups.union(group, only)
            scalar_roots = {groups.find(k) for k in scalars.values()}
            changed = True
            break
    members: dict[Key, list[Key]] = {}
    for key in order:
        members.setdefault(groups.find(key), []).append(key)
    parts = []
    for root, keys in members.items():
        # Named after the definition the others in it serve: the last (dependency order).
        module = SCALARS if root in scalar_roots else snake(keys[-1][1])
        parts.append(Part(homes[root[0]], module, tuple(k[1] for k in keys)))
    taken: set[str] = set()
    for p in parts:
        if p.qualified in taken:
            raise RuntimeError(f"two model modules named {p.qualified}")
        taken.add(p.qualified)
    return parts


def _is_lazy(homes: list[Home], key: Key) -> bool:
    return key[1] in lazy_unions(homes[key[0]].source)


def _part_of(parts: list[Part], homes: list[Home]) -> dict[Key, Part]:
    return {(homes.index(p.home), n): p for p in parts for n in p.names}


def _relative(from_package: str, module: str) -> str:
    """``module`` as a relative import from a module of ``from_package``."""
    here = from_package.split(".")
    there = module.split(".")
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    return "." * (len(here) - common + 1) + ".".join(there[common:])


def _imports_only(head: str) -> str:
    """A models module's head without its header comments and docstring (a part has its
    own) and without ``importlib`` (the binding footer the parts do not keep)."""
    tree = ast.parse(head)
    lines = head.split("\n")
    kept = [
        "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and not (isinstance(node, ast.Import) and node.names[0].name == "importlib")
    ]
    # ``evaluated_annotations`` drops the ``__future__`` import with the blank line after it
    return "\n".join(k + "\n" if k.startswith("from __future__") else k for k in kept)


@lru_cache(maxsize=8)
def defined_in(source: str) -> tuple[_Definition, ...]:
    """The definitions of a models module, parsed once: the planner, the parts and the
    pipeline all read the same few modules (the shared and the stable home, one source)."""
    return tuple(definitions(ast.parse(source)))


@lru_cache(maxsize=8)
def _definition_chunks(source: str) -> tuple[str, dict[str, str]]:
    """A models module's head and each definition's text by name, parsed once per module
    (every part of the module reads them: two parses per part took 15 of 25 s)."""
    head, chunks, _footer = _head_and_tail(source)
    return head, {d.name: c for d, c in zip(defined_in(source), chunks, strict=True)}


def render_part(
    part: Part,
    parts: list[Part],
    homes: list[Home],
    header: str,
    title: str,
    meta: str | None = None,
) -> str:
    """The module of one part: its definitions, importing what they use from the others,
    and ending with the import of its params classes' bindings (which links them)."""
    where = _part_of(parts, homes)
    h = homes.index(part.home)
    head, by_name = _definition_chunks(part.home.source)
    body = [by_name[n] for n in part.names]
    fields = None
    if meta is not None:
        shared = f"{META_LINE}{meta} = None"
        if any(shared in chunk for chunk in body):
            body = [chunk.replace(shared, f"{META_LINE}Meta = None") for chunk in body]
            fields = f"{homes[0].package}.{FIELDS}"
    every = {name for home in homes for name in home.names}
    lazy = lazy_unions(part.home.source)
    for i, name in enumerate(part.names):
        if name in lazy:
            modules = {
                cls: _relative(part.home.package, where[key].qualified)
                for cls in classes(lazy[name].node)
                if (key := _resolve(homes, h, cls)) is not None
            }
            body[i] = render_lazy(lazy[name], body[i], modules)
    used: set[str] = set()
    for_checkers: set[str] = set()  # a lazy union's variants, unless another definition
    at_run_time: set[str] = set()  # ... of the part uses them at run time
    for chunk in body:
        statement = ast.parse(chunk).body[0]
        names = _references(statement, every)
        used |= names
        if isinstance(statement, ast.If):  # a lazy union
            for_checkers |= checker_only_names(statement)
        else:
            at_run_time |= names
    for_checkers -= at_run_time
    imports: dict[tuple[bool, str], list[str]] = {}
    for name in sorted(used - set(part.names)):
        key = _resolve(homes, h, name)
        if key is not None:
            imports.setdefault((name in for_checkers, where[key].qualified), []).append(name)
    head = _imports_only(head)
    if any(name in lazy for name in part.names):
        head += "\nfrom acp_runtime.codegen_support import LazyUnion, LeftToRight, Tagged"
    shown = ", ".join(part.names[-3:]) + (" and what they use" if len(part.names) > 3 else "")
    text = _header_comments(header) + f'\n"""{title}: {shown}."""\n\n'
    text += head.strip("\n") + "\n"
    text = _prune_imports(text + "\n\n" + "\n\n\n".join(body) + "\n")
    # What the definitions use from other parts, a ``TypedRequest["X"]`` base's X included
    # (which pruning would drop: checkers need it), after the imports of the source.
    first = text.index("\n\n\n", text.index("from __future__"))
    text = (
        text[:first]
        + "\n"
        + "".join(
            f"from {_relative(part.home.package, module)} import {', '.join(names)}\n"
            for (checkers, module), names in sorted(imports.items())
            if not checkers
        )
        + _checker_imports(part, imports)
        + (f"from {_relative(part.home.package, fields)} import Meta\n" if fields else "")
        + text[first + 1 :]
    )
    text = evaluated_annotations(text)
    linked = dict(part.home.linked)
    pairs = [(n, linked[n]) for n in part.names if n in linked]
    if pairs:
        module = _relative(part.home.package, part.home.methods_module)
        text += "\n\n# Link the params classes above to their bindings (``__acp_method__``).\n"
        text += "".join(f"from {module} import {c} as {c}  # noqa: E402\n" for _, c in pairs)
        text += "".join(f"{n}.__acp_method__ = {c}\n" for n, c in pairs)
    return text


def _checker_imports(part: Part, imports: dict[tuple[bool, str], list[str]]) -> str:
    """The variants of a part's lazy unions: imported for checkers only."""
    lines = [
        f"    from {_relative(part.home.package, module)} import {', '.join(names)}\n"
        for (checkers, module), names in sorted(imports.items())
        if checkers
    ]
    return "if TYPE_CHECKING:\n" + "".join(lines) if lines else ""


def render_facade(header: str, doc: str, package: str, base: str, exports: dict[str, Part]) -> str:
    """A models facade in ``package``: every name imported for checkers, loaded on first
    access at run time from its part (a module under ``base``, the version's package)."""
    by_module: dict[str, list[str]] = {}
    for name, part in sorted(exports.items()):
        by_module.setdefault(part.qualified, []).append(name)
    table = {name: part.qualified.removeprefix(base + ".") for name, part in exports.items()}
    imports = "".join(
        f"    from {_relative(package, m)} import (\n"
        + "".join(f"        {n} as {n},\n" for n in names)
        + "    )\n"
        for m, names in sorted(by_module.items())
    )
    entries = "".join(f"    {n!r}: {table[n]!r},\n" for n in sorted(table))
    names = "".join(f"    {n!r},\n" for n in sorted({*table, "AcpModel"}))
    return (
        header
        + doc
        + "\nfrom __future__ import annotations\n\n"
        + "from typing import TYPE_CHECKING\n\n"
        + "from acp_runtime.codegen_support import AcpModel as AcpModel\n"
        + "from acp_runtime.codegen_support import lazy_exports\n\n"
        + "if TYPE_CHECKING:\n"
        + imports
        + "\n_EXPORTS: dict[str, str] = {\n"
        + entries
        + "}\n\n__all__ = [\n"
        + names
        + "]\n\n"
        + "if not TYPE_CHECKING:  # checkers see the imports above: a misspelt name is an error\n"
        + f"    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, base={base!r})\n"
    )


def through_facade(source: str) -> str:
    """``source`` (a ``builders`` or ``remote`` module) reaching its models through their
    facade, ``models.TextContentBlock``, instead of importing each one: importing the
    module then creates no model, and ``typing.get_type_hints`` of a builder still
    resolves (the facade is in the module's namespace and loads a name when read)."""
    tree = ast.parse(source)
    found = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.level == 1
        and node.module in ("models", "_shared_models")
    ]
    if not found:
        return source
    (block,) = found
    if any(isinstance(n, ast.arg) and n.arg == "models" for n in ast.walk(tree)):
        raise RuntimeError("a parameter named `models` would hide the models facade")
    names = {a.name for a in block.names}
    data = source.encode()
    starts = [0]
    for line in data.split(b"\n"):
        starts.append(starts[-1] + len(line) + 1)
    edits: list[tuple[int, int, bytes]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            assert node.end_col_offset is not None
            begin = starts[node.lineno - 1] + node.col_offset
            edits.append(
                (begin, starts[node.lineno - 1] + node.end_col_offset, f"models.{node.id}".encode())
            )
    alias = "" if block.module == "models" else " as models"
    statement = f"from . import {block.module}{alias}  # a model is created on its first use"
    assert block.end_lineno is not None
    edits.append((starts[block.lineno - 1], starts[block.end_lineno] - 1, statement.encode()))
    for begin, end, text in sorted(edits, reverse=True):
        data = data[:begin] + text + data[end:]
    return data.decode()
