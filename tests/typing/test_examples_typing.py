"""Every example type-checks under mypy --strict and pyright strict (issue #15): users copy
them, so they must show code that passes the checkers a user runs."""

from __future__ import annotations

import pytest

from tests.typing.checkers import CHECKERS, EXAMPLES, GROUP, checked_files

# One mypy and one pyright run per process checks every file (tests/typing/checkers.py)
pytestmark = pytest.mark.xdist_group(GROUP)


@pytest.mark.parametrize("checker", sorted(CHECKERS))
def test_examples_pass_the_strict_checkers(checker: str) -> None:
    assert EXAMPLES
    found = CHECKERS[checker]()
    assert not found.report(EXAMPLES), f"{checker}:\n{found.report(EXAMPLES)}"


@pytest.mark.parametrize("checker", sorted(CHECKERS))
def test_the_checkers_report_nothing_in_what_the_checked_files_import(checker: str) -> None:
    """The runtime and generated code the examples, snippets and docs import check clean too."""
    found = CHECKERS[checker]()
    elsewhere = sorted(set(found.errors) - set(checked_files()))
    assert not elsewhere, f"{checker}:\n{found.report(elsewhere)}"
