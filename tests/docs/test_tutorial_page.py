"""docs/tutorial.md shows the tutorial's programs as they are: every skipped block on the
page is cut, verbatim, from examples/tutorial_agent.py or examples/tutorial_client.py."""

from __future__ import annotations

from markdown_examples import REPO_ROOT, SKIP

PAGE = REPO_ROOT / "docs" / "tutorial.md"
SOURCES = [REPO_ROOT / "examples" / name for name in ("tutorial_agent.py", "tutorial_client.py")]


def test_every_excerpt_is_in_an_example() -> None:
    text = PAGE.read_text(encoding="utf-8")
    sources = [path.read_text(encoding="utf-8") for path in SOURCES]
    excerpts = [part.split("```python\n", 1)[1].split("```", 1)[0] for part in text.split(SKIP)[1:]]
    assert len(excerpts) >= 6
    for excerpt in excerpts:
        assert any(excerpt in source for source in sources), excerpt[:200]
