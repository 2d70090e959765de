"""Count code lines the way the authoring issue measures them.

A code line is a line with at least one token that is not part of a comment, a docstring
(module, class or function), or an import statement; blank lines do not count. Usage:
``python -m bench.authoring.count_lines FILE...`` prints one JSON object per file.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import tokenize
from pathlib import Path

_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


def _excluded_lines(tree: ast.Module) -> set[int]:
    """Lines of imports and docstrings."""
    excluded: set[int] = set()
    for node in ast.walk(tree):
        spans: list[ast.AST] = []
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            spans.append(node)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                spans.append(body[0])
        for span in spans:
            excluded.update(range(span.lineno, (span.end_lineno or span.lineno) + 1))
    return excluded


def code_lines(source: str) -> int:
    excluded = _excluded_lines(ast.parse(source))
    lines = {
        line
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type not in _NOT_CODE
        for line in range(token.start[0], token.end[0] + 1)
    }
    return len(lines - excluded)


def main(paths: list[str]) -> int:
    for path in paths:
        count = code_lines(Path(path).read_text(encoding="utf-8"))
        print(json.dumps({"file": path, "code_lines": count}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
