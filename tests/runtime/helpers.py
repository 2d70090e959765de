"""Shared test fixtures for the runtime spec tests: a typed binding and parking handlers."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import ClassVar

import anyio
from pydantic import BaseModel

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    NotificationMethod,
    RequestMethod,
    Responder,
    memory_pair,
)
from acp_runtime._stdio import FdReceiveStream, FdSendStream
from acp_runtime.codegen_support import TypedNotification, TypedRequest
from acp_runtime.testing import cancel as cancel
from acp_runtime.testing import error as error
from acp_runtime.testing import notification as notification
from acp_runtime.testing import request as request
from acp_runtime.testing import result as result
from acp_runtime.transports import LineTransport

CANCEL = "$/cancel_request"


class Answer(BaseModel):
    text: str


class Ask(BaseModel, TypedRequest[Answer]):
    question: str
    __acp_method__: ClassVar[RequestMethod[Ask, Answer]]


class Note(BaseModel, TypedNotification):
    text: str


ASK: RequestMethod[Ask, Answer] = RequestMethod("test/ask", Ask, Answer, side="agent")
Ask.__acp_method__ = ASK
NOTE: NotificationMethod[Note] = NotificationMethod("test/note", Note, side="agent")
Note.__acp_method__ = NOTE


def pipe_transports() -> tuple[LineTransport, LineTransport]:
    """The two ends of a link over two OS pipes, as an agent and its client have; each
    end closes its descriptors."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    ours = LineTransport(
        FdReceiveStream(in_read, close_fd=True), FdSendStream(out_write, close_fd=True)
    )
    theirs = LineTransport(
        FdReceiveStream(out_read, close_fd=True), FdSendStream(in_write, close_fd=True)
    )
    return ours, theirs


class Parking:
    """A raw request handler that parks every request until the test answers it."""

    def __init__(self) -> None:
        self.responders: dict[str, Responder[JsonValue]] = {}
        self.arrived: dict[str, anyio.Event] = {}
        self.cancels_seen: list[JsonValue] = []

    def event(self, method: str) -> anyio.Event:
        return self.arrived.setdefault(method, anyio.Event())

    async def handle(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        self.responders[method] = responder
        self.event(method).set()
        return None

    async def parked(self, method: str) -> Responder[JsonValue]:
        with anyio.fail_after(5):
            await self.event(method).wait()
        return self.responders[method]

    async def observe_cancel(self, method: str, params: JsonValue, cx: Connection) -> None:
        if method == CANCEL:
            assert isinstance(params, dict)
            self.cancels_seen.append(params["requestId"])

    def builder(self) -> ConnectionBuilder:
        return (
            ConnectionBuilder().on_raw_request(self.handle).on_raw_notification(self.observe_cancel)
        )


@asynccontextmanager
async def connected(
    near: ConnectionBuilder, far: ConnectionBuilder
) -> AsyncIterator[tuple[Connection, Connection]]:
    """Two connections over an in-memory pair."""
    a, b = memory_pair()
    async with near.connect(a) as near_cx, far.connect(b) as far_cx:
        yield near_cx, far_cx
