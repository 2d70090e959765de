"""The layers below the connection work on their own, through their small link protocols.

``response_slot`` needs a :class:`ResponseLink`, ``settlement`` a :class:`RequestLink`:
a recording fake stands in for the connection, so the once-only answer (IN-6) and the
once-only cancel (OUT-4, OUT-7) are checked here with no dispatch loop, no transport and
no event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from acp_runtime import RequestError
from acp_runtime._cancellation import IncomingRequests
from acp_runtime._loop import Waiter
from acp_runtime._response_slot import ResponseSlot
from acp_runtime._settlement import OutboxClosed, PendingRequest, PendingTable
from acp_runtime.proxies import COUNTERPART


class RecordingLink:
    """Both link protocols, recording what a connection would queue or schedule."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.scheduled: list[Callable[[], None]] = []
        self.pending = PendingTable()
        self.closed = False

    def enqueue(self, message: bytes) -> int:
        if self.closed:
            raise OutboxClosed
        self.sent.append(json.loads(message))
        return len(self.sent)

    def enqueue_urgent(self, message: bytes) -> None:
        self.enqueue(message)

    def enqueue_after(self, message: bytes, ticket: int) -> None:
        self.enqueue(message)

    def call_soon(self, callback: Callable[[], None]) -> None:
        self.scheduled.append(callback)

    def run_callback(self, callback: Callable[[], Coroutine[Any, Any, None]]) -> None:
        raise AssertionError("no result callback in these tests")

    def new_waiter(self) -> Waiter:
        raise AssertionError("nobody awaits in these tests")

    def in_dispatch_loop(self) -> bool:
        return False

    def run_scheduled(self) -> None:
        scheduled, self.scheduled = self.scheduled, []
        for callback in scheduled:
            callback()


def test_a_slot_answers_once_and_forgets_its_id_in6() -> None:
    """IN-6 and IN-3: the first answer wins; once answered, a cancel finds no request."""
    link, registry = RecordingLink(), IncomingRequests()
    slot = ResponseSlot(link, registry, 7, "test/ask")
    slot.answer({"text": "first"})
    slot.answer_error(RequestError.internal_error())
    assert link.sent == [{"jsonrpc": "2.0", "id": 7, "result": {"text": "first"}}]
    assert registry.cancel(7) is False
    assert not slot.marker.is_cancelled()


def test_a_lost_slot_answers_internal_error_from_the_loop_in6() -> None:
    """IN-6: a responder dropped unanswered only schedules; the loop then sends -32603."""
    link = RecordingLink()
    slot = ResponseSlot(link, IncomingRequests(), "a", "test/ask")
    slot.on_responder_lost()
    assert link.sent == []
    link.run_scheduled()
    assert [message["error"]["code"] for message in link.sent] == [-32603]
    slot.on_responder_lost()  # answered now: nothing more is scheduled
    assert link.scheduled == []


def test_a_slot_on_a_closed_link_drops_the_answer_quietly() -> None:
    link = RecordingLink()
    link.closed = True
    slot = ResponseSlot(link, IncomingRequests(), 1, "test/ask")
    slot.answer(None)
    assert slot.answered and link.sent == []


@pytest.mark.parametrize("settle_first", [False, True])
def test_a_pending_request_cancels_once_and_never_after_settling_out4_out7(
    settle_first: bool,
) -> None:
    """OUT-4, OUT-7: one ``$/cancel_request`` at most, none once the answer was routed."""
    link = RecordingLink()
    record = PendingRequest(link, link.pending.allocate_id(), "test/ask", {"q": 1}, COUNTERPART)
    record.cancel()  # OUT-8: before publication, a no-op that is not remembered
    record.publish()
    if settle_first:
        assert link.pending.take(record.id) is record
        record.settle({"text": "done"}, None)
    record.cancel()
    record.cancel()
    request = {"jsonrpc": "2.0", "id": record.id, "method": "test/ask", "params": {"q": 1}}
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": record.id}}
    assert link.sent == ([request] if settle_first else [request, cancel])
