"""The docs examples type-check under mypy --strict and pyright strict, as the pages promise.

All examples of a page go into one module (they share a namespace when run), one module
per page, and each checker runs once over all of them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from markdown_examples import REPO_ROOT, extract, opted_in_pages

# The doc examples are extracted once per process
pytestmark = pytest.mark.xdist_group("docs-typing")


@pytest.fixture(scope="module")
def example_modules(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("doc_examples")
    modules: list[Path] = []
    for page in opted_in_pages():
        module = out / f"doc_{page.stem.replace('-', '_')}.py"
        module.write_text("".join(e.code for e in extract(page)), encoding="utf-8")
        modules.append(module)
    assert modules, "no docs page opts in to runnable examples"
    return modules


def _check(command: list[str]) -> None:
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_examples_pass_mypy_strict(example_modules: list[Path]) -> None:
    _check([sys.executable, "-m", "mypy", "--strict", *map(str, example_modules)])


def test_examples_pass_pyright_strict(example_modules: list[Path]) -> None:
    pyright = Path(sys.executable).with_name("pyright")
    _check([str(pyright), "--pythonpath", sys.executable, *map(str, example_modules)])
