"""``--dist loadgroup`` keeps an ``xdist_group`` on one worker.

Several modules run an expensive step once per process and rely on their group to run it
once (the typing checkers, the distribution builds, the checks of ``acp_runtime.check``).
pytest 9.2 silently broke the grouping (pytest-dev/pytest-xdist#1386): nothing failed, the
suite just ran those steps in every worker. This test fails instead.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group("grouping-check")


def test_loadgroup_marks_the_tests_of_a_group(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@grouping-check"), (
        f"{request.node.nodeid}: pytest-xdist no longer groups tests with this pytest"
    )
