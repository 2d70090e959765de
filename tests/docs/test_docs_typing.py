"""The docs examples type-check under mypy --strict and pyright strict, as the pages promise.

All examples of a page go into one module (they share a namespace when run), one module
per page; one run of each checker covers them with the typing tests' files
(tests/typing/checkers.py).
"""

from __future__ import annotations

import pytest

from tests.typing.checkers import CHECKERS, GROUP, doc_modules

pytestmark = pytest.mark.xdist_group(GROUP)


@pytest.mark.parametrize("checker", sorted(CHECKERS))
def test_docs_examples_pass_the_strict_checkers(checker: str) -> None:
    found = CHECKERS[checker]()
    assert not found.report(doc_modules()), f"{checker}:\n{found.report(doc_modules())}"
