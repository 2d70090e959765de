# ruff: noqa: E501
"""Mutation check: break one line that provides a spec behaviour, confirm a test fails.

Not collected by pytest (no ``test_`` prefix); run it by hand after changing the runtime:

    .venv/bin/python -m tests.runtime.mutation_check            # every mutation
    .venv/bin/python -m tests.runtime.mutation_check M03 M17    # some of them

Each mutation is applied to a private copy of ``src/`` in a temporary directory (the
checkout is never touched), and the spec tests run against that copy through
``PYTHONPATH``; the tests run from the checkout. The unmutated copy must pass first. A
mutation whose original text is no longer in the source is reported ``stale`` (update
it), one that no test notices ``SURVIVED``, and one whose run could not collect the
tests ``BROKEN``. The exit status is non-zero unless every mutation was caught. A full
run takes 20 to 40 minutes on two busy cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = ["tests/runtime", "tests/proxies"]
RUN_TIMEOUT = 300
"""Seconds one test run may take before it counts as hung."""


@dataclass(frozen=True)
class Mutation:
    key: str
    spec: str
    what: str
    file: str
    old: str
    new: str
    more: tuple[tuple[str, str, str], ...] = ()
    """Further edits of the same mutation: (file, old, new)."""


CHECK_OLD = "        if self.wire is not Wire.PUBLISHED or not self.armed:\n            return\n"
CHECK_NEW = "        if self.wire is Wire.PREPARED or not self.armed:\n            return\n"

MUTATIONS: list[Mutation] = [
    Mutation(
        "M01",
        "OUT-7",
        "routing a response does not disarm cancellation (cancel() trusts the flag alone)",
        "_settlement.py",
        "            return None\n        self.armed = False\n        self.wire = Wire.SETTLED\n",
        "            return None\n        self.wire = Wire.SETTLED\n",
        (("_settlement.py", CHECK_OLD, CHECK_NEW),),
    ),
    Mutation(
        "M02",
        "OUT-4",
        "cancel() does not spend the once-only flag",
        "_settlement.py",
        "            return\n        self.armed = False\n        method, params = self.peer.wrap(CANCEL",
        "            return\n        method, params = self.peer.wrap(CANCEL",
    ),
    Mutation(
        "M03",
        "OUT-4",
        "cancel() sends the notification twice",
        "_settlement.py",
        "            self.link.enqueue_after(encode_notification(method, params), self.ticket)\n",
        "            self.link.enqueue_after(encode_notification(method, params), self.ticket)\n"
        "            self.link.enqueue_after(encode_notification(method, params), self.ticket)\n",
    ),
    Mutation(
        "M04",
        "IN-2",
        "markers updated after the user handler chain instead of before",
        "_connection.py",
        "            if inner_method == CANCEL_REQUEST_METHOD and not self._apply_cancel(inner_params):\n"
        "                return\n"
        "        route = self._routes.notifications.get(notification.method) or self._routes.raw_notification\n",
        "        route = self._routes.notifications.get(notification.method) or self._routes.raw_notification\n"
        "        if notification.method in _CANCEL_OR_ENVELOPE and inner_method == CANCEL_REQUEST_METHOD:\n"
        "            if route is None:\n"
        "                self._apply_cancel(inner_params)\n"
        "                return\n"
        "            handlers = route\n"
        "\n"
        "            async def route(method, params, cx):  # type: ignore[no-untyped-def]\n"
        "                await handlers(method, params, cx)\n"
        "                self._apply_cancel(inner_params)\n",
    ),
    Mutation(
        "M05",
        "PROXY-4",
        "send_proxied_message_to tunnels the raw $/cancel_request",
        "_proxied.py",
        "        if is_cancel_request(self.method, self.params):\n",
        "        if False:\n",
    ),
    Mutation(
        "M06",
        "OUT-8",
        "cancel before publication is remembered",
        "_settlement.py",
        "        if self.wire is not Wire.PUBLISHED or not self.armed:\n            return\n",
        "        if self.wire is Wire.PREPARED:\n            self.armed = False\n            return\n"
        "        if self.wire is not Wire.PUBLISHED or not self.armed:\n            return\n",
    ),
    Mutation(
        "M07",
        "OUT-8",
        "cancel before publication goes on the wire at once (ahead of the request)",
        "_settlement.py",
        "        if self.wire is not Wire.PUBLISHED or not self.armed:\n            return\n",
        "        if self.wire is Wire.SETTLED or not self.armed:\n            return\n",
    ),
    Mutation(
        "M08",
        "OUT-5",
        "abandoning an awaited request sends no cancel",
        "_settlement.py",
        "        self.consumer = Consumer.GONE\n        self._stop_watching()\n        self.cancel_quietly()\n",
        "        self.consumer = Consumer.GONE\n        self._stop_watching()\n",
    ),
    Mutation(
        "M09",
        "OUT-5",
        "a collected unconsumed SentRequest sends no cancel",
        "_settlement.py",
        "                self.link.call_soon(self.abandon)\n",
        "                pass\n",
    ),
    Mutation(
        "M10",
        "OUT-6",
        "detach() disarms cancellation (a retained handle can no longer cancel)",
        "_settlement.py",
        "        self.consumer = Consumer.GONE\n        self._stop_watching()\n        self._callback = None\n",
        "        self.consumer = Consumer.GONE\n        self._stop_watching()\n        self._callback = None\n"
        "        self.armed = False\n",
    ),
    Mutation(
        "M11",
        "OUT-6",
        "detach() cancels automatically",
        "_settlement.py",
        "        self.consumer = Consumer.GONE\n        self._stop_watching()\n        self._callback = None\n",
        "        self.consumer = Consumer.GONE\n        self._stop_watching()\n        self._callback = None\n"
        "        self.cancel_quietly()\n",
    ),
    Mutation(
        "M12",
        "PROXY-1",
        "forward_response_to does not watch the upstream marker",
        "_sent_request.py",
        "        self._record.watch(responder.cancellation)\n",
        "",
    ),
    Mutation(
        "M13",
        "PROXY-2",
        "a source already cancelled at consumption is ignored",
        "_settlement.py",
        "            if marker.is_cancelled():\n                self.cancel_quietly()\n            else:\n"
        "                marker._add_callback",
        "            if False:\n                self.cancel_quietly()\n            else:\n"
        "                marker._add_callback",
    ),
    Mutation(
        "M14",
        "PROXY-2",
        "detach keeps watching the registered sources",
        "_settlement.py",
        "        self.consumer = Consumer.GONE\n        self._stop_watching()\n        self._callback = None\n",
        "        self.consumer = Consumer.GONE\n        self._callback = None\n        self.start_watching()\n",
    ),
    Mutation(
        "M15",
        "IN-3",
        'incoming ids match by string form (5 matches "5")',
        "_jsonrpc.py",
        "    return (type(request_id), request_id)\n",
        "    return (str, str(request_id))  # type: ignore[return-value]\n",
    ),
    Mutation(
        "M16",
        "IN-3",
        "a cancel for an unknown id is remembered for a later request",
        "_cancellation.py",
        "        marker = CancellationMarker()\n        self._markers[id_key(request_id)] = marker\n",
        "        marker = CancellationMarker()\n"
        "        if id_key(request_id) in EARLY:\n            marker._set()\n"
        "        self._markers[id_key(request_id)] = marker\n",
        (
            (
                "_cancellation.py",
                "        if marker is None:\n            log.debug(\n",
                "        if marker is None:\n            EARLY.add(id_key(request_id))\n"
                "            log.debug(\n",
            ),
            ("_cancellation.py", 'T = TypeVar("T")\n', 'T = TypeVar("T")\nEARLY: set = set()\n'),
        ),
    ),
    Mutation(
        "M17",
        "IN-3",
        "finished requests stay registered (a late cancel sets their marker)",
        "_response_slot.py",
        "        self.registry.finish(self.id, self.marker)\n",
        "",
    ),
    Mutation(
        "M18",
        "IN-3",
        "malformed cancel params still reach the user handlers",
        "_connection.py",
        "            if inner_method == CANCEL_REQUEST_METHOD and not self._apply_cancel(inner_params):\n"
        "                return\n",
        "            if inner_method == CANCEL_REQUEST_METHOD:\n                self._apply_cancel(inner_params)\n",
    ),
    Mutation(
        "M19",
        "IN-4",
        "an unhandled request gets -32603 instead of -32601",
        "_connection.py",
        "            slot.answer_error(RequestError.method_not_found(request.method))\n",
        "            slot.answer_error(RequestError.internal_error(request.method))\n",
    ),
    Mutation(
        "M20",
        "IN-4",
        "an unhandled notification gets an error reply",
        "_connection.py",
        "                extra=log_fields(notification.method),\n            )\n            return\n",
        "                extra=log_fields(notification.method),\n            )\n"
        "            self._reply_uncorrelated(RequestError.method_not_found(notification.method))\n"
        "            return\n",
    ),
    Mutation(
        "M21",
        "IN-6",
        "a second answer is sent too",
        "_response_slot.py",
        '        if self.answered:\n            self.warn_duplicate("result" if error is None',
        '        if False:\n            self.warn_duplicate("result" if error is None',
    ),
    Mutation(
        "M22",
        "IN-6",
        "a responder dropped unanswered sends nothing",
        "_response_slot.py",
        "            if not self.answered:\n                self.link.call_soon(self._answer_lost)\n",
        "            pass\n",
    ),
    Mutation(
        "M23",
        "IN-1",
        "run_until_cancelled returns None instead of raising -32800",
        "_cancellation.py",
        "                self._remove_callback(scope.cancel)\n        raise RequestError.request_cancelled()\n",
        "                self._remove_callback(scope.cancel)\n        return None  # type: ignore[return-value]\n",
    ),
    Mutation(
        "M24",
        "IN-1",
        "run_until_cancelled starts the work although the marker is already set",
        "_cancellation.py",
        "        if self._is_cancelled:\n            if inspect.iscoroutine(work):",
        "        if False:\n            if inspect.iscoroutine(work):",
    ),
    Mutation(
        "M25",
        "IN-1",
        "cancelled() waiters are not woken",
        "_cancellation.py",
        "        if self._event is not None:\n            self._event.set()\n        callbacks",
        "        callbacks",
    ),
    Mutation(
        "M26",
        "hygiene",
        "closing does not settle pending requests",
        "_connection.py",
        "        records = self._pending.close()\n",
        "        self._pending.close()\n        records: list[PendingRequest] = []\n",
    ),
    Mutation(
        "M27",
        "OUT-2",
        "cancel ignores the peer wrapping of the original request",
        "_settlement.py",
        '        method, params = self.peer.wrap(CANCEL_REQUEST_METHOD, {"requestId": self.id})\n',
        '        method, params = CANCEL_REQUEST_METHOD, {"requestId": self.id}\n',
    ),
    Mutation(
        "M28",
        "OUT-11",
        "explicit cancel discards the selected callback",
        "_settlement.py",
        "        self.armed = False\n        method, params = self.peer.wrap(CANCEL",
        "        self.armed = False\n        self._callback = None\n        method, params = self.peer.wrap(CANCEL",
    ),
    Mutation(
        "M29",
        "OUT-3",
        "cancel settles the request locally with -32800",
        "_settlement.py",
        "            raise RequestError.connection_closed(CANCEL_REQUEST_METHOD) from None\n",
        "            raise RequestError.connection_closed(CANCEL_REQUEST_METHOD) from None\n"
        "        self.link.pending.discard(self)\n"
        "        callback = self.settle(None, RequestError.request_cancelled())\n"
        "        if callback is not None:\n            self.link.run_callback(callback)\n",
    ),
    Mutation(
        "M30",
        "OUT-10",
        "dropping a cancellation handle cancels",
        "_sent_request.py",
        '    def __repr__(self) -> str:\n        return f"<RequestCancellationHandle',
        "    def __del__(self) -> None:\n        self._record.cancel_quietly()\n\n"
        '    def __repr__(self) -> str:\n        return f"<RequestCancellationHandle',
    ),
    Mutation(
        "M31",
        "OUT-9",
        "cancel() swallows the closed-connection error",
        "_settlement.py",
        "            raise RequestError.connection_closed(CANCEL_REQUEST_METHOD) from None\n",
        "            return\n",
    ),
    Mutation(
        "M32",
        "IN-5",
        "inline handlers run concurrently instead of in the dispatch loop",
        "_connection.py",
        "            route, inline = routes.raw_request, routes.raw_request_inline\n",
        "            route, inline = routes.raw_request, False\n",
    ),
    Mutation(
        "M33",
        "PROXY-5",
        "send_cancel_request_to ignores the peer wrapping",
        "_connection.py",
        '        self.send_raw_notification(CANCEL_REQUEST_METHOD, {"requestId": request_id}, peer=peer)\n',
        '        self.send_raw_notification(CANCEL_REQUEST_METHOD, {"requestId": request_id})\n',
    ),
    Mutation(
        "M34",
        "IN-2",
        "wrapped cancels are not peeled before the marker lookup",
        "_connection.py",
        "        inner_method, inner_params = peel_envelopes(notification.method, notification.params)\n",
        "        inner_method, inner_params = notification.method, notification.params\n",
    ),
    Mutation(
        "M35",
        "hygiene",
        "a JSON array (batch) is ignored instead of answered -32600",
        "_connection.py",
        '            reason = "empty batch" if not value else "batches are not supported"\n'
        "            self._reply_uncorrelated(RequestError.invalid_request(reason))\n",
        "            pass\n",
    ),
    Mutation(
        "M36",
        "hygiene",
        "malformed responses are answered",
        "_connection.py",
        "        if message.reply:\n            self._reply_uncorrelated(RequestError.invalid_request(message.reason))\n",
        "        self._reply_uncorrelated(RequestError.invalid_request(message.reason))\n",
    ),
    Mutation(
        "M37",
        "hygiene",
        'a response id "1" settles request 1',
        "_settlement.py",
        "        if type(request_id) is not int:\n            return None\n",
        "        if isinstance(request_id, str) and request_id.isdigit():\n"
        "            request_id = int(request_id)\n"
        "        if type(request_id) is not int:\n            return None\n",
    ),
    Mutation(
        "M38",
        "hygiene",
        "handler crashes leak the exception text on the wire",
        "_response_slot.py",
        "    slot.answer_error(RequestError.internal_error(method=slot.method))\n\n\ndef answer_spawned_failure",
        "    import traceback\n\n"
        "    slot.answer_error(RequestError.internal_error(traceback.format_exc(), method=slot.method))\n\n\n"
        "def answer_spawned_failure",
    ),
    Mutation(
        "M39",
        "hygiene",
        "invalid params get -32602 without data",
        "_handlers.py",
        '            slot.answer_error(RequestError.invalid_params({"errors": validation_summary(error)}))\n',
        "            slot.answer_error(RequestError.invalid_params())\n",
    ),
    Mutation(
        "M40",
        "hygiene",
        "the shutdown does not wait for queued messages to be written",
        "_connection.py",
        "                        with anyio.move_on_after(CLOSE_TIMEOUT):\n"
        "                            await self._writer_done.wait()\n",
        "                        pass\n",
    ),
    Mutation(
        "M41",
        "OUT-1",
        "a publishing send does not put the request on the wire until consumed",
        "_connection.py",
        "        request = self._prepare(args, peer)\n        request._record.publish()",
        "        request = self._prepare(args, peer)\n        request._record.wire",
    ),
    Mutation(
        "M42",
        "OUT-7",
        "a connection-closed settlement leaves cancellation armed (GAP-2)",
        "_connection.py",
        "        self._incoming_closed.set()\n        if callbacks:\n",
        "        for record in records:\n            record.armed = True\n"
        "        self._incoming_closed.set()\n        if callbacks:\n",
        (("_settlement.py", CHECK_OLD, CHECK_NEW),),
    ),
    Mutation(
        "M43",
        "IN-6",
        "a handler exception after its answer sends a second (error) answer",
        "_response_slot.py",
        "    if isinstance(error, RequestError):\n        slot.answer_error(error)\n",
        "    if isinstance(error, RequestError):\n        slot.answered = False\n"
        "        slot.answer_error(error)\n",
    ),
    Mutation(
        "M44",
        "hygiene",
        "a parse error replies with the id it could not read (0) instead of null",
        "_connection.py",
        '        self._reply_uncorrelated(RequestError.parse_error({"line": text}))\n',
        '        self.enqueue(encode(error_message(0, RequestError.parse_error({"line": text}))))\n',
    ),
    Mutation(
        "M45",
        "hygiene",
        "the writer is cancelled with the connect block (queued messages lost)",
        "_connection.py",
        "        self._writer_scope = anyio.CancelScope(shield=True)\n",
        "        self._writer_scope = anyio.CancelScope()\n",
    ),
    Mutation(
        "M46",
        "OUT-5",
        "the reader settles pending requests when cancelled with the connect block",
        "_connection.py",
        "        with scope:\n            await self._read_loop(generation)\n"
        "        if generation == self._reader_generation:  # still the reader: the input ended\n"
        "            await self._close_incoming()\n",
        "        try:\n            with scope:\n                await self._read_loop(generation)\n"
        "        finally:\n            await self._close_incoming()\n",
    ),
    Mutation(
        "M47",
        "hygiene",
        "a result callback chosen after the connection finished is dropped silently",
        "_connection.py",
        "            raise OutboxClosed from None\n",
        "            pass\n",
    ),
    Mutation(
        "M48",
        "OUT-5",
        "a finalizer firing after the loop finished raises (asyncio and trio)",
        "_loop.py",
        "        try:\n            loop.call_soon_threadsafe(callback)\n"
        '        except RuntimeError:\n            log.debug("event loop closed; dropping %r", callback)\n',
        "        loop.call_soon_threadsafe(callback)\n",
        (
            (
                "_loop.py",
                "        try:\n            token.run_sync_soon(callback)\n"
                "        except trio.RunFinishedError:\n"
                '            log.debug("trio run finished; dropping %r", callback)\n',
                "        token.run_sync_soon(callback)\n",
            ),
        ),
    ),
    Mutation(
        "M49",
        "hygiene",
        "a result callback raising at close leaves the shielded writer waiting forever",
        "_connection.py",
        "            try:\n                await self._close_incoming()  # result callbacks run here and may raise\n"
        "            finally:\n                self._outbox.close()\n",
        "            await self._close_incoming()\n            if True:\n                self._outbox.close()\n",
    ),
    Mutation(
        "M50",
        "REL-1",
        "an over-limit response does not fail the request its prefix names",
        "_connection.py",
        "        record = self._pending.take(head.id) if head.has_id else None\n",
        "        record = None\n",
    ),
    Mutation(
        "M51",
        "REL-1",
        "an over-limit response with no readable id leaves the pending requests waiting",
        "_connection.py",
        "            self._transport_error = self._transport_error or exc\n            return False\n",
        "            return True\n",
    ),
    Mutation(
        "M52",
        "REL-1",
        "an over-limit request is answered with id null although its id was read",
        "_connection.py",
        "        self._reply_uncorrelated(error, head.id if head is not None and head.is_call else None)\n",
        "        self._reply_uncorrelated(error)\n",
    ),
    Mutation(
        "M53",
        "REL-2",
        "a malformed response for a pending id is dropped (the request never settles)",
        "_connection.py",
        "        record = self._pending.take(message.response_id)\n",
        "        record = None\n",
    ),
    Mutation(
        "M54",
        "REL-4",
        "the reader goes on reading over the high-water mark",
        "_connection.py",
        "            if outbox.backlog > outbox.high_water:  # the peer is not reading: stop too\n",
        "            if False:\n",
    ),
    Mutation(
        "M55",
        "REL-4",
        "a drain never waits (paced senders run ahead of a peer that does not read)",
        "_outbox.py",
        "        if self.backlog <= self.pace and self._drained is None:\n            return\n",
        "        return\n",
    ),
    Mutation(
        "M56",
        "REL-4",
        "the answer to a cancelled request queues behind everything else",
        "_response_slot.py",
        "        enqueue = self.link.enqueue_urgent if self.marker.is_cancelled() else self.link.enqueue\n",
        "        enqueue = self.link.enqueue\n",
    ),
    Mutation(
        "M57",
        "REL-4",
        "a cancel of a request already written queues behind everything else",
        "_outbox.py",
        "        if ticket <= self._taken:\n",
        "        if False:\n",
    ),
    Mutation(
        "M58",
        "REL-4",
        "a cancel overtakes its own request while that is still queued",
        "_outbox.py",
        "        if ticket <= self._taken:\n",
        "        if True:\n",
    ),
    Mutation(
        "M59",
        "REL-3",
        "per-message log records are not rate-limited",
        "_log_throttle.py",
        "        if budget.logged < self._burst:\n",
        "        if True:\n",
    ),
    Mutation(
        "M60",
        "REL-3",
        "the stderr log queues without bound for a stderr nobody reads",
        "_stderr_log.py",
        "            if self._queued + len(data) > self.max_queued_bytes:\n",
        "            if False:\n",
    ),
    Mutation(
        "M61",
        "REL-5",
        "a bad line is quoted from a second decode of all of it, while the first is still held",
        "_connection.py",
        "            except ValueError:\n                value = _UNPARSABLE  # handled below, once the decoded text is gone with the error\n",
        "            except ValueError:\n                self._on_unparsable(data)\n                return\n",
        (
            (
                "_connection.py",
                '        text = data[: 4 * _LINE_EXCERPT].decode(errors="replace")[:_LINE_EXCERPT]\n',
                '        text = data.decode(errors="replace")[:_LINE_EXCERPT]\n',
            ),
        ),
    ),
    Mutation(
        "M62",
        "REL-6",
        "a line of white space only gets -32700 instead of being skipped",
        "_framing.py",
        "        if line and line[0] in _WHITE_SPACE_BYTES and not _has_content(line):\n",
        "        if False:\n",
        (
            (
                "_framing.py",
                "                data[start] not in _WHITE_SPACE_BYTES or _has_content(data[start:end])\n",
                "                True\n",
            ),
        ),
    ),
    Mutation(
        "M63",
        "REL-6",
        "a byte-order mark at the start of the stream is kept (the first message gets -32700)",
        "_framing.py",
        "        if buffer.startswith(_BOM):\n            del buffer[: len(_BOM)]\n",
        "        pass\n",
        (("_framing.py", "            data = data.removeprefix(_BOM)\n", "            pass\n"),),
    ),
    Mutation(
        "M64",
        "REL-5",
        "a large message is parsed from its decoded text (a bad one costs its text)",
        "_jsonrpc.py",
        "    if len(data) >= LARGE_MESSAGE_BYTES and (parsed := _decode_large(data)) is not None:\n",
        "    if False and (parsed := _decode_large(data)) is not None:\n",
    ),
    Mutation(
        "M65",
        "REL-5",
        "a long line is cut out of the shared read buffer (a copy of it)",
        "_framing.py",
        "                if len(buffer) > self._long_line_bytes:  # from now on without copies\n",
        "                if False:\n",
    ),
    Mutation(
        "M66",
        "REL-4",
        "a loop of awaited sends never gives the loop a turn (no reading, no async writer)",
        "_outbox.py",
        "        if self._writer_turn_due or (self._turn_bytes and self._since_turn >= self._turn_bytes):\n",
        "        if self._writer_turn_due:\n",
    ),
    Mutation(
        "M67",
        "IN-5",
        "typed request handlers run in the dispatch loop, so they cannot await the peer",
        "_connection.py",
        "        if inline:\n",
        "        if True:\n",
    ),
    Mutation(
        "M68",
        "V2-1",
        "a prompt handler that suspends is not registered as a turn: session/cancel stops nothing",
        "_connection.py",
        "        binding = self._routes.turns.get(request.method)\n",
        "        binding = None\n",
    ),
    Mutation(
        "M69",
        "REL-4",
        "awaited sends pace at the high-water mark: a stream fills memory up to it",
        "_outbox.py",
        "        self.pace = min(pace, high_water)\n",
        "        self.pace = high_water\n",
    ),
    Mutation(
        "M70",
        "REL-4",
        "a burst due while the writer holds a batch gives it no turn: the peer starves",
        "_outbox.py",
        "            self._writer_turn_due = True\n",
        "            pass\n",
    ),
    Mutation(
        "M71",
        "IN-5",
        "bytes written at once do not count toward a turn: a stream to a fast reader never yields",
        "_outbox.py",
        "            self._since_turn += len(message)\n            return 0\n",
        "            return 0\n",
    ),
]


def _apply(src: Path, mutation: Mutation) -> bool:
    for file, old, new in ((mutation.file, mutation.old, mutation.new), *mutation.more):
        path = src / "acp_runtime" / file
        text = path.read_text()
        if text.count(old) != 1:
            return False
        path.write_text(text.replace(old, new))
    return True


def _run_tests(src: Path) -> tuple[str, list[str]]:
    """Run the spec tests against ``src``: ("passed" | "failed" | "broken", names). A run
    that could not even collect the tests is "broken", never counted as a catch."""
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", *TESTS, "-q", "-p", "no:cacheprovider"]
    try:
        done = subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT
        )
    except subprocess.TimeoutExpired:  # a test hung: CI would fail it by timeout
        return "failed", [f"(the run hung for {RUN_TIMEOUT} s)"]
    lines = done.stdout.splitlines()
    failed = sorted(
        {
            line.split()[1].split("::")[-1].split("[")[0]
            for line in lines
            if line.startswith("FAILED")
        }
    )
    errors = [line for line in lines if line.startswith("ERROR tests/")]  # not log lines
    if errors or (done.returncode != 0 and not failed):
        return "broken", errors or lines[-1:]
    return ("failed" if failed else "passed"), failed


def main(selected: list[str]) -> int:
    mutations = [m for m in MUTATIONS if not selected or m.key in selected]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="acp-mutation-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(REPO / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
        status, names = _run_tests(src)
        if status != "passed":
            print(f"baseline: the unmutated tests do not pass ({status}): {names}")
            return 2
        for mutation in mutations:
            shutil.rmtree(src)
            shutil.copytree(REPO / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
            if not _apply(src, mutation):
                print(f"{mutation.key} {mutation.spec:8} stale     {mutation.what}")
                bad += 1
                continue
            started = time.monotonic()
            status, names = _run_tests(src)
            label = {"failed": "caught", "passed": "SURVIVED", "broken": "BROKEN"}[status]
            bad += status != "failed"
            print(
                f"{mutation.key} {mutation.spec:8} {label:9} {mutation.what}"
                f" [{time.monotonic() - started:.0f}s, {len(names)} failing]",
                flush=True,
            )
            for name in names:
                print(f"        {name}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
