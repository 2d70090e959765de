"""The tutorial's agent and client stay small (issue 33: at most 80 and 60 code lines).

Code lines are counted by ``python -m bench.authoring.count_lines`` (AST-based: blank
lines, comments, docstrings and import statements do not count).
"""

from __future__ import annotations

import runpy

import pytest
from markdown_examples import REPO_ROOT

# by path: under pytest, the name `bench` is tests/bench
code_lines = runpy.run_path(str(REPO_ROOT / "bench" / "authoring" / "count_lines.py"))["code_lines"]
EXAMPLES = REPO_ROOT / "examples"


def test_the_counter_skips_blanks_comments_docstrings_and_imports() -> None:
    source = '"""Doc."""\nimport os\nfrom x import (\n    y,\n)\n\n# note\ndef f() -> None:\n'
    source += '    """Doc\n    more."""\n    return None  # why\n'
    assert code_lines(source) == 2


@pytest.mark.parametrize(("name", "limit"), [("tutorial_agent.py", 80), ("tutorial_client.py", 60)])
def test_the_tutorial_programs_stay_within_their_limits(name: str, limit: int) -> None:
    count = code_lines((EXAMPLES / name).read_text(encoding="utf-8"))
    assert count <= limit, f"{name}: {count} code lines, limit {limit}"
