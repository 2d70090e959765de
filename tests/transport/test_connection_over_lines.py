"""A real connection over newline framing: over-limit input is answered and survived."""

from __future__ import annotations

import json
import socket

import anyio
import pytest
from anyio.abc import SocketStream

from acp_runtime import ConnectionBuilder, JsonValue, Responder
from acp_runtime.transports import LineTransport


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
@pytest.mark.parametrize(
    ("head", "tail", "answered_id"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":"', b'"}', 1),
        (b'{"jsonrpc":"2.0","method":"x","params":"', b'","id":1}', None),  # id unread
    ],
    ids=["id-first", "id-last"],
)
async def test_over_limit_request_gets_its_id_in_the_error_if_read_and_the_connection_goes_on(
    head: bytes, tail: bytes, answered_id: int | None
) -> None:
    ours, peer = await socket_transports(limit=4096)
    huge = head + b"y" * (16 * 1024 * 1024) + tail
    with anyio.fail_after(20):
        async with ConnectionBuilder().on_raw_request(echo).connect(ours):
            await peer.send(huge)  # 16 MiB: completes only as the connection skips it
            reply = json.loads(await peer.receive())
            assert reply["id"] == answered_id
            assert reply["error"]["code"] == -32600
            assert reply["error"]["data"] == {"reason": "message_too_large", "limit": 4096}
            await peer.send(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
            assert json.loads(await peer.receive()) == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"method": "ping", "params": None},
            }
    await peer.aclose()
