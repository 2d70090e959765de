"""The in-memory transport pair used by tests and in-process wiring."""

from __future__ import annotations

import anyio
import pytest

from acp_runtime import memory_pair

pytestmark = pytest.mark.anyio


async def test_messages_arrive_whole_and_in_order_both_ways() -> None:
    a, b = memory_pair()
    for n in range(3):
        await a.send(f"a{n}".encode())
        await b.send(f"b{n}".encode())
    with anyio.fail_after(5):
        assert [await b.receive() for _ in range(3)] == [b"a0", b"a1", b"a2"]
        assert [await a.receive() for _ in range(3)] == [b"b0", b"b1", b"b2"]


async def test_close_send_is_a_half_close() -> None:
    a, b = memory_pair()
    await a.send(b"last")
    a.close_send()
    with anyio.fail_after(5):
        assert await b.receive() == b"last"
        with pytest.raises(anyio.EndOfStream):
            await b.receive()
        await b.send(b"still open the other way")
        assert await a.receive() == b"still open the other way"


async def test_sending_to_a_closed_peer_is_a_broken_resource() -> None:
    a, b = memory_pair()
    await b.aclose()
    with pytest.raises(anyio.BrokenResourceError):
        await a.send(b"x")
    with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
        await a.receive()
    await a.aclose()
    await a.aclose()  # idempotent
