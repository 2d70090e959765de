"""The remote-transport tests use the tutorial's agent and client (examples/)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))


@pytest.fixture(params=["hypercorn", "uvicorn"])
def asgi_server(request: pytest.FixtureRequest, anyio_backend: str) -> Callable[..., Any]:
    """The ``serving(app)`` of one ASGI server: the round trips run under hypercorn and, on
    asyncio, under uvicorn too (the app is meant for whatever server the user runs)."""
    if request.param == "uvicorn":
        if anyio_backend != "asyncio":
            pytest.skip("uvicorn has no trio worker")
        from .uvicorn_server import serving
    else:
        from .hypercorn_server import serving
    return serving


@pytest.fixture(params=["hypercorn", "direct"])
def websocket_server(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """The ``serving(app)`` of a WebSocket app: mounted in hypercorn, or on a socket of its
    own (``WebSocketApp.serve``); the wire and its rules must be the same under both."""
    if request.param == "direct":
        from .direct_server import serving
    else:
        from .hypercorn_server import serving
    return serving


@pytest.fixture(params=["hypercorn", "uvicorn", "direct"])
def any_websocket_server(request: pytest.FixtureRequest, anyio_backend: str) -> Callable[..., Any]:
    """Every way to serve a WebSocket app: hypercorn, uvicorn (asyncio only) and its own
    listener; the round trips with our client run under each."""
    if request.param == "uvicorn":
        if anyio_backend != "asyncio":
            pytest.skip("uvicorn has no trio worker")
        from .uvicorn_server import serving
    elif request.param == "direct":
        from .direct_server import serving
    else:
        from .hypercorn_server import serving
    return serving
