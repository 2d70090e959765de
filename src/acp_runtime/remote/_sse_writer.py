"""The body of one SSE GET: a stream's events as they come, a keep-alive comment while the
reader waits, and the reader freed the moment the client goes away (``http.disconnect``),
so a reconnecting GET is not refused with 409 for ever."""

from __future__ import annotations

import anyio

from ._asgi import Receive, Scope, Send
from ._http_connection import HttpConnection
from ._outbound_streams import KEEP_ALIVE, OutboundStream

EVENT_STREAM: bytes = b"text/event-stream"
BATCH_BYTES = 256 * 1024
"""At most this much of a stream's queued events goes out in one write."""


def sse_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """TS 2.4.0's SSE response headers; ``connection`` only on HTTP/1.x, where it is legal."""
    headers = [(b"content-type", EVENT_STREAM), (b"cache-control", b"no-cache")]
    if str(scope.get("http_version", "1.1")).startswith("1"):
        headers.append((b"connection", b"keep-alive"))
    return headers


async def write_sse(
    scope: Scope,
    receive: Receive,
    send: Send,
    connection: HttpConnection,
    stream: OutboundStream,
    token: object,
) -> None:
    """Answer 200 and write ``stream``'s events until it ends or the client leaves."""
    gone = False
    try:
        async with anyio.create_task_group() as tg:

            async def watch_disconnect() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                tg.cancel_scope.cancel()

            tg.start_soon(watch_disconnect)
            keep_alive = connection.limits.keep_alive
            try:
                start = {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": sse_headers(scope),
                }
                await send(start)
                while True:
                    chunk = stream.take(BATCH_BYTES)
                    if not chunk:
                        if stream.finished:
                            break
                        if await stream.wait(keep_alive):
                            continue
                        chunk = KEEP_ALIVE
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except OSError:  # the ASGI server reports a gone client this way
                gone = True
            tg.cancel_scope.cancel()
    finally:
        connection.release(stream, token)
    if not gone:
        try:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass
