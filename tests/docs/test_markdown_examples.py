"""The example extractor finds what the docs tests run, and nothing else."""

from __future__ import annotations

from pathlib import Path

from markdown_examples import extract

PAGE = """\
# Title
<!-- doc-examples: run -->

```python
x = 1
print(x)
```

```text
1
```

<!-- doc-examples: skip -->
```python
fragment(...)
```

```json
{"not": "python"}
```

1. A step:

    ```python
    print(x + 1)
    ```

```python
y = 2
```
Some prose.
```text
not this block's output: prose sits between
```
"""


def test_examples_with_outputs_skips_and_indentation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    examples = extract(page)
    assert [(e.line, e.code, e.expected_output) for e in examples] == [
        (4, "x = 1\nprint(x)\n", "1\n"),
        (24, "print(x + 1)\n", None),
        (28, "y = 2\n", None),
    ]


def test_a_page_that_does_not_opt_in_has_no_examples(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE.replace("<!-- doc-examples: run -->", ""), encoding="utf-8")
    assert extract(page) == []
