"""The Streamable HTTP client's public API: connect_http yields a Transport, its options
are typed (cookies: a store or "omit"), and the one-call remote client yields a Connection."""

from __future__ import annotations

import httpx
from typing_extensions import reveal_type

from acp_generated import v1
from acp_runtime import ConnectionBuilder, Transport
from acp_runtime.remote import (
    CookieStore,
    connect_http,
    connect_remote,
    connect_to_remote_agent,
)


def takes_transport(transport: Transport) -> None: ...


def takes_str(text: str) -> None: ...


async def use(client: v1.ClientHandler) -> None:
    store = CookieStore()
    async with connect_http(
        "http://127.0.0.1:8765/acp",
        headers={"Authorization": "Bearer t"},
        cookies=store,
        max_message_bytes=1 << 20,
        http_client=httpx.AsyncClient(),
    ) as transport:
        takes_transport(transport)
        takes_str(transport.connection_id)  # expect-error: None before initialize
        async with ConnectionBuilder(role="client").connect(transport) as cx:
            reveal_type(cx)  # expect: Connection
    async with connect_http("http://h/acp", cookies="omit"):
        pass
    connect_http("http://h/acp", cookies="include")  # expect-error
    connect_http("http://h/acp", headers=[("a", "b")])  # expect-error
    takes_str(store.cookie_header())  # expect-error: None when empty
    async with connect_remote("ws://h/acp") as any_transport:
        takes_transport(any_transport)
    async with connect_to_remote_agent("http://h/acp", client) as cx:
        reveal_type(cx)  # expect: Connection
    connect_to_remote_agent(b"http://h/acp")  # expect-error
