"""Run mypy --strict and pyright (strict) on small snippet files, no pydantic plugin.

Each snippet marks what the checkers must say: ``# expect: T`` on a ``reveal_type`` line
(the revealed type must end with ``T``) and ``# expect-error`` on a line where an error
must be reported (at that line or the next two, since mypy points at the argument and
pyright at the name). Any other error fails the test, so the positive snippets prove
that snake_case constructors, typed sends and handler subclasses are accepted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.typing.checkers import CHECKERS, GROUP, SNIPPETS

# One mypy and one pyright run per process checks every file (tests/typing/checkers.py)
pytestmark = pytest.mark.xdist_group(GROUP)

_EXPECT = re.compile(r"#\s*expect:\s*([\w.]+)")
_EXPECT_ERROR = re.compile(r"#\s*expect-error")


def _expectations(path: Path) -> tuple[dict[int, str], set[int]]:
    reveals: dict[int, str] = {}
    errors: set[int] = set()
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        if m := _EXPECT.search(line):
            reveals[lineno] = m[1]
        if _EXPECT_ERROR.search(line):
            errors.add(lineno)
    return reveals, errors


@pytest.mark.parametrize("checker", sorted(CHECKERS))
@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f.stem for f in SNIPPETS])
def test_snippet(checker: str, snippet: Path) -> None:
    found = CHECKERS[checker]()
    want_reveals, want_errors = _expectations(snippet)
    got_errors = set(found.errors.get(snippet, {}))
    got_reveals = found.reveals.get(snippet, {})
    for lineno, type_name in want_reveals.items():
        assert lineno in got_reveals, f"{checker}: no reveal_type output at {snippet.name}:{lineno}"
        assert got_reveals[lineno].split(".")[-1] == type_name, (
            checker,
            lineno,
            got_reveals[lineno],
        )
    windows = {lineno: range(lineno, lineno + 3) for lineno in want_errors}
    for lineno, window in windows.items():
        assert got_errors & set(window), f"{checker}: expected an error at {snippet.name}:{lineno}"
    unexpected = {e for e in got_errors if not any(e in w for w in windows.values())}
    assert not unexpected, (
        f"{checker}: unexpected errors in {snippet.name} at lines {sorted(unexpected)}"
    )
