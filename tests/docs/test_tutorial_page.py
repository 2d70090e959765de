"""docs/tutorial.md shows the tutorial's programs as they are: every python block on the
page but the last (which runs the client) is cut, verbatim, from examples/tutorial_agent.py
or examples/tutorial_client.py, and the blocks run in order as they are (test_docs_examples)."""

from __future__ import annotations

from markdown_examples import REPO_ROOT, SKIP, extract

PAGE = REPO_ROOT / "docs" / "tutorial.md"
SOURCES = [REPO_ROOT / "examples" / name for name in ("tutorial_agent.py", "tutorial_client.py")]


def test_every_block_but_the_demo_is_in_an_example() -> None:
    sources = [path.read_text(encoding="utf-8") for path in SOURCES]
    examples = extract(PAGE)
    assert len(examples) >= 6
    for example in examples[:-1]:
        assert any(example.code in source for source in sources), example.code[:200]


def test_no_block_is_skipped() -> None:
    """Issue 33: a tutorial whose code blocks run as they are."""
    assert SKIP not in PAGE.read_text(encoding="utf-8")
