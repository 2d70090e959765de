"""A hypothesis state machine over the outgoing-request lifecycle (OUT-3, OUT-4, OUT-5,
OUT-6, OUT-7, OUT-8).

Requests are created (published or prepared), consumed (awaited, callback, detached),
cancelled (directly or through a handle), answered, abandoned (awaiting task cancelled),
dropped (garbage-collected) and the connection closed, in random order. The records run
against a recording link instead of a transport, on a real asyncio loop that the test
steps synchronously (``run_until_complete`` per rule; awaiting tasks persist between
steps), so every run is deterministic and no thread hand-off is involved.

Checked after every step and at the end:
* at most one ``$/cancel_request`` per request, never before its request, never after
  the request's settlement was routed;
* no message at all for a request that was never published;
* exactly one delivered outcome per awaited or callback-consumed request, none for
  detached or dropped ones; the pending table is empty once closed.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from acp_runtime import JsonValue, RequestError, SentRequest
from acp_runtime._loop import Waiter, current_waiter_factory
from acp_runtime._settlement import Consumer, OutboxClosed, PendingRequest, PendingTable, Wire
from acp_runtime.proxies import COUNTERPART

T = TypeVar("T")


class RecordingLink:
    """The connection side of a record: messages go to a list; finalizer work is queued
    and run by the harness on the loop thread."""

    def __init__(self) -> None:
        self.pending = PendingTable()
        self.wire: list[dict[str, JsonValue]] = []
        self.closed = False
        self.soon: deque[Callable[[], None]] = deque()
        self.spawned: list[Coroutine[Any, Any, None]] = []

    def enqueue(self, message: bytes) -> int:
        if self.closed:
            raise OutboxClosed
        self.wire.append(json.loads(message))
        return len(self.wire)

    def enqueue_after(self, message: bytes, ticket: int) -> None:
        self.enqueue(message)  # the list is the wire: the request is on it already

    def call_soon(self, callback: Callable[[], None]) -> None:
        self.soon.append(callback)

    def run_callback(self, callback: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self.spawned.append(callback())

    def new_waiter(self) -> Waiter:
        return current_waiter_factory()()

    def in_dispatch_loop(self) -> bool:
        return False


@dataclass
class Tracked:
    index: int
    sent: SentRequest[JsonValue] | None
    record: PendingRequest
    deliveries: list[object] = field(default_factory=list[object])
    settled_at: int | None = None
    """Wire length when the outcome was routed (response or close)."""
    awaiter_scope: anyio.CancelScope | None = None
    awaiter_done: anyio.Event | None = None


class RequestLifecycle(RuleBasedStateMachine):
    requests = Bundle("requests")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.link = RecordingLink()
        self.tracked: list[Tracked] = []
        self.tasks: list[asyncio.Task[None]] = []

    # -- plumbing -----------------------------------------------------------------------

    def run(self, step: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return self.loop.run_until_complete(step())

    def on_loop(self, fn: Callable[[], None]) -> None:
        async def step() -> None:
            fn()
            await self.drain()

        self.run(step)

    async def drain(self) -> None:
        """Run queued finalizer work, spawned callbacks and let awaiters finish."""
        while self.link.soon or self.link.spawned:
            while self.link.soon:
                self.link.soon.popleft()()
            while self.link.spawned:
                await self.link.spawned.pop(0)
        for t in self.tracked:
            if t.awaiter_done is not None and t.record.wire is Wire.SETTLED:
                with anyio.fail_after(5):
                    await t.awaiter_done.wait()

    def cancellable(self, t: Tracked) -> bool:
        """Published, unsettled and not cancelled yet."""
        return t.record.wire is Wire.PUBLISHED and t.record.armed

    def mark_settled(self, t: Tracked) -> None:
        if t.settled_at is None and t.record.wire is Wire.SETTLED:
            t.settled_at = len(self.link.wire)

    # -- rules ----------------------------------------------------------------------------

    @rule(target=requests, prepared=st.booleans())
    def create(self, prepared: bool) -> int:
        def make() -> None:
            record = PendingRequest(
                self.link, self.link.pending.allocate_id(), "m", None, COUNTERPART
            )
            sent: SentRequest[JsonValue] = SentRequest(record, lambda value: value)
            if not prepared:
                record.publish()
            self.tracked.append(Tracked(len(self.tracked), sent, record))

        self.on_loop(make)
        return len(self.tracked) - 1

    @rule(i=requests)
    def consume_by_await(self, i: int) -> None:
        t = self.tracked[i]
        if t.sent is None or t.record.consumer is not Consumer.NONE:
            return
        sent = t.sent
        done = t.awaiter_done = self.run(make_event)

        async def awaiter() -> None:
            with anyio.CancelScope() as scope:
                t.awaiter_scope = scope
                try:
                    t.deliveries.append(await sent)
                except RequestError as error:
                    t.deliveries.append(error)
            done.set()

        self.tasks.append(self.loop.create_task(awaiter()))
        self.run(anyio.lowlevel.checkpoint)  # the awaiter runs up to its wait

    @rule(i=requests)
    def consume_by_callback(self, i: int) -> None:
        t = self.tracked[i]
        if t.sent is None or t.record.consumer is not Consumer.NONE:
            return

        async def callback(value: JsonValue | RequestError) -> None:
            t.deliveries.append(value)

        sent = t.sent
        self.on_loop(lambda: sent.on_receiving_result(callback))

    @rule(i=requests)
    def detach(self, i: int) -> None:
        t = self.tracked[i]
        if t.sent is None or t.record.consumer is not Consumer.NONE:
            return
        sent = t.sent
        self.on_loop(sent.detach)

    @rule(i=requests, through_handle=st.booleans())
    def cancel(self, i: int, through_handle: bool) -> None:
        t = self.tracked[i]
        cancel = RequestCancelTarget(t).cancel_fn(through_handle)

        def attempt() -> None:
            try:
                cancel()
            except RequestError as error:
                assert self.link.closed and error.is_connection_closed

        self.on_loop(attempt)

    @rule(i=requests)
    def abandon_await(self, i: int) -> None:
        t = self.tracked[i]
        scope, done = t.awaiter_scope, t.awaiter_done
        if scope is None or done is None or done.is_set():
            return

        must_cancel = self.cancellable(t)

        async def give_up() -> None:
            scope.cancel()
            with anyio.fail_after(5):
                await done.wait()
            await self.drain()

        self.run(give_up)
        if must_cancel and scope.cancelled_caught:  # OUT-5: an abandoned await cancels once
            assert len(self.cancels_for(t.record.id)) == 1

    @rule(i=requests, as_error=st.booleans())
    def respond(self, i: int, as_error: bool) -> None:
        t = self.tracked[i]

        async def answer() -> None:
            record = self.link.pending.take(t.record.id)
            if record is None:
                return  # unknown id: the runtime logs and ignores it
            callback = record.settle(
                None if as_error else t.index,
                RequestError.request_cancelled() if as_error else None,
            )
            self.mark_settled(t)
            if callback is not None:
                await callback()
            await self.drain()

        self.run(answer)

    @rule(i=requests)
    def drop(self, i: int) -> None:
        t = self.tracked[i]
        if t.sent is None:
            return
        must_cancel = self.cancellable(t) and t.record.consumer is Consumer.NONE
        t.sent = None  # the last reference: CPython finalizes it right here
        self.on_loop(lambda: None)
        if must_cancel:  # OUT-5: an unconsumed pending request collected cancels once
            assert len(self.cancels_for(t.record.id)) == 1

    @rule()
    def close(self) -> None:
        async def shut() -> None:
            self.link.closed = True
            callbacks = []
            for record in self.link.pending.close():
                callback = record.settle(None, RequestError.connection_closed(record.method))
                if callback is not None:
                    callbacks.append(callback)
            for t in self.tracked:
                self.mark_settled(t)
            for callback in callbacks:
                await callback()
            await self.drain()

        self.run(shut)

    # -- invariants -----------------------------------------------------------------------

    def cancels_for(self, request_id: int) -> list[int]:
        return [
            n
            for n, m in enumerate(self.link.wire)
            if m.get("method") == "$/cancel_request" and m["params"] == {"requestId": request_id}
        ]

    def request_position(self, request_id: int) -> int | None:
        return next(
            (
                n
                for n, m in enumerate(self.link.wire)
                if m.get("id") == request_id and m.get("method") == "m"
            ),
            None,
        )

    @invariant()
    def cancel_discipline(self) -> None:
        for t in self.tracked:
            cancels = self.cancels_for(t.record.id)
            assert len(cancels) <= 1, f"request {t.index}: {len(cancels)} cancels"
            position = self.request_position(t.record.id)
            if position is None:
                assert not cancels, f"request {t.index}: cancel without publication"
                continue
            for n in cancels:
                assert n > position
                assert t.settled_at is None or n < t.settled_at, (
                    f"request {t.index}: cancel after settlement"
                )

    @invariant()
    def at_most_one_delivery(self) -> None:
        for t in self.tracked:
            assert len(t.deliveries) <= 1
            if t.record.consumer is Consumer.GONE and t.awaiter_done is None:
                assert not t.deliveries

    def teardown(self) -> None:
        self.close()
        self.drop_everything()

        async def finish_tasks() -> None:
            for task in self.tasks:
                await task

        self.run(finish_tasks)
        self.loop.close()
        assert len(self.link.pending) == 0
        for t in self.tracked:
            if t.record.wire is Wire.PREPARED:
                assert self.request_position(t.record.id) is None
                continue
            assert t.record.wire is Wire.SETTLED
            abandoned = t.awaiter_scope is not None and t.awaiter_scope.cancelled_caught
            if t.record.consumer in (Consumer.AWAIT, Consumer.CALLBACK) and not abandoned:
                assert len(t.deliveries) == 1, f"request {t.index}: {t.deliveries}"

    def drop_everything(self) -> None:
        for t in self.tracked:
            t.sent = None  # refcounting finalizes each one here; no gc.collect() needed
        self.on_loop(lambda: None)
        self.cancel_discipline()


@dataclass
class RequestCancelTarget:
    tracked: Tracked

    def cancel_fn(self, through_handle: bool) -> Callable[[], None]:
        t = self.tracked
        if t.sent is not None and not through_handle:
            return t.sent.cancel
        handle = t.sent.cancellation_handle() if t.sent is not None else None
        if handle is not None:
            return handle.cancel
        return t.record.cancel  # what a handle retained earlier would do


async def make_event() -> anyio.Event:
    return anyio.Event()


def test_request_lifecycle_state_machine() -> None:
    run_state_machine_as_test(
        RequestLifecycle,
        settings=settings(
            max_examples=150,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            derandomize=True,
        ),
    )
