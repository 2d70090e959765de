"""Peer faults over real pipes: a misbehaving agent process (:mod:`.raw_agent`).

In every fault the client has requests pending and spawned handler work running. Each
test checks that the pending requests settle with a connection-closed error within a
bound, the spawned work is cancelled when the connection block ends, and the tasks and
file descriptors counted before are all that is left after.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from acp_runtime import (
    AgentProcess,
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestError,
    Responder,
    SentRequest,
    spawn_agent,
)
from acp_runtime import _connection as connection_module

from .leaks import live_tasks, open_fds

pytestmark = pytest.mark.anyio

RAW_AGENT = Path(__file__).with_name("raw_agent.py")
SETTLE_BOUND = 2.0
"""Seconds from the fault to every pending request settled."""


class Client:
    """A client whose ``client/work`` handler spawns work that runs until cancelled."""

    def __init__(self) -> None:
        self.work_started = anyio.Event()
        self.work_cancelled = False
        self.notifications: dict[str, anyio.Event] = {}

    def seen(self, method: str) -> anyio.Event:
        return self.notifications.setdefault(method, anyio.Event())

    async def on_request(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        async def work() -> None:
            self.work_started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.work_cancelled = True

        responder.connection.spawn(work)
        return None

    async def on_notification(self, method: str, params: JsonValue, cx: Connection) -> None:
        self.seen(method).set()

    def builder(self) -> ConnectionBuilder:
        return (
            ConnectionBuilder()
            .on_raw_request(self.on_request)
            .on_raw_notification(self.on_notification)
        )


@asynccontextmanager
async def agent(mode: str) -> AsyncIterator[AgentProcess]:
    command = [sys.executable, str(RAW_AGENT), mode]
    async with spawn_agent(
        command, stderr="discard", exit_timeout=0.5, terminate_timeout=0.5
    ) as process:
        yield process
    assert process.returncode is not None


async def settle_all(requests: list[SentRequest[JsonValue]]) -> list[RequestError]:
    """Await every request; each must fail with connection-closed."""
    errors: list[RequestError] = []

    async def one(request: SentRequest[JsonValue]) -> None:
        with pytest.raises(RequestError) as failure:
            await request
        errors.append(failure.value)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for request in requests:
                tg.start_soon(one, request)
    assert all(error.is_connection_closed for error in errors), errors
    return errors


@asynccontextmanager
async def no_leaks() -> AsyncIterator[None]:
    tasks, fds = live_tasks(), open_fds()
    yield
    for _ in range(3):  # let finished tasks be reaped
        await anyio.lowlevel.checkpoint()
    assert (live_tasks(), open_fds()) == (tasks, fds)


async def fault_then_settle(mode: str, fault: str, count: int = 5) -> float:
    """Open the agent in ``mode``, send ``count`` requests, wait for ``fault`` (a
    notification from the agent), and return how long settling took after it."""
    client = Client()
    async with no_leaks():
        async with agent(mode) as process, client.builder().connect(process) as cx:
            with anyio.fail_after(5):
                await client.work_started.wait()
            requests = [cx.send_raw_request("session/prompt", {"n": n}) for n in range(count)]
            if fault in ("kill", "eof-to-agent"):
                with anyio.fail_after(5):
                    await client.seen("turn/started").wait()
            if fault == "kill":
                os.kill(process.pid, signal.SIGKILL)
            elif fault == "eof-to-agent":
                await process.send_eof()  # the agent exits at EOF, its turns unanswered
            started = time.monotonic()
            await settle_all(requests)
            elapsed = time.monotonic() - started
            assert cx.pending_request_count == 0
        assert client.work_cancelled
    print(f"\n[peer fault {mode}/{fault}] {count} pending settled in {elapsed * 1000:.0f} ms")
    assert elapsed < SETTLE_BOUND
    return elapsed


async def test_agent_killed_mid_turn() -> None:
    await fault_then_settle("kill-me", "kill")


async def test_client_closes_the_agents_stdin_while_requests_are_pending() -> None:
    await fault_then_settle("kill-me", "eof-to-agent")


async def test_agent_closes_stdout_mid_line() -> None:
    await fault_then_settle("half-line", "eof")


async def test_agent_closes_stdin_while_requests_are_pending() -> None:
    client = Client()
    async with no_leaks():
        async with agent("close-stdin") as process, client.builder().connect(process) as cx:
            with anyio.fail_after(5):
                await client.work_started.wait()
            first = cx.send_raw_request("session/prompt", {"n": 0})
            with anyio.fail_after(5):
                await client.seen("stdin/closed").wait()
            started = time.monotonic()
            later = [cx.send_raw_request("session/prompt", {"n": n}) for n in range(1, 5)]
            await settle_all([first, *later])
            elapsed = time.monotonic() - started
        assert client.work_cancelled
    print(f"\n[peer fault close-stdin] 5 pending settled in {elapsed * 1000:.0f} ms")
    assert elapsed < SETTLE_BOUND


async def test_agent_stops_reading_and_the_close_is_still_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Backpressure: our writes fill the pipe and block; incoming messages are still
    dispatched, and leaving the block settles everything within the flush timeout plus
    the agent's shutdown steps."""
    flush_timeout = 0.5
    monkeypatch.setattr(connection_module, "CLOSE_TIMEOUT", flush_timeout)
    client = Client()
    async with no_leaks():
        async with agent("no-read") as process:
            async with client.builder().connect(process) as cx:
                with anyio.fail_after(5):
                    await client.work_started.wait()
                    await client.seen("ready").wait()
                blob = "x" * 16 * 1024
                requests = [cx.send_raw_request("bulk", {"blob": blob}) for _ in range(64)]  # 1 MiB
                os.kill(process.pid, signal.SIGUSR1)
                with anyio.fail_after(5):
                    await client.seen("late").wait()  # the reader runs while the writer is stuck
                started = time.monotonic()
            await settle_all(requests)
        elapsed = time.monotonic() - started
        assert client.work_cancelled
    print(
        f"\n[peer fault no-read] 64 pending (1 MiB unsent) settled, agent reaped in {elapsed:.2f} s"
    )
    assert elapsed < flush_timeout + 2 * 0.5 + SETTLE_BOUND
