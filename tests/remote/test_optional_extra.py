"""The remote transports are an optional extra: the core import does not pull them in."""

from __future__ import annotations

import subprocess
import sys

import pytest

CLIENT_LIBRARIES = ("httpx", "httpcore", "wsproto", "trio", "h11")


def loaded_after(statement: str, modules: tuple[str, ...] = CLIENT_LIBRARIES) -> list[str]:
    """Which of ``modules`` (the HTTP client libraries and trio by default) ``statement``
    imports in a fresh interpreter, sorted."""
    code = (
        f"import sys\n{statement}\n"
        f"print(','.join(sorted(m for m in {modules!r} if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return [name for name in out.strip().split(",") if name]


def test_import_acp_runtime_imports_no_http_library() -> None:
    remote = ("httpx", "httpx_ws", "wsproto", "hypercorn", "acp_runtime.remote")
    assert loaded_after("import acp_runtime", remote) == []


def test_the_remote_package_loads_a_client_library_with_the_client() -> None:
    """The checks around this one can fail: the Streamable HTTP client does load httpx."""
    assert "httpx" in loaded_after("from acp_runtime.remote import connect_http")


def test_a_websocket_client_imports_httpx_only_for_a_proxy_or_a_lent_client() -> None:
    """A plain ``ws://`` socket needs wsproto (the handshake) and nothing of httpx,
    httpcore or trio: ``from acp_runtime.remote import connect_websocket`` 246-259 ms ->
    118-121 ms (5 runs each)."""
    assert loaded_after("from acp_runtime.remote import connect_websocket") == ["h11", "wsproto"]


@pytest.mark.parametrize("server", ["websocket_app", "http_app", "acp_app"])
def test_a_server_imports_no_http_client(server: str) -> None:
    """``acp_runtime.remote`` loads its names on first access: an agent that mounts an ASGI
    app does not import httpx, httpcore and trio for a client it never runs (measured
    here: ``from acp_runtime.remote import websocket_app`` 341 ms -> 160 ms)."""
    assert loaded_after(f"from acp_runtime.remote import {server}") == []
