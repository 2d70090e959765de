"""docs/tutorial.md shows the tutorial's programs as they are: every python block on the
page but the last (which runs the client) is cut, verbatim, from examples/tutorial_agent.py
or examples/tutorial_client.py, and the blocks run in order as they are (test_docs_examples).

A block of imports only is checked name by name instead: the page runs as one module, so
the client's block leaves out what the agent's block already imported."""

from __future__ import annotations

import ast

from markdown_examples import REPO_ROOT, SKIP, extract

PAGE = REPO_ROOT / "docs" / "tutorial.md"
SOURCES = [REPO_ROOT / "examples" / name for name in ("tutorial_agent.py", "tutorial_client.py")]


def test_every_block_but_the_demo_is_in_an_example() -> None:
    sources = [path.read_text(encoding="utf-8") for path in SOURCES]
    examples = extract(PAGE)
    assert len(examples) >= 6
    imported = {name for source in sources for name in imports(source)}
    for example in examples[:-1]:
        if all(
            isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.parse(example.code).body
        ):
            assert imports(example.code) <= imported, example.code
        else:
            assert any(example.code in source for source in sources), example.code[:200]


def imports(source: str) -> set[tuple[str, str]]:
    """(module, name) of every import statement in ``source``."""
    found: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            found.update((node.module or "", alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update((alias.name, "") for alias in node.names)
    return found


def test_no_block_is_skipped() -> None:
    """Issue 33: a tutorial whose code blocks run as they are."""
    assert SKIP not in PAGE.read_text(encoding="utf-8")
