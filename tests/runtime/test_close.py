"""Closing: pending requests settle with a connection-closed error, spawned work ends."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from acp_runtime import (
    ConnectionBuilder,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    memory_pair,
)
from acp_runtime.memory import MemoryTransport
from acp_runtime.testing import WirePeer, wire_connection

from .helpers import request, result

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found, unused-ignore]

pytestmark = pytest.mark.anyio


async def test_peer_eof_settles_every_pending_request_with_connection_closed() -> None:
    """OUT-7 local failure: EOF settles awaiters and callbacks, then cancel is disarmed."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        first = cx.send_raw_request("a")
        second = cx.send_raw_request("b")
        third = cx.send_raw_request("c")
        got: list[Any] = []

        async def on_result(value: JsonValue | RequestError) -> None:
            got.append(value)

        third.on_receiving_result(on_result)
        for _ in range(3):
            await peer.receive()
        peer.close()
        with anyio.fail_after(5):
            await cx.wait_incoming_closed()
            for sent, method in ((first, "a"), (second, "b")):
                with pytest.raises(RequestError) as caught:
                    await sent
                assert caught.value.is_connection_closed
                assert caught.value.code == ErrorCode.INTERNAL_ERROR
                assert caught.value.data == {"reason": "connection_closed", "method": method}
        assert got == [RequestError.connection_closed("c")]
        assert cx.pending_request_count == 0
        first.cancel()  # settled: a quiet no-op


async def test_requests_after_close_fail_at_once_without_touching_the_wire() -> None:
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        peer.close()
        with anyio.fail_after(5):
            await cx.wait_incoming_closed()
        sent = cx.send_raw_request("late")
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await sent
        assert caught.value.is_connection_closed
        sent.cancel()


async def test_leaving_the_connect_block_settles_pending_and_cancels_spawned_work() -> None:
    ended = anyio.Event()
    started = anyio.Event()

    async def forever() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.set()

    outcome: list[Any] = []
    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    async with anyio.create_task_group() as tg:
        async with ConnectionBuilder().connect(ours) as cx:
            sent = cx.send_raw_request("never-answered")
            cx.spawn(forever)
            with anyio.fail_after(5):
                await started.wait()

            async def wait_for_it() -> None:
                try:
                    await sent
                except RequestError as error:
                    outcome.append(error)

            tg.start_soon(wait_for_it)
            await peer.receive()
        assert ended.is_set()
    assert outcome == [RequestError.connection_closed("never-answered")]
    with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
        await theirs.receive()  # the transport was closed


async def test_serve_returns_after_peer_eof_and_flushes_queued_answers() -> None:
    async def answer(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        return method

    ours, theirs = memory_pair()
    peer = WirePeer(theirs)
    await peer.send(request(1, "one"))
    await peer.send(request(2, "two"))
    peer.close()
    with anyio.fail_after(5):
        await ConnectionBuilder().on_raw_request(answer).serve(ours)
    assert [await peer.receive(), await peer.receive()] == [result(1, "one"), result(2, "two")]


async def test_failing_spawned_work_fails_the_connection() -> None:
    async def boom() -> None:
        raise ValueError("spawned failure")

    with pytest.raises(BaseExceptionGroup) as caught:
        async with wire_connection(ConnectionBuilder()) as (cx, _peer):
            cx.spawn(boom)
            await anyio.sleep_forever()
    assert caught.group_contains(ValueError, match="spawned failure")


async def test_send_notification_after_close_raises_connection_closed() -> None:
    async with wire_connection(ConnectionBuilder()) as (cx, _peer):
        pass
    with pytest.raises(RequestError) as caught:
        cx.send_raw_notification("x")
    assert caught.value.is_connection_closed


class _BrokenWrites:
    """Reads normally, but every write fails as if the peer's read end were gone."""

    def __init__(self, inner: MemoryTransport) -> None:
        self._inner = inner

    async def receive(self) -> bytes:
        return await self._inner.receive()

    async def send(self, message: bytes) -> None:
        raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_writer_failure_ends_the_connection_and_settles_requests() -> None:
    ours, _theirs = memory_pair()
    async with ConnectionBuilder().connect(_BrokenWrites(ours)) as cx:
        sent = cx.send_raw_request("x")  # its write breaks
        with anyio.fail_after(5):
            await cx.wait_incoming_closed()
            with pytest.raises(RequestError) as caught:
                await sent
        assert caught.value.is_connection_closed
        assert isinstance(cx.transport_error, anyio.BrokenResourceError)
        with pytest.raises(RequestError):
            cx.send_raw_notification("after")  # nothing accepts messages any more


async def test_clean_eof_leaves_no_transport_error() -> None:
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        peer.close()
        with anyio.fail_after(5):
            await cx.wait_incoming_closed()
        assert cx.transport_error is None
