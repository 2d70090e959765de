"""The HTTP and combined ASGI apps take the WebSocket app's factory and hook types; the
hook may answer a bool, a Refusal, or either awaited."""

from __future__ import annotations

from collections.abc import Mapping

from typing_extensions import reveal_type

from acp_generated.v1 import AgentHandler
from acp_runtime import ConnectionBuilder
from acp_runtime.proxies import VersionRouter
from acp_runtime.remote import HttpLimits, Refusal, acp_app, http_app
from acp_runtime.remote._http_connection import HttpConnection


class Agent(AgentHandler):
    pass


def router() -> VersionRouter:
    return VersionRouter(v1=ConnectionBuilder(role="agent"))


def allow(headers: Mapping[str, str]) -> bool:
    return "authorization" in headers


async def refuse(headers: Mapping[str, str]) -> bool | Refusal:
    return Refusal(401, challenge="Bearer")


def wrong(headers: Mapping[str, str]) -> str:
    return "yes"


def takes_connection(connection: HttpConnection) -> None: ...


def use() -> None:
    reveal_type(http_app(Agent))  # expect: StreamableHttpApp
    reveal_type(acp_app(router, authenticate=refuse))  # expect: AcpApp
    http_app(router, authenticate=allow, idle_timeout=30.0, max_buffered_bytes=1 << 20)
    acp_app(Agent, limits=HttpLimits(stall_timeout=5.0))
    app = http_app(Agent)
    takes_connection(app.connection("id"))  # expect-error: None when unknown
    connection = app.connection("id")
    if connection is not None:
        reveal_type(connection.buffered_bytes)  # expect: int
    http_app(Agent, authenticate=wrong)  # expect-error
    http_app(Agent, idle_timeout="soon")  # expect-error
    Refusal(404)  # expect-error
    http_app(42)  # expect-error
