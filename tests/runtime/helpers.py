"""Shared test fixtures for the runtime spec tests: a typed binding and parking handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    NotificationMethod,
    RequestMethod,
    Responder,
    TypedNotification,
    TypedRequest,
    memory_pair,
)

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


def request(
    request_id: JsonValue, method: str = "test/ask", params: JsonValue = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: JsonValue = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def cancel(request_id: JsonValue) -> dict[str, Any]:
    return notification(CANCEL, {"requestId": request_id})


def result(request_id: JsonValue, value: JsonValue) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: JsonValue, code: int, message: str, data: JsonValue = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


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
