"""A client of the workers through HAProxy: connect, initialize, a session, prompts; and
what it saw (which worker answered, how long each prompt took)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Literal

from acp_generated import v1
from acp_generated.v1 import builders as b
from acp_runtime import Connection, ConnectionBuilder, Transport
from acp_runtime.remote import CookieStore, connect_http, connect_websocket


class Recorder(v1.ClientHandler):
    """Keeps the text of every ``agent_message_chunk`` (``pid <pid>`` from a worker)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, params: v1.SessionNotification, cx: Connection) -> None:
        update = params.update
        if isinstance(update, v1.AgentMessageChunkSessionUpdate) and isinstance(
            update.content, v1.TextContentBlock
        ):
            self.texts.append(update.content.text)


def transport_to(
    url: str, *, cookies: CookieStore | Literal["omit"] | None = None
) -> AbstractAsyncContextManager[Transport]:
    """Streamable HTTP for ``http://`` (with ``cookies``), WebSocket for ``ws://``."""
    if url.startswith("ws"):
        return connect_websocket(url)
    return connect_http(url, cookies=cookies)


@dataclass
class Visit:
    """One client's connection, from ``initialize`` to the close."""

    agent_name: str
    """``agentInfo.name`` of the ``initialize`` answer: ``worker-<pid>``."""
    answers: list[str] = field(default_factory=list[str])
    """The chunks of every prompt, in order: ``pid <pid>`` from ``whoami``/``spin``."""
    setup_ns: int = 0
    """Connect, ``initialize`` and ``session/new``."""
    prompt_ns: list[int] = field(default_factory=list[int])
    """Each prompt, sent to answered."""


async def visit(
    url: str,
    prompts: Sequence[str],
    *,
    cookies: CookieStore | Literal["omit"] | None = None,
    ready: Callable[[], Awaitable[None]] | None = None,
    done: Callable[[], None] | None = None,
) -> Visit:
    """Connect to ``url``, initialize, open a session, await ``ready()``, send ``prompts``
    one after another, call ``done()``, close (the benchmark times the prompts of all its
    clients together with these two)."""
    recorder = Recorder()
    builder = ConnectionBuilder(role="client")
    recorder.attach(builder)
    started = time.perf_counter_ns()
    async with transport_to(url, cookies=cookies) as transport, builder.connect(transport) as cx:
        agent = v1.RemoteAgent(cx)
        init = await agent.initialize(protocol_version=1)
        session_id = (await agent.new_session(cwd="/", mcp_servers=[])).session_id
        name = init.agent_info.name if init.agent_info else ""
        result = Visit(name, recorder.texts, setup_ns=time.perf_counter_ns() - started)
        if ready is not None:
            await ready()
        for text in prompts:
            sent = time.perf_counter_ns()
            await agent.prompt(session_id=session_id, prompt=[b.text(text=text)])
            result.prompt_ns.append(time.perf_counter_ns() - sent)
        if done is not None:
            done()
    return result
