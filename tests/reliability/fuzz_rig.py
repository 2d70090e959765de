"""A connection under fuzz: raw bytes in through the real framing, replies checked by the oracle.

:class:`FuzzRig` keeps one connection open across any number of cases, so state left
behind by one case (a wedged request, a stale table entry, leaked memory) shows up in
the next. After every case it checks:

* the replies are exactly the oracle's, in order, each strict JSON;
* the connection still answers a ping;
* every outgoing request the case could answer settled exactly once, as expected, and
  both request tables are empty once the rig has answered the rest;
* nothing escaped to the event loop (asyncio's exception handler, unraisable hooks).

The connection's transport is wrapped in a wire trace writing JSON lines to
``os.devnull`` through a UTF-8 text file, so the opt-in tracing sees the same input.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestError,
    RequestMethod,
    Responder,
)
from acp_runtime._framing import LineReader
from acp_runtime.codegen_support import TypedRequest
from acp_runtime.tracing import TracingTransport, jsonl_sink
from acp_runtime.transports import LineTransport

from .wire_oracle import ASK, ECHO, FAIL, Expectation, expect, strict_json

FUZZ_LIMIT = 4096
"""Per-line limit of the fuzzed connection: small, so over-limit lines are cheap to make."""

OUTGOING_PER_CASE = 3
"""Requests the connection sends before each case, for fuzzed responses to hit."""


class Question(BaseModel, TypedRequest["Answer"]):
    question: str
    __acp_method__: ClassVar[RequestMethod[Question, Answer]]


class Answer(BaseModel):
    text: str


ASK_METHOD: RequestMethod[Question, Answer] = RequestMethod(ASK, Question, Answer, side="agent")
Question.__acp_method__ = ASK_METHOD


async def _ask(params: Question, responder: Responder[Answer]) -> Answer:
    return Answer(text=params.question)


async def _raw(method: str, params: JsonValue, responder: Responder[JsonValue]) -> JsonValue:
    if method == ECHO:
        return {"params": params}
    if method == FAIL:
        raise RuntimeError("handler crash (expected by the fuzz oracle)")
    raise RequestError.method_not_found(method)


def fuzz_builder() -> ConnectionBuilder:
    return ConnectionBuilder().on_request(ASK_METHOD, _ask).on_raw_request(_raw)


class ByteQueueReceiveStream(ByteReceiveStream):
    """Bytes from a memory object stream, handed out at most ``max_bytes`` at a time."""

    def __init__(self, source: MemoryObjectReceiveStream[bytes]) -> None:
        self._source = source
        self._rest = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._rest:
            try:
                self._rest = await self._source.receive()
            except anyio.ClosedResourceError:
                raise anyio.EndOfStream from None
        else:
            await anyio.lowlevel.checkpoint()
        chunk, self._rest = self._rest[:max_bytes], self._rest[max_bytes:]
        return chunk

    async def aclose(self) -> None:
        self._source.close()


class ByteQueueSendStream(ByteSendStream):
    def __init__(self, sink: MemoryObjectSendStream[bytes]) -> None:
        self._sink = sink

    async def send(self, item: bytes) -> None:
        await self._sink.send(item)

    async def aclose(self) -> None:
        self._sink.close()


def byte_pipe(buffer: float = 0) -> tuple[ByteQueueSendStream, ByteQueueReceiveStream]:
    """An in-memory byte pipe; ``buffer`` is how many writes it holds before blocking."""
    send, receive = anyio.create_memory_object_stream[bytes](buffer)
    return ByteQueueSendStream(send), ByteQueueReceiveStream(receive)


@dataclass
class EscapeWatch:
    """Exceptions that escaped to the event loop or to ``sys.unraisablehook``."""

    escaped: list[str]

    @classmethod
    @asynccontextmanager
    async def watching(cls) -> AsyncIterator[EscapeWatch]:
        watch = cls([])
        previous_hook = sys.unraisablehook
        sys.unraisablehook = lambda info: watch.escaped.append(f"unraisable: {info.exc_value!r}")
        loop = _running_asyncio_loop()
        if loop is not None:
            loop.set_exception_handler(lambda _, context: watch.escaped.append(str(context)))
        try:
            yield watch
        finally:
            sys.unraisablehook = previous_hook
            if loop is not None:
                loop.set_exception_handler(None)


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None  # trio: an escaping exception ends trio.run and fails the test anyway


class FuzzRig:
    """The connection under test plus the raw peer that feeds it bytes."""

    def __init__(self, cx: Connection, to_cx: ByteQueueSendStream, from_cx: LineReader) -> None:
        self.cx = cx
        self._to_cx = to_cx
        self._from_cx = from_cx
        self._pings = itertools.count()
        self.cases = 0
        self.lines = 0

    @classmethod
    @asynccontextmanager
    async def open(cls) -> AsyncIterator[FuzzRig]:
        to_cx, cx_in = byte_pipe(buffer=1)
        cx_out, from_cx = byte_pipe(buffer=float("inf"))
        lines = LineTransport(cx_in, cx_out, max_message_bytes=FUZZ_LIMIT)
        with open(os.devnull, "w", encoding="utf-8") as trace:  # noqa: ASYNC230 (never blocks)
            transport = TracingTransport(lines, jsonl_sink(trace))
            async with EscapeWatch.watching() as watch, fuzz_builder().connect(transport) as cx:
                rig = cls(cx, to_cx, LineReader(from_cx))
                assert await rig._replies_until_ping() == []  # the stream's start is behind us
                yield rig
                assert not watch.escaped, watch.escaped
            assert not watch.escaped, watch.escaped

    async def run_case(self, items: Iterable[Any], chunks: Iterable[int] = ()) -> None:
        """Send one case (items materialized against fresh outgoing requests), check it."""
        outcomes: dict[int, list[Any]] = {}
        ids = [self._send_outgoing(outcomes) for _ in range(OUTGOING_PER_CASE)]
        for _ in ids:
            assert (await self._receive())["method"] == "probe"
        payload = b"".join(materialize(item, ids) + b"\n" for item in items)
        expected = expect(payload, FUZZ_LIMIT, set(ids))
        await self._write(payload, chunks)
        replies = await self._replies_until_ping()
        self._check_replies(replies, expected)
        await self._finish_outgoing(ids, outcomes, expected)
        assert self.cx.incoming_request_count == 0
        assert not self.cx.is_incoming_closed
        self.cases += 1
        self.lines += payload.count(b"\n")

    def _send_outgoing(self, outcomes: dict[int, list[Any]]) -> int:
        request = self.cx.send_raw_request("probe", {"n": len(outcomes)})
        slot = outcomes.setdefault(request.id, [])

        async def record(outcome: JsonValue | RequestError) -> None:
            slot.append(outcome)

        request.on_receiving_result(record)
        return request.id

    async def _write(self, payload: bytes, chunks: Iterable[int]) -> None:
        start = 0
        for size in chunks:
            if start >= len(payload):
                break
            await self._to_cx.send(payload[start : start + size])
            start += size
        if start < len(payload):
            await self._to_cx.send(payload[start:])

    async def _receive(self) -> Any:
        with anyio.fail_after(5):
            return strict_json(await self._from_cx.receive())

    async def _replies_until_ping(self) -> list[Any]:
        ping_id = f"fuzz-rig-ping-{next(self._pings)}"  # longer than any generated string id
        await self._to_cx.send(
            json.dumps({"jsonrpc": "2.0", "id": ping_id, "method": ECHO}).encode() + b"\n"
        )
        replies = []
        while True:
            message = await self._receive()
            if message.get("id") == ping_id:
                assert message == {"jsonrpc": "2.0", "id": ping_id, "result": {"params": None}}
                return replies
            replies.append(message)

    @staticmethod
    def _check_replies(replies: list[Any], expected: Expectation) -> None:
        assert len(replies) == len(expected.replies), (replies, expected.replies)
        for reply, want in zip(replies, expected.replies, strict=True):
            assert want.matches(reply), (reply, want)

    async def _finish_outgoing(
        self, ids: list[int], outcomes: dict[int, list[Any]], expected: Expectation
    ) -> None:
        for request_id in ids:
            if request_id in expected.settled:
                kind, value = expected.settled[request_id]
                (got,) = outcomes[request_id]
                if kind == "result":
                    assert got == value
                else:
                    assert isinstance(got, RequestError) and got.code == value
            else:
                assert outcomes[request_id] == []
                line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": "done"})
                await self._to_cx.send(line.encode() + b"\n")
        assert await self._replies_until_ping() == []
        for request_id in ids:
            assert len(outcomes[request_id]) == 1, outcomes[request_id]
        assert self.cx.pending_request_count == 0


@dataclass(frozen=True)
class RespondTo:
    """A fuzzed response aimed at the case's ``slot``-th outgoing request.

    ``id_form`` picks how the id is written (only ``"int"`` is the exact id);
    ``body`` is the rest of the envelope.
    """

    slot: int
    id_form: str
    body: tuple[tuple[str, Any], ...]


def materialize(item: bytes | RespondTo, ids: list[int]) -> bytes:
    """The bytes of one case item; a :class:`RespondTo` gets the real outgoing id."""
    if isinstance(item, bytes):
        return item
    request_id = ids[item.slot % len(ids)]
    written: Any = {
        "int": request_id,
        "str": str(request_id),
        "float": float(request_id),
        "unknown": request_id + 1_000_000,
    }[item.id_form]
    message = {"id": written, **dict(item.body)}
    return json.dumps(message).encode()
