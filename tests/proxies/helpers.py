"""Shared pieces for the proxy tests: raw wire peers on both sides of a proxy."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import ClassVar

from pydantic import BaseModel

from acp_runtime import RequestMethod, memory_pair
from acp_runtime.codegen_support import TypedRequest
from acp_runtime.proxies import Proxy
from acp_runtime.testing import WirePeer
from acp_runtime.testing import cancel as cancel
from acp_runtime.testing import error as error
from acp_runtime.testing import notification as notification
from acp_runtime.testing import request as request
from acp_runtime.testing import result as result

CANCEL = "$/cancel_request"


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
