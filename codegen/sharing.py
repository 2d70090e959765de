"""What ``vN.unstable`` shares with ``vN``: the definitions and bindings it does not change.

A definition is shared when the stable and the unstable schema give it the same source
(doc links aside: the unstable docs point at ``/protocol/vN/draft/``; the shared class keeps
the stable text) and everything it refers to is shared too (a fixpoint). A linked params
class (``TypedRequest[...]``) is shared only with its binding, which must be the same method
with shared params and result, so ``__acp_method__`` has one value.

The shared definitions go to ``vN/_shared_models.py``, the shared bindings to
``vN/_shared_methods.py`` and the builders of shared models that are alike in both to
``vN/_shared_builders.py``; both packages import them from there, so
``v1.unstable.TextContentBlock is v1.TextContentBlock``. Neither package builds the other's
own classes, so importing one costs what it did.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .authoring import Builder, ModelIndex
from .method_table import Method
from .ordering import definitions

SHARED_MODELS = "_shared_models"
SHARED_METHODS = "_shared_methods"
SHARED_BUILDERS = "_shared_builders"

_DRAFT_LINK = re.compile(r"(/protocol/v\d+/)draft/")


def comparable(text: str) -> str:
    """``text`` with doc links to the draft spec read as links to the published one."""
    return _DRAFT_LINK.sub(r"\1", text)


@dataclass(frozen=True)
class ModelsSource:
    """One generated models module (``from __future__`` annotations, params linked)."""

    source: str
    methods: list[Method]
    linked: set[str]

    def by_name(self) -> dict[str, str]:
        """Definition name -> its source text, in module order."""
        lines = self.source.split("\n")
        return {
            d.name: "\n".join(lines[d.first_line - 1 : d.last_line])
            for d in definitions(ast.parse(self.source))
        }


@dataclass(frozen=True)
class Sharing:
    """The definitions and bindings a stable package and its unstable superset share."""

    names: frozenset[str]
    methods: frozenset[tuple[str, str]]  # (wire name, kind)
    builders: frozenset[str] = frozenset()  # builder functions (``vN/_shared_builders.py``)

    def shares_method(self, method: Method) -> bool:
        return (method.name, method.kind) in self.methods


def _references(text: str, names: set[str]) -> set[str]:
    """Definitions ``text`` names: as identifiers, or as strings (``TypedRequest["X"]``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name) and node.id in names:
            found.add(node.id)
        elif isinstance(node, ast.Constant) and node.value in names:
            found.add(str(node.value))
    return found


def _binding_key(m: Method) -> tuple[object, ...]:
    return (m.name, m.kind, m.side, m.params, m.result, m.const_name, comparable(m.description))


def find_sharing(stable: ModelsSource, unstable: ModelsSource) -> Sharing:
    """The fixpoint: identical definitions whose references are all shared."""
    ours, theirs = stable.by_name(), unstable.by_name()
    names = set(ours) | set(theirs)
    refs = {n: _references(text, names) for n, text in ours.items()}
    shared = {n for n in ours if n in theirs and comparable(ours[n]) == comparable(theirs[n])}
    by_key = {(m.name, m.kind): m for m in stable.methods}
    their_methods = {(m.name, m.kind): m for m in unstable.methods}
    while True:
        methods = {
            key
            for key, m in by_key.items()
            if key in their_methods
            and _binding_key(m) == _binding_key(their_methods[key])
            and m.params in shared
            and (m.result is None or m.result in shared)
            and (m.params in stable.linked) == (m.params in unstable.linked)
        }
        linked_ok = {by_key[k].params for k in methods}
        keep = {
            n
            for n in shared
            if refs[n] <= shared
            and ((n not in stable.linked and n not in unstable.linked) or n in linked_ok)
        }
        if keep == shared:
            return Sharing(frozenset(shared), frozenset(methods))
        shared = keep


def shared_builders(
    sharing: Sharing, ours: list[Builder], theirs: list[Builder], index: ModelIndex
) -> frozenset[str]:
    """Builders both packages have alike (doc links aside) that build only shared models."""
    by_name = {b.name: b for b in theirs}
    return frozenset(
        b.name
        for b in ours
        if b.name in by_name
        and b.construction == by_name[b.name].construction
        and comparable(b.doc) == comparable(by_name[b.name].doc)
        and set(index.defined(b.construction.names())) <= sharing.names
    )


def _head_and_tail(source: str) -> tuple[str, list[str], str]:
    """(imports and docstring before the first definition, definition chunks, footer)."""
    defs = definitions(ast.parse(source))
    lines = source.split("\n")
    head = "\n".join(lines[: defs[0].first_line - 1])
    chunks = ["\n".join(lines[d.first_line - 1 : d.last_line]) for d in defs]
    tail = "\n".join(lines[defs[-1].last_line :])
    return head, chunks, tail


def _prune_imports(source: str) -> str:
    """Drop the ``from x import y`` names the module no longer uses (``y as y`` re-exports
    and ``__future__`` stay)."""
    tree = ast.parse(source)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    lines = source.split("\n")
    for node in reversed(tree.body):
        if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
            continue
        kept = [a for a in node.names if (a.asname or a.name) in used or a.asname == a.name]
        if len(kept) == len(node.names):
            continue
        names = [a.name + (f" as {a.asname}" if a.asname else "") for a in kept]
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        module = "." * node.level + (node.module or "")
        if not kept:
            lines[start:end] = []
        elif end - start > 1:
            lines[start:end] = [f"from {module} import (", *(f"    {n}," for n in names), ")"]
        else:
            lines[start:end] = [f"from {module} import {', '.join(names)}"]
    return "\n".join(lines)
