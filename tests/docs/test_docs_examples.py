"""Every example on an opted-in docs page runs, on asyncio and on trio, and prints what the
page says it prints."""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import io
import sys
import types
from pathlib import Path

import anyio
import pytest
from markdown_examples import DOCS, REPO_ROOT, extract, opted_in_pages

PAGES = opted_in_pages()

# Pages of this site whose point is their examples: they must stay opted in.
MUST_RUN = {"agents.md", "clients.md", "handlers.md", "ordering.md"}

HANG_LIMIT_S = 60  # a hung example aborts the run with every thread's traceback


def test_pages_that_teach_by_example_are_opted_in() -> None:
    """The guide pages and the README ("every example in the README runs")."""
    opted_in = {p.name for p in PAGES}
    assert REPO_ROOT / "README.md" in PAGES, "README.md must opt in to runnable examples"
    missing = sorted(name for name in MUST_RUN if (DOCS / name).exists() and name not in opted_in)
    assert not missing, f"pages without runnable examples: {missing}"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO_ROOT).as_posix() for p in PAGES])
def test_page_examples_run(page: Path, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = extract(page)
    assert examples, f"{page.name} opts in but has no python block"
    monkeypatch.setattr(anyio, "run", functools.partial(anyio.run, backend=backend))
    module = types.ModuleType(f"docs_example_{page.stem.replace('-', '_')}")
    module.__file__ = str(page)
    sys.modules[module.__name__] = module
    faulthandler.dump_traceback_later(HANG_LIMIT_S, exit=True)
    try:
        for example in examples:
            source = "\n" * example.line + example.code  # tracebacks show the page's line numbers
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(source, str(page), "exec"), module.__dict__)
            if example.expected_output is not None:
                assert printed.getvalue() == example.expected_output, (
                    f"{page.name}:{example.line} printed something else than the page shows"
                )
    finally:
        faulthandler.cancel_dump_traceback_later()
        del sys.modules[module.__name__]
