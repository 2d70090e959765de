"""``Connection.wait_incoming_answered``: what ``run_agent`` waits on after stdin closes."""

from __future__ import annotations

import anyio
import pytest

from acp_runtime import ConnectionBuilder, JsonValue, Responder
from acp_runtime.testing import request, result, wire_connection

pytestmark = pytest.mark.anyio


async def test_returns_once_every_incoming_request_is_answered() -> None:
    parked: list[Responder[JsonValue]] = []

    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        parked.append(responder)

    async with wire_connection(ConnectionBuilder().on_raw_request(park)) as (cx, peer):
        await cx.wait_incoming_answered()  # nothing in flight: at once
        await peer.send(request(1, "a"))
        await peer.send(request(2, "b"))
        await peer.receive_nothing_until_barrier()
        waited = anyio.Event()

        async def wait() -> None:
            await cx.wait_incoming_answered()
            waited.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            parked[0].respond("one")
            assert await peer.receive() == result(1, "one")
            assert not waited.is_set()
            parked[1].respond("two")
            with anyio.fail_after(5):
                await waited.wait()
        assert await peer.receive() == result(2, "two")
