"""A real connection over newline framing: over-limit input is answered and survived."""

from __future__ import annotations

import json
import socket

import anyio
import pytest
from anyio.abc import SocketStream

from acp_runtime import ConnectionBuilder, JsonValue, Responder
from acp_runtime.framing import LineTransport


async def echo(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    return {"method": method, "params": params}


async def socket_transports(limit: int) -> tuple[LineTransport, LineTransport]:
    left, right = socket.socketpair()
    ours, theirs = await SocketStream.from_socket(left), await SocketStream.from_socket(right)
    return (
        LineTransport(ours, ours, max_message_bytes=limit),
        LineTransport(theirs, theirs),
    )


@pytest.mark.anyio
async def test_over_limit_line_gets_an_error_with_id_null_and_the_connection_keeps_serving() -> (
    None
):
    ours, peer = await socket_transports(limit=4096)
    huge = b'{"jsonrpc":"2.0","id":1,"method":"x","params":"' + b"y" * (16 * 1024 * 1024) + b'"}'
    with anyio.fail_after(20):
        async with ConnectionBuilder().on_raw_request(echo).connect(ours):
            await peer.send(huge)  # 16 MiB: completes only as the connection skips it
            reply = json.loads(await peer.receive())
            assert reply["id"] is None
            assert reply["error"]["code"] == -32600
            assert reply["error"]["data"] == {"reason": "message_too_large", "limit": 4096}
            await peer.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
            assert json.loads(await peer.receive()) == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"method": "ping", "params": None},
            }
    await peer.aclose()
