"""Cold-start floor with this SDK's dependencies and no SDK: anyio on asyncio, and pydantic.

What ``bench/cold_start.py`` calls ``deps_floor``: the runtime this SDK cannot start without
(the interpreter, asyncio, anyio's asyncio backend, pydantic validating and dumping one
small model each way: the params model deferred to its first validation, as this SDK's
generated models are, the result model built when its class is created) answering
``initialize`` on stdin/stdout, and nothing else; an agent on this SDK pays this much
before any line of the SDK runs. It answers only ``initialize`` (the cold-start benchmark
sends ``session/new`` and a prompt after it, so it answers those with a fixed session and
one update, without models).
"""

from __future__ import annotations

import json
import sys

import anyio
from pydantic import BaseModel, ConfigDict, Field


class InitializeParams(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)
    protocol_version: int = Field(alias="protocolVersion")


class InitializeResult(BaseModel):
    protocol_version: int = Field(serialization_alias="protocolVersion")
    agent_capabilities: dict[str, object] = Field(serialization_alias="agentCapabilities")


def answer(message: dict[str, object]) -> dict[str, object] | list[dict[str, object]]:
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        params = InitializeParams.model_validate(message["params"])
        result = InitializeResult(protocol_version=params.protocol_version, agent_capabilities={})
        return {"jsonrpc": "2.0", "id": request_id, "result": result.model_dump(by_alias=True)}
    if method == "session/new":
        return {"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": "floor-1"}}
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    update = {"sessionId": "floor-1", "update": chunk}
    return [
        {"jsonrpc": "2.0", "method": "session/update", "params": update},
        {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}},
    ]


async def serve() -> None:
    while line := sys.stdin.buffer.readline():  # blocking: nothing else runs on this loop
        reply = answer(json.loads(line))
        for message in reply if isinstance(reply, list) else [reply]:
            sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    anyio.run(serve, backend="asyncio")
