"""The asyncio socket path reads into one buffer per thread instead of asking ``recv`` for
fresh bytes: asyncio's ``recv`` of up to 256 KiB allocated all of them before every read
(an ``mmap``, an ``mremap``, a ``munmap`` and a page fault per small message). The buffer
is shared by every socket of the thread, so what a read leaves unparsed (half a frame)
must be copied out before the next socket's read lands in it."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from typing import Any

import anyio
import pytest

from acp_runtime import ConnectionBuilder, Responder
from acp_runtime._fd_reader import READ_BYTES
from acp_runtime.remote import _websocket_frames as frames
from acp_runtime.remote import connect_websocket, websocket_app
from acp_runtime.remote._websocket_socket import LoopWebSocket

from .direct_server import serving
from .test_websocket_hostile import request, upgraded

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024


def digest_agent() -> ConnectionBuilder:
    """Answers each request with the SHA-256 of its params' ``text``."""
    builder = ConnectionBuilder(role="untyped")

    async def answer(method: str, params: Any, responder: Responder[Any]) -> Any:
        if method == "initialize":
            return {"protocolVersion": 1}
        return {"sha256": sha256(params["text"])}

    builder.on_raw_request(answer)
    return builder


def text_request(request_id: int, text: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "digest", "params": {"text": text}}
    return frames.text_frame(json.dumps(message).encode())


async def test_half_a_frame_survives_another_sockets_reads_in_the_shared_buffer() -> None:
    """Socket A sends the first 600 KiB of a 1 MiB message (more than two reads), then
    socket B makes a round trip (its reads land in the same buffer), then A sends the
    rest: A's message arrives whole. Kept as a view of the buffer, A's start would be
    overwritten by B's frames and the digest would differ."""
    big = "".join(chr(ord("a") + i % 26) for i in range(MIB))
    frame = text_request(2, big)
    async with serving(websocket_app(digest_agent)) as port:
        async with (
            upgraded(port, request(1, "initialize")) as a,
            upgraded(port, request(1, "initialize")) as b,
        ):
            await a.frames(until_closed=False)
            await b.frames(until_closed=False)
            await a.stream.send(frame[: 600 * 1024])
            await anyio.sleep(0.05)  # the server reads A's bytes before B's
            for n in range(2, 6):
                await b.stream.send(text_request(n, f"b{n}" * 1000))
                (answer,) = await b.frames(until_closed=False)
                assert json.loads(answer[1])["result"]["sha256"] == sha256(f"b{n}" * 1000)
            await a.stream.send(frame[600 * 1024 :])
            (answer,) = await a.frames(until_closed=False)
    assert json.loads(answer[1])["result"]["sha256"] == sha256(big)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_small_message_allocates_no_read_sized_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Round trips of small messages, client and server both on the asyncio path in this
    process: the peak of traced memory stays far below one read's size. With ``recv``
    the peak held a fresh 256 KiB object per read."""
    for name in ("ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)  # a proxy would take the stream path
    async with serving(websocket_app(digest_agent)) as port:
        url = f"ws://127.0.0.1:{port}/acp"
        async with (
            connect_websocket(url) as transport,
            ConnectionBuilder(role="untyped").connect(transport) as cx,
        ):
            assert isinstance(transport, LoopWebSocket)
            await cx.send_raw_request("initialize", {"protocolVersion": 1})
            await cx.send_raw_request("digest", {"text": "warm-up"})  # the buffer exists
            tracemalloc.start()
            try:
                base = tracemalloc.get_traced_memory()[0]
                for n in range(50):
                    answer = await cx.send_raw_request("digest", {"text": str(n)})
                    assert answer == {"sha256": sha256(str(n))}
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    assert peak - base < READ_BYTES // 2


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
