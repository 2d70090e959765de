"""Evaluate a models module's field annotations at class creation instead of from strings.

With ``from __future__ import annotations`` every annotation is a string, and pydantic
compiles and evaluates each one (``ForwardRef``) while it creates the class: about 40% of
creating the ~180 v1 models, which is most of importing them (cold start, bench/README).
Classes are already in dependency order (``ordering.py``), so almost every annotation can
be a plain expression; only one that names a class not yet defined (a cycle, or the class
itself) stays a string, which pydantic resolves when it builds the model.
"""

from __future__ import annotations

import ast

FUTURE_IMPORT = "from __future__ import annotations\n"


def _defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, ast.If):  # a lazy union's two definitions (lazy_unions.py)
        return set().union(*(_defined_names(n) for n in node.body + node.orelse))
    return set()


def _field_annotations(body: list[ast.stmt]) -> list[ast.expr]:
    """The annotations of a class body's fields, including those under ``if TYPE_CHECKING``."""
    found: list[ast.expr] = []
    for node in body:
        if isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        elif isinstance(node, ast.If):
            found += _field_annotations(node.body) + _field_annotations(node.orelse)
    return found


def _span(starts: list[int], node: ast.expr) -> tuple[int, int]:
    """Byte offsets of ``node`` in the UTF-8 source (``col_offset`` counts bytes)."""
    assert node.end_lineno is not None and node.end_col_offset is not None
    return starts[node.lineno - 1] + node.col_offset, starts[
        node.end_lineno - 1
    ] + node.end_col_offset


def evaluated_annotations(source: str) -> str:
    """``source`` without the ``__future__`` import, forward references quoted one by one."""
    if FUTURE_IMPORT not in source:
        raise ValueError("expected a module with `from __future__ import annotations`")
    tree = ast.parse(source)
    top_level = set().union(*(_defined_names(n) for n in tree.body))
    data = source.encode()
    starts = [0]
    for line in data.split(b"\n"):
        starts.append(starts[-1] + len(line) + 1)
    defined: set[str] = set()
    edits: list[tuple[int, int, bytes]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for annotation in _field_annotations(node.body):
                names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
                if (names & top_level) - defined:
                    quoted = repr(ast.unparse(annotation)).encode()
                    edits.append((*_span(starts, annotation), quoted))
        defined |= _defined_names(node)
    for begin, end, quoted in sorted(edits, reverse=True):
        data = data[:begin] + quoted + data[end:]
    return data.decode().replace(FUTURE_IMPORT + "\n", "", 1)
