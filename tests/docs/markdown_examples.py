"""Find the runnable Python examples in a Markdown page.

A page opts in with the line ``<!-- doc-examples: run -->``. Then every fenced ``python``
block on it is an example, run in page order in one namespace (later blocks use what
earlier ones defined). A fenced ``text`` block that directly follows an example is the
output the example must print. ``<!-- doc-examples: skip -->`` on the line before a block
leaves that one block out (for fragments that cannot run alone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

OPT_IN = "<!-- doc-examples: run -->"
SKIP = "<!-- doc-examples: skip -->"
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<info>[^\n]*)$")


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    """1-based line of the opening fence, for failure messages."""
    code: str
    expected_output: str | None
    """The following ``text`` block's content, or ``None`` when the output is not checked."""


@dataclass(frozen=True)
class _Block:
    line: int
    info: str
    body: str
    skipped: bool
    end: int
    """Index of the closing fence line."""


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        if j == len(lines):
            raise ValueError(f"unclosed code fence at line {i + 1}")
        body = "\n".join(line[indent:] for line in lines[i + 1 : j]) + "\n"
        previous = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        info = opening["info"].split()[0] if opening["info"].strip() else ""
        blocks.append(_Block(i + 1, info, body, previous == SKIP, j))
        i = j + 1
    return blocks


def extract(page: Path) -> list[Example]:
    """The page's examples, or ``[]`` when the page has not opted in."""
    text = page.read_text(encoding="utf-8")
    if OPT_IN not in text:
        return []
    lines = text.splitlines()
    blocks = _blocks(lines)
    examples: list[Example] = []
    for index, block in enumerate(blocks):
        if block.info != "python" or block.skipped:
            continue
        expected = None
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        between = lines[block.end + 1 : following.line - 1] if following else []
        if following and following.info == "text" and not any(s.strip() for s in between):
            expected = following.body
        examples.append(Example(page, block.line, block.body, expected))
    return examples


REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS = REPO_ROOT / "docs"


def opted_in_pages() -> list[Path]:
    """The docs pages and the README that opt in, in a stable order (the README last)."""
    pages = sorted(p for p in DOCS.rglob("*.md") if OPT_IN in p.read_text(encoding="utf-8"))
    readme = REPO_ROOT / "README.md"
    return pages + ([readme] if OPT_IN in readme.read_text(encoding="utf-8") else [])
