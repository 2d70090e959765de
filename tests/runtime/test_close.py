"""Closing: pending requests settle with a connection-closed error, spawned work ends."""

from __future__ import annotations

import gc
import json
import logging
import sys
import threading
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
from acp_runtime.testing import WirePeer, wire_connection
from acp_runtime.transports import MemoryTransport

from .helpers import cancel, request, result

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
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            async with ConnectionBuilder().connect(ours) as cx:
                sent = cx.send_raw_request("never-answered")
                cx.spawn(forever)
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
        with pytest.raises(anyio.EndOfStream):
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


async def test_failing_spawned_work_is_logged_and_the_connection_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One spawned task's failure does not end the connection (issue #15 trap 5)."""

    async def boom() -> None:
        raise ValueError("spawned failure")

    async def answer(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
        return method

    with caplog.at_level(logging.ERROR, logger="acp_runtime"):
        async with wire_connection(ConnectionBuilder().on_raw_request(answer)) as (cx, peer):
            cx.spawn(boom)
            await peer.send(request(1, "still here"))
            with anyio.fail_after(5):
                assert await peer.receive() == result(1, "still here")
    assert any(r.exc_info and "spawned failure" in str(r.exc_info[1]) for r in caplog.records)


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


async def _read_until_eof(transport: MemoryTransport) -> list[Any]:
    """Everything the connection wrote, up to its close."""
    messages: list[Any] = []
    with anyio.fail_after(5):
        while True:
            try:
                messages.append(json.loads(await transport.receive()))
            except anyio.EndOfStream:
                return messages


async def test_gap2_after_eof_cancel_is_quiet_and_writes_nothing_but_the_raw_cancel_does() -> None:
    """OUT-9/GAP-2: after the peer's EOF the pending requests are settled, so ``cancel()`` on
    them (and on their handles) returns quietly and writes nothing; the low-level
    ``send_cancel_request`` still writes until the block ends (no bookkeeping), then raises."""
    ours, theirs = memory_pair()
    async with ConnectionBuilder().connect(ours) as cx:
        sent = cx.send_raw_request("x")
        dropped = cx.send_raw_request("y")
        handle = dropped.cancellation_handle()
        theirs.close_send()
        with anyio.fail_after(5):
            await cx.wait_incoming_closed()
        sent.cancel()
        handle.cancel()
        del dropped  # collected unconsumed, but settled: no automatic cancel either
        gc.collect()
        cx.send_cancel_request("peer-side-id")
    assert await _read_until_eof(theirs) == [
        request(sent.id, "x"),
        request(handle.request_id, "y"),
        cancel("peer-side-id"),
    ]
    with pytest.raises(RequestError) as raised:
        cx.send_cancel_request("peer-side-id")
    assert raised.value.is_connection_closed


async def test_prepared_request_consumed_after_eof_settles_with_connection_closed() -> None:
    """Closing settles requests prepared but not yet published too, as soon as they are
    consumed: awaiting raises, a callback receives the error, nothing reaches the wire."""
    ours, theirs = memory_pair()
    got: list[JsonValue | RequestError] = []
    delivered = anyio.Event()

    async def on_result(value: JsonValue | RequestError) -> None:
        got.append(value)
        delivered.set()

    async with ConnectionBuilder().connect(ours) as cx:
        awaited = cx.prepare_raw_request("awaited")
        called_back = cx.prepare_raw_request("called-back")
        theirs.close_send()
        with anyio.fail_after(5):
            await cx.wait_incoming_closed()
            with pytest.raises(RequestError) as caught:
                await awaited
            called_back.on_receiving_result(on_result)
            await delivered.wait()
    assert caught.value == RequestError.connection_closed("awaited")
    assert got == [RequestError.connection_closed("called-back")]
    assert await _read_until_eof(theirs) == []


async def test_callback_consumers_after_the_connection_finished_are_told_at_once() -> None:
    """Once the ``connect`` block has ended no task can run a result callback, so choosing one
    raises the connection-closed error instead of dropping the callback silently (found by
    this audit: the callback was never called and nothing was raised)."""
    async with wire_connection(ConnectionBuilder()) as (cx, _peer):
        pass

    async def never(value: JsonValue | RequestError) -> None:
        raise AssertionError(f"a callback ran after the connection finished: {value!r}")

    for sent in (cx.send_raw_request("published"), cx.prepare_raw_request("prepared")):
        with pytest.raises(RequestError) as caught:
            sent.on_receiving_result(never)
        assert caught.value == RequestError.connection_closed(sent.method)


async def test_forwarding_to_a_finished_connection_answers_upstream_with_connection_closed() -> (
    None
):
    """IN-6 through a proxy whose downstream connection has finished: the upstream request
    still gets exactly one answer, the connection-closed error."""
    async with wire_connection(ConnectionBuilder()) as (finished, _peer):
        pass

    async def forward(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        finished.send_raw_request(method, params).forward_response_to(responder)

    async with wire_connection(ConnectionBuilder().on_raw_request(forward)) as (_cx, upstream):
        await upstream.send(request("u-1", "work"))
        assert await upstream.receive() == {
            "jsonrpc": "2.0",
            "id": "u-1",
            "error": RequestError.connection_closed("work").to_wire(),
        }
        await upstream.receive_nothing_until_barrier()


async def test_cancelling_the_foreground_closes_cleanly_and_leaves_no_task_behind() -> None:
    """Cancelling the ``connect`` block's foreground while it awaits a request: the awaited
    request is abandoned (one ``$/cancel_request``, OUT-5), the close still flushes it and
    closes the transport, spawned work is cancelled, a callback consumer is settled with
    connection-closed, and no task outlives the block (both backends)."""
    ours, theirs = memory_pair()
    tasks_before = len(anyio.get_running_tasks())
    spawned_ended = anyio.Event()
    outcomes: list[JsonValue | RequestError] = []

    async def forever() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            spawned_ended.set()

    async def on_result(value: JsonValue | RequestError) -> None:
        outcomes.append(value)

    ids: list[int] = []
    with anyio.fail_after(5):
        with anyio.CancelScope() as foreground:
            async with ConnectionBuilder().connect(ours) as cx:
                cx.spawn(forever)
                called_back = cx.send_raw_request("callback")
                called_back.on_receiving_result(on_result)
                sent = cx.send_raw_request("awaited")
                ids += [called_back.id, sent.id]
                foreground.cancel()
                await sent
        assert foreground.cancelled_caught
        assert spawned_ended.is_set()
        assert outcomes == [RequestError.connection_closed("callback")]
        assert len(anyio.get_running_tasks()) == tasks_before
    assert await _read_until_eof(theirs) == [
        request(ids[0], "callback"),
        request(ids[1], "awaited"),
        cancel(ids[1]),
    ]


async def test_a_result_callback_failing_at_close_fails_the_block_promptly(
    anyio_backend: str,
) -> None:
    """A result callback that raises when the close settles its request fails the
    ``connect`` block with that error, and the close still ends the writer instead of
    waiting for it forever (a hang this audit introduced and fixed). The scenario runs on
    its own event loop in a worker thread, so a hang fails this test instead of the run."""

    def scenario() -> BaseException | None:
        async def main() -> None:
            ours, _theirs = memory_pair()

            async def fail(value: JsonValue | RequestError) -> None:
                raise ValueError(f"callback failed on {value!r}")

            async with ConnectionBuilder().connect(ours) as cx:
                cx.send_raw_request("x").on_receiving_result(fail)

        try:
            anyio.run(main, backend=anyio_backend)
        except BaseException as error:  # handed to the test, which checks it
            return error
        return None

    outcome: list[BaseException | None] = []
    done = threading.Event()

    def run() -> None:
        outcome.append(scenario())
        done.set()

    threading.Thread(target=run, daemon=True).start()  # a hung loop dies with the process
    assert await anyio.to_thread.run_sync(done.wait, 10.0), "the connect block hung"
    [error] = outcome
    assert isinstance(error, BaseExceptionGroup)
    failures, _ = error.split(ValueError)
    assert failures is not None and "callback failed" in str(failures.exceptions[0])
