"""The client transport on its own, against a scripted ASGI server: binary frames skipped,
a message over the limit refused with 1009, the server's close code kept."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Request, TextMessage

from acp_runtime import MessageTooLarge
from acp_runtime.remote import connect_websocket

from .hypercorn_server import serving

pytestmark = pytest.mark.anyio


class Scripted:
    """An ASGI app: accepts, sends ``frames`` (str: text, bytes: binary), then closes with
    ``close_code`` or waits for the client to."""

    def __init__(self, frames: list[str | bytes], close_code: int | None = None) -> None:
        self.frames = frames
        self.close_code = close_code

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept", "headers": [(b"acp-connection-id", b"c-1")]})
        for frame in self.frames:
            key = "text" if isinstance(frame, str) else "bytes"
            await send({"type": "websocket.send", key: frame})
        if self.close_code is not None:
            await send({"type": "websocket.close", "code": self.close_code, "reason": "bye"})
            return
        while (await receive())["type"] != "websocket.disconnect":
            pass


async def test_binary_frames_are_skipped_and_the_connection_id_is_read() -> None:
    app = Scripted([b"\x00binary", '{"jsonrpc":"2.0","method":"a"}'], close_code=1001)
    async with serving(app) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            assert transport.connection_id == "c-1"
            with anyio.fail_after(5):
                assert await transport.receive() == b'{"jsonrpc":"2.0","method":"a"}'
                with pytest.raises(anyio.EndOfStream):
                    await transport.receive()
    assert (transport.close_code, transport.close_reason) == (1001, "bye")


class ClientClose:
    def __init__(self) -> None:
        self.codes: list[int] = []
        self.texts: list[str] = []
        self.seen = anyio.Event()


@asynccontextmanager
async def wsproto_server(first: str, close: ClientClose) -> AsyncGenerator[int, None]:
    """A bare wsproto server on a loopback port: sends ``first``, records the client's close
    code (an ASGI app does not see it: hypercorn reports 1000 or 1006 whatever was sent)."""

    async def handle(stream: anyio.abc.SocketStream) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        async with stream:
            while True:
                try:
                    ws.receive_data(await stream.receive())
                except anyio.EndOfStream:
                    return
                for event in ws.events():
                    if isinstance(event, Request):
                        await stream.send(ws.send(AcceptConnection()))
                        await stream.send(ws.send(TextMessage(data=first)))
                    elif isinstance(event, TextMessage):
                        close.texts.append(event.data)
                    elif isinstance(event, CloseConnection):
                        close.codes.append(event.code)
                        close.seen.set()
                        return

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        yield listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.cancel_scope.cancel()


async def test_a_message_over_the_limit_closes_1009() -> None:
    close = ClientClose()
    async with wsproto_server('"' + "x" * 200 + '"', close) as port:
        async with connect_websocket(
            f"ws://127.0.0.1:{port}/acp", max_message_bytes=100
        ) as transport:
            with anyio.fail_after(5):
                with pytest.raises(MessageTooLarge) as caught:
                    await transport.receive()
                with pytest.raises(anyio.EndOfStream):
                    await transport.receive()
            with pytest.raises(anyio.ClosedResourceError):
                await transport.send(b"{}")
        with anyio.fail_after(5):
            await close.seen.wait()
    assert caught.value.limit == 100
    assert close.codes == [1009]


async def test_leaving_the_block_closes_1000() -> None:
    close = ClientClose()
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            with anyio.fail_after(5):
                assert await transport.receive() == b'"hi"'
        with anyio.fail_after(5):
            await close.seen.wait()
    assert close.codes == [1000]


async def test_send_many_writes_each_message_as_its_own_frame_in_order() -> None:
    close = ClientClose()
    async with wsproto_server('"hi"', close) as port:
        async with connect_websocket(f"ws://127.0.0.1:{port}/acp") as transport:
            await transport.send_many([b'{"n":1}', b'{"n":2}', '{"é":3}'.encode()])
            await transport.send(b'{"n":4}')
        with anyio.fail_after(5):
            await close.seen.wait()
    assert close.texts == ['{"n":1}', '{"n":2}', '{"é":3}', '{"n":4}']
