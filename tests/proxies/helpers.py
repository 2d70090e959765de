"""Shared pieces for the proxy tests: raw wire peers on both sides of a proxy."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

from pydantic import BaseModel

from acp_runtime import JsonValue, RequestMethod, TypedRequest, memory_pair
from acp_runtime.proxy import Proxy
from acp_runtime.testing import WirePeer

CANCEL = "$/cancel_request"


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


CANCELLED = (-32800, "Request cancelled")


@asynccontextmanager
async def around(proxy: Proxy) -> AsyncGenerator[tuple[WirePeer, WirePeer]]:
    """Run ``proxy`` between two raw peers: (client side, agent side)."""
    up_ours, up_theirs = memory_pair()
    down_ours, down_theirs = memory_pair()
    async with proxy.connect(up_ours, down_ours):
        yield WirePeer(up_theirs), WirePeer(down_theirs)


class Answer(BaseModel):
    text: str


class Ask(BaseModel, TypedRequest[Answer]):
    question: str
    __acp_method__: ClassVar[RequestMethod[Ask, Answer]]


ASK: RequestMethod[Ask, Answer] = RequestMethod("test/ask", Ask, Answer, side="agent")
Ask.__acp_method__ = ASK
