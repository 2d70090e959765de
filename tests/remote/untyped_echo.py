"""The least agent the WebSocket server tests serve: ``initialize`` answers protocol
version 1, any other request echoes its params."""

from __future__ import annotations

from typing import Any

from acp_runtime import ConnectionBuilder, Responder


def echo_agent() -> ConnectionBuilder:
    builder = ConnectionBuilder(role="untyped")

    async def answer(method: str, params: Any, responder: Responder[Any]) -> Any:
        return {"protocolVersion": 1} if method == "initialize" else {"echo": params}

    builder.on_raw_request(answer)
    return builder
