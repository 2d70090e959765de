"""One-call runners: an agent on stdio, and a client that spawns its agent.

What every stdio agent needs and easily gets wrong is here once: logging to stderr through
the handler that never blocks the protocol, the turns still in flight answered when stdin
closes, and a quiet exit with status 0 on SIGINT or SIGTERM (no traceback), with the
connection closed properly so the editor sees every pending answer.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Literal, Protocol

import anyio

from ._builder import ConnectionBuilder
from ._connection import Connection
from ._framing import DEFAULT_MAX_MESSAGE_BYTES
from ._outbox import DEFAULT_HIGH_WATER_BYTES
from ._stderr_log import log_nothing, log_to_stderr
from ._stdio import stdio_transport

if TYPE_CHECKING:  # an agent never spawns one: the client's runner imports it when it does
    from ._process import Command, StderrHandling

log = logging.getLogger(__name__)

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Attachable(Protocol):
    """A handler that registers itself on a builder: the generated ``AgentHandler`` /
    ``ClientHandler`` subclasses."""

    def attach(self, builder: ConnectionBuilder) -> None: ...


def run_agent(
    handler: Attachable,
    *,
    backend: Literal["asyncio", "trio"] = "asyncio",
    log_level: int | None = logging.WARNING,
    log_format: str = "%(levelname)s %(name)s: %(message)s",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    high_water_bytes: int = DEFAULT_HIGH_WATER_BYTES,
) -> int:
    """Serve ``handler`` as an agent on this process's stdin/stdout until the editor
    closes stdin or a stop signal arrives; returns the exit status (0).

    ``log_level=None`` writes nothing at all to stderr. Use it as
    ``sys.exit(run_agent(MyAgent()))``.
    """
    if log_level is None:
        log_nothing()
    else:
        log_to_stderr(log_level, fmt=log_format)
    try:
        anyio.run(
            serve_agent,
            handler,
            max_message_bytes,
            high_water_bytes,
            backend=backend,
        )
    except KeyboardInterrupt:  # SIGINT while starting up, before the receiver is in place
        pass
    return 0


async def serve_agent(
    handler: Attachable,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    high_water_bytes: int = DEFAULT_HIGH_WATER_BYTES,
) -> None:
    """The async body of :func:`run_agent` (no logging set-up), for an event loop you run."""
    builder = ConnectionBuilder(role="agent", high_water_bytes=high_water_bytes)
    handler.attach(builder)
    transport = stdio_transport(max_message_bytes=max_message_bytes)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signal, tg.cancel_scope)
        async with builder.connect(transport) as cx:
            await cx.wait_incoming_closed()
            await cx.wait_incoming_answered()  # the turns in flight are answered first
        log.info("stdin closed; exiting")
        tg.cancel_scope.cancel()


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    """A stop signal closes the connection (pending requests settle, queued answers are
    flushed) instead of raising ``KeyboardInterrupt`` through the event loop."""
    if sys.platform == "win32":  # pragma: no cover - no signal receivers there
        return
    with anyio.open_signal_receiver(*_STOP_SIGNALS) as signals:
        async for signum in signals:
            log.info("interrupted (%s); exiting", signal.Signals(signum).name)
            scope.cancel()
            return


@asynccontextmanager
async def connect_to_agent(
    command: Command,
    handler: Attachable | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stderr: StderrHandling = "inherit",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    high_water_bytes: int = DEFAULT_HIGH_WATER_BYTES,
) -> AsyncGenerator[Connection, None]:
    """Spawn the agent ``command`` and yield a client connection to it.

    ``handler`` (a ``ClientHandler`` subclass) answers what the agent asks (permissions,
    files). Leaving the block closes the agent's stdin, waits for it to exit, and
    settles whatever is still pending. Wrap the connection in the version's facade
    (``acp_generated.v1.RemoteAgent(cx)``) for typed calls.
    """
    builder = ConnectionBuilder(role="client", high_water_bytes=high_water_bytes)
    if handler is not None:
        handler.attach(builder)
    from ._process import spawn_agent

    process = spawn_agent(
        command, cwd=cwd, env=env, stderr=stderr, max_message_bytes=max_message_bytes
    )
    async with process as transport, builder.connect(transport) as cx:
        yield cx
