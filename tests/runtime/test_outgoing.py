"""Outgoing requests: publication, settlement and cancellation (DESIGN.md OUT-1..OUT-11)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import anyio
import pytest

from acp_runtime import ConnectionBuilder, ErrorCode, JsonValue, RequestError, Responder
from acp_runtime.testing import wire_connection

from .helpers import ASK, CANCEL, Answer, Ask, cancel, error, request, result

pytestmark = pytest.mark.anyio


async def test_out1_send_request_publishes_at_once_and_await_yields_typed_result() -> None:
    """OUT-1: the request is on the wire before anyone awaits it; awaiting decodes it."""
    async with wire_connection(ConnectionBuilder("client")) as (cx, peer):
        sent = cx.send_request(Ask(question="why"))
        assert await peer.receive() == request(sent.id, "test/ask", {"question": "why"})
        await peer.send(result(sent.id, {"text": "because"}))
        with anyio.fail_after(5):
            answer = await sent
        assert answer == Answer(text="because")


async def test_out1_method_and_params_form_and_peer_error_is_raised() -> None:
    """OUT-1: ``send_request(METHOD, params)``; the peer's error is raised verbatim."""
    async with wire_connection(ConnectionBuilder("client")) as (cx, peer):
        sent = cx.send_request(ASK, Ask(question="q"))
        await peer.receive()
        await peer.send(error(sent.id, -32000, "Authentication required", {"why": 1}))
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await sent
        assert caught.value == RequestError(-32000, "Authentication required", {"why": 1})


async def test_out2_out3_cancel_sends_cancel_request_and_caller_gets_the_real_answer() -> None:
    """OUT-2: cancel goes to the same peer; OUT-3: the caller still gets the peer's answer."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("slow")
        await peer.receive()
        sent.cancel()
        assert await peer.receive() == cancel(sent.id)
        await peer.send(error(sent.id, -32800, "Request cancelled"))
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await sent
        assert caught.value.code == ErrorCode.REQUEST_CANCELLED


async def test_out2_cancel_uses_the_peer_wrapping_of_send_request_to() -> None:
    """OUT-2: a request sent through a wrapping peer is cancelled through the same wrapping."""
    from acp_runtime import Peer

    class Successor(Peer):
        name = "successor"

        def wrap(self, method: str, params: JsonValue) -> tuple[str, JsonValue]:
            inner: dict[str, JsonValue] = {"method": method}
            if params is not None:
                inner["params"] = params
            return "_proxy/successor", inner

    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_request_to(Successor(), ASK, Ask(question="q"))
        assert await peer.receive() == request(
            sent.id, "_proxy/successor", {"method": "test/ask", "params": {"question": "q"}}
        )
        sent.cancel()
        wrapped = await peer.receive()
        assert wrapped["params"] == {"method": "$/cancel_request", "params": {"requestId": sent.id}}
        await peer.send(result(sent.id, {"text": "done anyway"}))
        with anyio.fail_after(5):
            assert await sent == Answer(text="done anyway")


async def test_out3_out11_cancel_raced_by_data_still_delivers_the_data() -> None:
    """OUT-3/OUT-11 (race, cancel first): one cancel on the wire, the consumer gets the data."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        sent.cancel()
        await peer.send(result(sent.id, "data"))  # the peer answered before reading the cancel
        assert await peer.receive() == cancel(sent.id)
        with anyio.fail_after(5):
            assert await sent == "data"
        await peer.receive_nothing_until_barrier()


async def test_out7_response_routed_first_makes_cancel_a_no_op() -> None:
    """OUT-7 (race, response first): once routed, cancel sends nothing and the data stays."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        await peer.send(result(sent.id, 1))
        await peer.barrier()  # the response has been routed, nobody consumed it yet
        sent.cancel()
        handle = sent.cancellation_handle()
        handle.cancel()
        await peer.receive_nothing_until_barrier()
        with anyio.fail_after(5):
            assert await sent == 1


async def test_out4_cancel_is_once_only_across_handles_and_duplicates() -> None:
    """OUT-4: SentRequest, cloned handles and automatic cancellation share one flag."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        handles = [sent.cancellation_handle() for _ in range(3)]
        handles[0].cancel()
        sent.cancel()
        for handle in handles:
            handle.cancel()
        assert await peer.receive() == cancel(sent.id)
        await peer.receive_nothing_until_barrier()
        del sent  # automatic cancellation on collection shares the spent flag
        gc.collect()
        await peer.receive_nothing_until_barrier()


async def test_out4_many_tasks_cancelling_at_once_send_one_cancel() -> None:
    """OUT-4: concurrent cancel() from many tasks: one notification (with a forwarded source
    and a drop in the race too: the GAP-4 test below)."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        handle = sent.cancellation_handle()
        go = anyio.Event()

        async def cancel_when_told() -> None:
            await go.wait()
            handle.cancel()

        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(cancel_when_told)
            await anyio.lowlevel.checkpoint()
            go.set()
        assert await peer.receive() == cancel(sent.id)
        await peer.receive_nothing_until_barrier()
        sent.detach()


async def test_out5_abandoned_await_sends_exactly_one_cancel() -> None:
    """OUT-5: cancelling the task awaiting the request sends ``$/cancel_request`` once."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        with anyio.CancelScope() as scope:

            async def give_up_soon() -> None:
                await peer.barrier()  # the awaiter is parked by now
                scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(give_up_soon)
                await sent
        assert scope.cancelled_caught
        assert await peer.receive() == cancel(sent.id)
        await peer.send(result(sent.id, "late"))  # late answer is discarded quietly
        await peer.receive_nothing_until_barrier()
        assert cx.pending_request_count == 0


async def test_out5_unconsumed_sent_request_collected_sends_one_cancel() -> None:
    """OUT-5: an unconsumed SentRequest garbage-collected while pending cancels once."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        request_id = cx.send_raw_request("x").id  # the handle is dropped right away
        gc.collect()
        assert await peer.receive() == request(request_id, "x")
        assert await peer.receive() == cancel(request_id)
        await peer.receive_nothing_until_barrier()


async def test_out5_collected_after_response_routed_sends_nothing() -> None:
    """OUT-5 with OUT-7: a handle collected after its response was routed sends nothing."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        await peer.send(result(sent.id, None))
        await peer.barrier()
        del sent
        gc.collect()
        await peer.receive_nothing_until_barrier()


async def test_out6_detach_discards_the_answer_and_sends_no_automatic_cancel() -> None:
    """OUT-6: detached requests are not cancelled on collection; the answer is discarded."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        request_id = sent.id
        await peer.receive()
        sent.detach()
        del sent
        gc.collect()
        await peer.receive_nothing_until_barrier()
        await peer.send(result(request_id, "ignored"))
        await peer.receive_nothing_until_barrier()
        assert cx.pending_request_count == 0


async def test_out6_retained_handle_can_cancel_a_detached_request() -> None:
    """OUT-6: a handle kept before detaching can still cancel while pending."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        handle = sent.cancellation_handle()
        await peer.receive()
        sent.detach()
        handle.cancel()
        assert await peer.receive() == cancel(handle.request_id)


async def test_out8_prepare_request_does_not_publish_and_early_cancel_is_not_remembered() -> None:
    """OUT-8: prepared requests are not on the wire; cancel before publication is a no-op."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        prepared = cx.prepare_raw_request("x")
        handle = prepared.cancellation_handle()
        handle.cancel()
        prepared.cancel()
        await peer.receive_nothing_until_barrier()
        assert not prepared.is_published
        results: list[Any] = []
        done = anyio.Event()

        async def on_result(value: JsonValue | RequestError) -> None:
            results.append(value)
            done.set()

        prepared.on_receiving_result(on_result)  # publishes
        assert await peer.receive() == request(prepared.id, "x")
        await peer.receive_nothing_until_barrier()  # the early cancel was not remembered
        handle.cancel()  # now it is published: the same handle works
        assert await peer.receive() == cancel(prepared.id)
        await peer.send(result(prepared.id, "ok"))
        with anyio.fail_after(5):
            await done.wait()
        assert results == ["ok"]


async def test_out8_unpublished_prepared_request_collected_sends_nothing() -> None:
    """OUT-8: dropping a prepared, never-published request puts nothing on the wire."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        cx.prepare_raw_request("x")
        gc.collect()
        await peer.receive_nothing_until_barrier()


async def test_out8_awaiting_a_prepared_request_publishes_it() -> None:
    """OUT-8: awaiting is a publishing method."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        prepared = cx.prepare_raw_request("x", {"k": 1})
        async with anyio.create_task_group() as tg:

            async def answer() -> None:
                assert await peer.receive() == request(prepared.id, "x", {"k": 1})
                await peer.send(result(prepared.id, 7))

            tg.start_soon(answer)
            with anyio.fail_after(5):
                assert await prepared == 7


async def test_out9_cancel_after_close_is_a_quiet_no_op_but_raw_cancel_raises() -> None:
    """OUT-9: cancel() never raises for a settled request; the low-level send raises with a
    code when it cannot even try (connection closed)."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        peer.close()
        with anyio.fail_after(5):
            await cx.wait_incoming_closed()
        sent.cancel()  # settled by the close: nothing to do
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await sent
        assert caught.value.is_connection_closed
    with pytest.raises(RequestError) as raised:
        cx.send_cancel_request(sent.id)
    assert raised.value.code == ErrorCode.INTERNAL_ERROR


async def test_out9_cancel_raises_with_code_when_the_outbox_is_gone_but_request_unsettled() -> None:
    """OUT-9: the only raising path of SentRequest.cancel: armed, but nowhere to send."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        cx._outbox.close()  # simulate the writer dying before the close settles requests
        with pytest.raises(RequestError) as raised:
            sent.cancel()
        assert raised.value.code == ErrorCode.INTERNAL_ERROR
        sent.cancel()  # the flag is spent: no retry, no second error


async def test_out10_dropping_a_cancellation_handle_does_nothing() -> None:
    """OUT-10: handles are inert when dropped and do not keep the consumer alive."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        for _ in range(3):
            sent.cancellation_handle()
        gc.collect()
        await peer.receive_nothing_until_barrier()
        await peer.send(result(sent.id, "fine"))
        with anyio.fail_after(5):
            assert await sent == "fine"


async def test_out11_cancel_after_callback_selected_still_delivers_to_the_callback() -> None:
    """OUT-11: explicit cancellation never discards the response for the chosen callback."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        handle = sent.cancellation_handle()
        got: list[Any] = []
        done = anyio.Event()

        async def on_result(value: JsonValue | RequestError) -> None:
            got.append(value)
            done.set()

        sent.on_receiving_result(on_result)
        await peer.receive()
        handle.cancel()
        assert await peer.receive() == cancel(sent.id)
        await peer.send(error(sent.id, -32800, "Request cancelled"))
        with anyio.fail_after(5):
            await done.wait()
        assert got == [RequestError.request_cancelled()]


async def test_out7_callback_sees_disarmed_request_while_it_runs() -> None:
    """OUT-7: cancellation is disarmed before the result callback runs."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        handle = sent.cancellation_handle()
        done = anyio.Event()

        async def on_result(value: JsonValue | RequestError) -> None:
            handle.cancel()  # too late: must send nothing
            done.set()

        sent.on_receiving_result(on_result)
        await peer.receive()
        await peer.send(result(sent.id, 1))
        with anyio.fail_after(5):
            await done.wait()
        await peer.receive_nothing_until_barrier()


async def test_out1_typed_result_that_does_not_validate_is_a_local_parse_error() -> None:
    """OUT-1: a result that does not match the typed result model raises the local
    invalid-result error: -32603, never -32700 (JSON-RPC's code for text that is not
    JSON), naming the method and the failing path."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_request(Ask(question="q"))
        await peer.receive()
        await peer.send(result(sent.id, {"nope": 1}))
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await sent
        assert caught.value.code == ErrorCode.INTERNAL_ERROR != ErrorCode.PARSE_ERROR
        assert caught.value.is_invalid_result and not caught.value.is_connection_closed
        assert caught.value.message == "Invalid result for test/ask at text"
        assert isinstance(caught.value.data, dict)
        assert caught.value.data["method"] == "test/ask"
        assert caught.value.data["errors"] == [
            {"loc": ["text"], "msg": "Field required", "type": "missing"}
        ]


@pytest.mark.parametrize("count", [300, pytest.param(3000, marks=pytest.mark.slow)])
async def test_out_cancel_storm_each_cancel_follows_its_request_and_answers_are_not_crossed(
    count: int,
) -> None:
    """OUT-2/OUT-3/OUT-4 at scale: every request cancelled in order, answered in reverse."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = [cx.send_raw_request("x", {"n": n}) for n in range(count)]
        for request_ in sent:
            request_.cancel()
        seen: list[Any] = [await peer.receive() for _ in range(2 * count)]
        request_at = {m["id"]: i for i, m in enumerate(seen) if m.get("method") == "x"}
        cancels = [
            (i, m["params"]["requestId"]) for i, m in enumerate(seen) if m["method"] == CANCEL
        ]
        assert [request_id for _, request_id in cancels] == [r.id for r in sent]
        assert all(request_at[request_id] < i for i, request_id in cancels)
        for request_ in reversed(sent):
            await peer.send(result(request_.id, request_.id))
        with anyio.fail_after(5):
            for request_ in sent:
                assert await request_ == request_.id
        assert cx.pending_request_count == 0


async def test_out1_a_request_is_consumed_once() -> None:
    """OUT-1: awaiting, callbacks, forwarding and detach each consume; a second is an error."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.send(result(sent.id, 1))
        with anyio.fail_after(5):
            assert await sent == 1
        with pytest.raises(RuntimeError, match="already consumed"):
            await sent
        with pytest.raises(RuntimeError, match="already consumed"):
            sent.detach()


async def test_out3_gap21_peers_own_32800_without_a_cancel_is_delivered_verbatim() -> None:
    """OUT-3/GAP-21: a -32800 the peer sends on its own (no cancel from us) is just the
    peer's answer: raised as it came, and nothing is sent in return."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        await peer.send(error(sent.id, -32800, "Request cancelled", {"by": "peer"}))
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await sent
        assert caught.value == RequestError(-32800, "Request cancelled", {"by": "peer"})
        sent.cancel()  # settled: nothing to do
        await peer.receive_nothing_until_barrier()


async def test_out3_gap26_cancelled_request_whose_answer_fails_to_decode_cancels_once() -> None:
    """OUT-3/OUT-4 (GAP-26): after a cancel, an answer that does not match the typed result
    becomes the local invalid-result error (-32603); no second cancel goes out."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_request(Ask(question="q"))
        await peer.receive()
        sent.cancel()
        assert await peer.receive() == cancel(sent.id)
        await peer.send(result(sent.id, {"not": "an answer"}))
        with anyio.fail_after(5), pytest.raises(RequestError) as caught:
            await sent
        assert caught.value.code == ErrorCode.INTERNAL_ERROR and caught.value.is_invalid_result
        sent.cancel()
        await peer.receive_nothing_until_barrier()


async def test_out8_gap3_prepared_request_that_cannot_be_encoded_is_never_cancellable() -> None:
    """OUT-8 (GAP-3c): a prepared request whose params cannot be encoded fails when it is
    published; its handle's cancel stays a no-op and nothing reaches the wire."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        prepared = cx.prepare_raw_request("x", {"not json": {1, 2}})
        handle = prepared.cancellation_handle()

        async def never(value: JsonValue | RequestError) -> None:
            raise AssertionError(value)

        with pytest.raises(TypeError):
            prepared.on_receiving_result(never)
        handle.cancel()
        del prepared
        gc.collect()
        assert cx.pending_request_count == 0
        await peer.receive_nothing_until_barrier()


async def test_out4_gap4_tasks_a_forwarded_source_and_a_drop_racing_send_one_cancel() -> None:
    """OUT-4 (GAP-4): many tasks cancelling through handles while a forwarded source marker
    fires, then the handle is dropped: one notification, and the callback still gets the
    answer (OUT-11)."""
    parked: list[Responder[JsonValue]] = []

    async def park(method: str, params: JsonValue, responder: Responder[JsonValue]) -> None:
        parked.append(responder)

    async with wire_connection(ConnectionBuilder().on_raw_request(park)) as (cx, peer):
        await peer.send(request("upstream", "incoming"))
        await peer.barrier()
        sent = cx.send_raw_request("x")
        request_id = sent.id
        await peer.receive()
        handle = sent.cancellation_handle()
        got: list[JsonValue | RequestError] = []

        async def on_result(value: JsonValue | RequestError) -> None:
            got.append(value)

        sent.forward_cancellation_from(parked[0].cancellation).on_receiving_result(on_result)
        go = anyio.Event()

        async def cancel_when_told() -> None:
            await go.wait()
            handle.cancel()

        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(cancel_when_told)
            await peer.send(cancel("upstream"))  # fires the forwarded source
            await anyio.lowlevel.checkpoint()
            go.set()
        del sent
        gc.collect()
        assert await peer.receive() == cancel(request_id)
        await peer.receive_nothing_until_barrier()
        await peer.send(result(request_id, "anyway"))
        await peer.receive_nothing_until_barrier()
        assert got == ["anyway"]
        parked[0].respond(None)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_out5_gap17_asyncio_task_cancel_of_an_awaiting_task_sends_one_cancel() -> None:
    """OUT-5 (GAP-17): plain ``asyncio`` cancellation (``Task.cancel()``, what
    ``asyncio.wait_for`` and ``asyncio.timeout`` do) of a task awaiting a request abandons
    it exactly like an anyio cancel scope."""
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        sent = cx.send_raw_request("x")
        await peer.receive()
        task = asyncio.ensure_future(sent)
        await peer.barrier()  # the task is parked in the await
        task.cancel()
        with anyio.fail_after(5), pytest.raises(asyncio.CancelledError):
            await task
        assert await peer.receive() == cancel(sent.id)
        await peer.send(result(sent.id, "late"))
        await peer.receive_nothing_until_barrier()
        assert cx.pending_request_count == 0
