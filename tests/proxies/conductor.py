"""A minimal conductor for tests: client <-> conductor <-> [proxy, ..., proxy, agent].

It routes the way the Rust SDK's conductor does, built from this SDK's own pieces:
every hop re-issues requests under its own id with ``send_proxied_message_to`` (so
cancellation crosses hop by hop and raw cancels are never tunnelled); messages a proxy
sends inside ``_proxy/successor`` go to the next component unwrapped; messages a
component sends plain go to its predecessor, wrapped when that predecessor is a proxy;
and ``initialize`` reaches a proxy as ``_proxy/initialize``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial

from acp_runtime import Connection, ConnectionBuilder, JsonValue, Responder, Transport
from acp_runtime._successor import ENVELOPE_METHODS, PROXY_INITIALIZE_METHOD, open_envelope
from acp_runtime.proxies import (
    COUNTERPART,
    SUCCESSOR,
    ProxiedMessage,
    ProxiedNotification,
    ProxiedRequest,
)


class Conductor:
    def __init__(self, components: int) -> None:
        self.count = components
        self.client_builder = (
            ConnectionBuilder()
            .on_raw_request(self._client_request)
            .on_raw_notification(self._client_notification)
        )
        self.component_builders = [
            ConnectionBuilder()
            .on_raw_request(partial(self._component_request, i))
            .on_raw_notification(partial(self._component_notification, i))
            for i in range(components)
        ]
        self.client: Connection | None = None
        self.components: list[Connection] = []

    @asynccontextmanager
    async def connect(
        self, client: Transport, components: Sequence[Transport]
    ) -> AsyncGenerator[Conductor]:
        async with AsyncExitStack() as stack:
            for builder, transport in zip(self.component_builders, components, strict=True):
                self.components.append(await stack.enter_async_context(builder.connect(transport)))
            self.client = await stack.enter_async_context(self.client_builder.connect(client))
            yield self

    def _is_proxy(self, index: int) -> bool:
        return index < self.count - 1

    def _down(self, index: int, message: ProxiedMessage) -> None:
        """To component ``index``, plain; a proxy is initialized with ``_proxy/initialize``."""
        if (
            isinstance(message, ProxiedRequest)
            and message.method == "initialize"
            and self._is_proxy(index)
        ):
            message = ProxiedRequest(PROXY_INITIALIZE_METHOD, message.params, message.responder)
        self.components[index].send_proxied_message_to(COUNTERPART, message)

    def _up(self, index: int, message: ProxiedMessage) -> None:
        """From component ``index`` to its predecessor."""
        if index == 0:
            assert self.client is not None
            self.client.send_proxied_message_to(COUNTERPART, message)
        else:
            self.components[index - 1].send_proxied_message_to(SUCCESSOR, message)

    async def _client_request(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        self._down(0, ProxiedRequest(method, params, responder))

    async def _client_notification(self, method: str, params: JsonValue, cx: Connection) -> None:
        self._down(0, ProxiedNotification(method, params))

    async def _component_request(
        self, index: int, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> None:
        envelope = open_envelope(method, params) if method in ENVELOPE_METHODS else None
        if envelope is not None:
            self._down(index + 1, ProxiedRequest(envelope.method, envelope.params, responder))
        else:
            self._up(index, ProxiedRequest(method, params, responder))

    async def _component_notification(
        self, index: int, method: str, params: JsonValue, cx: Connection
    ) -> None:
        envelope = open_envelope(method, params) if method in ENVELOPE_METHODS else None
        if envelope is not None:
            self._down(index + 1, ProxiedNotification(envelope.method, envelope.params))
        else:
            self._up(index, ProxiedNotification(method, params))
