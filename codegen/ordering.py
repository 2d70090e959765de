"""Reorder a models module so every class and alias comes after what it refers to.

dcg keeps the schema's (alphabetical) order and relies on ``from __future__ import
annotations``, so most classes name later ones and pydantic defers them: the first use of
a model then builds one large validator with every nested model inlined behind
definition references (a recursion guard per nested model on Python input). Defined in
dependency order, each class is complete at import and its fields reuse the nested
classes' own validators and serializers.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class _Definition:
    name: str
    node: ast.stmt
    first_line: int  # 1-based, decorators included
    last_line: int  # the docstring statement after an alias included


def _name_of(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        return node.name
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "TypeAliasType"
    ):
        return node.targets[0].id
    return None


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def definitions(tree: ast.Module) -> list[_Definition]:
    """The top-level classes and type aliases of a models module, with their line spans."""
    out: list[_Definition] = []
    body = tree.body
    i = 0
    while i < len(body):
        node = body[i]
        name = _name_of(node)
        i += 1
        if name is None:
            continue
        last = node.end_lineno or node.lineno
        if i < len(body) and _is_docstring(body[i]):
            last = body[i].end_lineno or body[i].lineno
            i += 1
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        out.append(_Definition(name, node, first, last))
    return out


def _references(node: ast.AST, names: set[str]) -> list[str]:
    """Names of other definitions ``node`` uses, except inside lambdas (default factories)."""
    found: list[str] = []

    def visit(n: ast.AST) -> None:
        if isinstance(n, ast.Lambda):
            return
        if isinstance(n, ast.Name) and n.id in names:
            found.append(n.id)
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(node)
    return found


def dependency_order(source: str) -> str:
    """``source`` with its top-level definitions moved after their dependencies.

    Deterministic: a depth-first walk in the original order; a cycle keeps the original
    order inside it (pydantic then defers those classes, as before).
    """
    tree = ast.parse(source)
    defs = definitions(tree)
    if not defs:
        return source
    lines = source.split("\n")
    first, last = defs[0].first_line, defs[-1].last_line
    covered = {n for d in defs for n in range(d.first_line, d.last_line + 1)}
    stray = [
        n.lineno
        for n in tree.body
        if first <= n.lineno <= last and n.lineno not in covered
    ]
    if stray:
        raise ValueError(f"statements between definitions at lines {stray[:5]}")
    by_name = {d.name: d for d in defs}
    names = set(by_name)
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        stack = [(name, iter(_references(by_name[name].node, names)))]
        seen.add(name)
        while stack:
            current, deps = stack[-1]
            for dep in deps:
                if dep not in seen:
                    seen.add(dep)
                    stack.append((dep, iter(_references(by_name[dep].node, names))))
                    break
            else:
                stack.pop()
                order.append(current)

    for d in defs:
        if d.name not in seen:
            visit(d.name)
    chunks = ["\n".join(lines[by_name[n].first_line - 1 : by_name[n].last_line]) for n in order]
    head = "\n".join(lines[: first - 1])
    tail = "\n".join(lines[last:])
    return head + "\n\n\n".join(chunks) + "\n" + tail
