"""A client on stdin/stdout for the hostile-peer figures (:mod:`.hostile_peers`).

It sends ``initialize``, then answers the agent's ``_echo/ping`` requests with
``{"pong": <params>}`` (as an editor answers ``fs/read_text_file``) until its input
ends. The process is started the other way round from an editor (the hostile agent is
its parent, on its stdio), which changes nothing for the connection: the same framing,
the same dispatch loop, the same outgoing queue.
"""

from __future__ import annotations

import anyio

from acp_runtime import ConnectionBuilder, JsonValue, Responder, stdio_transport


async def pong(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    return {"pong": params}


async def main() -> None:
    builder = ConnectionBuilder("client").on_raw_request(pong)
    async with builder.connect(stdio_transport()) as cx:
        cx.send_raw_request("initialize", {"protocolVersion": 1, "clientCapabilities": {}}).detach()
        await cx.wait_incoming_closed()


if __name__ == "__main__":
    anyio.run(main)
