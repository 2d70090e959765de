"""The ``acp_client`` pytest fixture: a :class:`~acp_runtime.testing.v1.TestClient`
connected to your agent. Enable it in a ``conftest.py``::

    pytest_plugins = ["acp_runtime.testing.pytest_plugin"]

    @pytest.fixture
    def acp_agent() -> MyAgent:
        return MyAgent()

then a test is a few lines (an anyio test: asyncio and trio)::

    @pytest.mark.anyio
    @pytest.mark.acp_client(files={"/w/README.md": "hello"})
    async def test_reads(acp_client: TestClient) -> None:
        updates, answer = await acp_client.prompt("read /w/README.md")

The ``acp_client`` marker takes :func:`~acp_runtime.testing.v1.agent_client`'s keywords.
It is a plugin to enable, not an entry point, so installing the SDK changes no one's
test run.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, cast

import pytest

from .v1 import TestClient, agent_client


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "acp_client(**options): options of the acp_client fixture (agent_client's)"
    )


@pytest.fixture
def acp_agent() -> Any:
    """The agent under test: override this fixture in your conftest.py."""
    raise pytest.UsageError("define an `acp_agent` fixture returning your agent handler")


@pytest.fixture
async def acp_client(
    acp_agent: Any, request: pytest.FixtureRequest
) -> AsyncGenerator[TestClient, None]:
    """A scripted v1 client connected to ``acp_agent``, initialized."""
    # (``FixtureRequest.node`` has no annotation before pytest 9.2)
    node = cast(pytest.Item, request.node)  # pyright: ignore[reportUnknownMemberType]
    marker = node.get_closest_marker("acp_client")
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    async with agent_client(acp_agent, **options) as client:
        yield client
