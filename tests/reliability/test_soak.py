"""Soak: a long stream of real ACP messages through one connection pair over OS pipes.

A client and an agent connection talk over two pipes (real newline framing, fd
streams). Workers keep a window of ``session/prompt`` requests in flight; the agent
answers each with a ``session/update`` notification and the response; every tenth
turn the client also sends ``session/cancel``. Params and updates are real messages
from the captured transcripts. RSS (``/proc/self/statm``) and live heap blocks
(``sys.getallocatedblocks``, which sees leaks that freed-but-kept RSS can hide) are
sampled as the count grows; their growth after the first tenth (warm-up) must stay small.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from acp_runtime import Connection, ConnectionBuilder, JsonValue, Responder
from tests.runtime.helpers import pipe_transports

from .quiet_logs import runtime_logs_formatted_and_dropped

pytestmark = pytest.mark.anyio

QUICK_MESSAGES = 20_000
SLOW_MESSAGES = 1_000_000
WINDOW = 32
"""Requests in flight at once."""
RSS_GROWTH_LIMIT = 8 * 1024 * 1024
"""After warm-up; a leak of even 10 bytes per message over a million messages exceeds it."""
HEAP_GROWTH_LIMIT_BLOCKS = 2_000
"""After warm-up; a leak of one object per turn exceeds it within 6,000 messages."""

TRANSCRIPT = Path(__file__).parent.parent / "corpus" / "transcripts" / "v1_prompt_streaming.jsonl"


def real_messages() -> tuple[JsonValue, JsonValue]:
    """The params of a real ``session/prompt`` and of a real ``session/update``."""
    prompt = update = None
    for line in TRANSCRIPT.read_text().splitlines():
        message = json.loads(line)["msg"]
        if message.get("method") == "session/prompt":
            prompt = message["params"]
        elif message.get("method") == "session/update":
            update = message["params"]
    assert prompt is not None and update is not None
    return prompt, update


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@asynccontextmanager
async def pipe_pair(
    agent: ConnectionBuilder, client: ConnectionBuilder
) -> AsyncIterator[tuple[Connection, Connection]]:
    """Two connections over two OS pipes (client -> agent, agent -> client)."""
    agent_side, client_side = pipe_transports()
    async with agent.connect(agent_side) as agent_cx, client.connect(client_side) as client_cx:
        yield agent_cx, client_cx


class Soak:
    def __init__(self, total: int) -> None:
        self.total = total
        self.prompt, self.update = real_messages()
        self.messages = 0
        self.cancels_seen = 0
        self.samples: list[tuple[int, int, int]] = []
        self._next_sample = 0

    async def on_prompt(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        responder.connection.send_raw_notification("session/update", self.update)
        return {"stopReason": "end_turn"}

    async def on_agent_notification(self, method: str, params: JsonValue, cx: Connection) -> None:
        self.cancels_seen += method == "session/cancel"

    async def on_client_notification(self, method: str, params: JsonValue, cx: Connection) -> None:
        assert method == "session/update"

    def count(self, messages: int) -> None:
        self.messages += messages
        if self.messages >= self._next_sample:
            gc.collect()
            self.samples.append((self.messages, rss_bytes(), sys.getallocatedblocks()))
            self._next_sample += self.total // 20

    async def worker(self, cx: Connection, session: str) -> None:
        turn = 0
        while self.messages < self.total:
            result = await cx.send_raw_request("session/prompt", self.prompt)
            assert result == {"stopReason": "end_turn"}
            turn += 1
            sent = 3  # request, update, response
            if turn % 10 == 0:
                cx.send_raw_notification("session/cancel", {"sessionId": session})
                sent += 1
            self.count(sent)

    async def run(self) -> None:
        agent = (
            ConnectionBuilder()
            .on_raw_request(self.on_prompt)
            .on_raw_notification(self.on_agent_notification)
        )
        client = ConnectionBuilder().on_raw_notification(self.on_client_notification)
        async with pipe_pair(agent, client) as (agent_cx, client_cx):
            async with anyio.create_task_group() as tg:
                for n in range(WINDOW):
                    tg.start_soon(self.worker, client_cx, f"sess-{n}")
            assert await client_cx.send_raw_request("session/prompt", self.prompt)  # drain
            for cx in (agent_cx, client_cx):
                assert cx.pending_request_count == 0 and cx.incoming_request_count == 0


async def soak(total: int, anyio_backend: str) -> None:
    runner = Soak(total)
    started = time.monotonic()
    with runtime_logs_formatted_and_dropped():
        await runner.run()
    elapsed = time.monotonic() - started
    _, warm, warm_blocks = next(sample for sample in runner.samples if sample[0] >= total // 10)
    peak = max(rss for _, rss, _ in runner.samples)
    _, final, final_blocks = runner.samples[-1]  # the last sample with the connections live
    mib = 1024 * 1024
    print(
        f"\n[soak {anyio_backend}] {runner.messages} messages in {elapsed:.1f} s "
        f"({runner.messages / elapsed:,.0f}/s); RSS after warm-up {warm / mib:.1f} MiB, "
        f"peak {peak / mib:.1f} MiB, end {final / mib:.1f} MiB, "
        f"growth {(final - warm) / mib:+.2f} MiB; live heap blocks {warm_blocks} -> "
        f"{final_blocks} ({final_blocks - warm_blocks:+d})"
    )
    assert runner.cancels_seen > 0
    assert peak - warm < RSS_GROWTH_LIMIT
    assert final_blocks - warm_blocks < HEAP_GROWTH_LIMIT_BLOCKS


async def test_soak(anyio_backend: str) -> None:
    await soak(QUICK_MESSAGES, anyio_backend)


@pytest.mark.slow
async def test_soak_a_million_messages(anyio_backend: str) -> None:
    await soak(SLOW_MESSAGES, anyio_backend)
