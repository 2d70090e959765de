"""Benchmark agent on the PyPI package ``agent-client-protocol`` (module ``acp``), over stdio.

Same command language as ``this_agent.py`` (see its docstring), except for
``wait-cancel``: the package has no request cancellation (``$/cancel_request`` is not
implemented), so the turn waits for ``session/cancel`` and answers ``stopReason:
cancelled`` with ``_meta.observedNs``.
"""

from __future__ import annotations

import asyncio
import re
import resource
import time
from typing import Any

from acp import run_agent
from acp.helpers import update_agent_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    TextContentBlock,
)

_CHUNKS = re.compile(r"chunks (\d+) size (\d+)")


class BenchAgent:
    def __init__(self) -> None:
        self._client: Client | None = None
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="bench-1")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        assert self._client is not None
        text = "".join(b.text for b in prompt if isinstance(b, TextContentBlock)).strip()
        if text == "wait-cancel":
            cancelled = self._cancelled[session_id] = asyncio.Event()
            await self._client.session_update(session_id, update_agent_message_text("ready"))
            await cancelled.wait()
            observed = time.perf_counter_ns()
            return PromptResponse(stop_reason="cancelled", field_meta={"observedNs": observed})
        if m := _CHUNKS.fullmatch(text):
            piece = "x" * int(m[2])
            for _ in range(int(m[1])):
                await self._client.session_update(session_id, update_agent_message_text(piece))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        event = self._cancelled.pop(session_id, None)
        if event is not None:
            event.set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "echo/ping":
            return {"pong": params}
        if method == "bench/stats":
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return {"maxRssKb": rss, "cpuNs": time.process_time_ns()}
        raise ValueError(f"unknown extension method {method}")


if __name__ == "__main__":
    asyncio.run(run_agent(BenchAgent()))  # type: ignore[arg-type]  # only what the bench calls
