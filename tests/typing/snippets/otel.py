"""instrument() keeps the builder's type; custom instrumentations are checked structurally."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from opentelemetry.sdk.trace import TracerProvider
from typing_extensions import reveal_type

from acp_runtime import ConnectionBuilder, Peer, RequestError, RequestId
from acp_runtime._roles import Role
from acp_runtime.otel import Tracing, instrument
from acp_runtime.tracing import ConnectionObserver, Instrumentation, RequestSpan


class CountingSpan:
    def cancel_requested(self) -> None: ...

    def answered(self, error: RequestError | None) -> None: ...

    def abandoned(self, reason: str) -> None: ...

    def activated(self) -> AbstractContextManager[object]:
        return nullcontext()


class Counting:
    def incoming_request(self, method: str, request_id: RequestId, params: object) -> RequestSpan:
        return CountingSpan()

    def outgoing_request(self, method: str, request_id: RequestId, peer: Peer) -> RequestSpan:
        return CountingSpan()

    def closed(self) -> None: ...


class CountingInstrumentation:
    def connection(self, role: Role) -> ConnectionObserver:
        return Counting()


def use(builder: ConnectionBuilder) -> None:
    reveal_type(instrument(builder))  # expect: ConnectionBuilder
    reveal_type(instrument(builder, tracer_provider=TracerProvider()))  # expect: ConnectionBuilder
    instrumentation: Instrumentation = Tracing()
    reveal_type(builder.instrument(instrumentation))  # expect: ConnectionBuilder
    builder.instrument(CountingInstrumentation())
    instrument(builder, tracer_provider="global")  # expect-error
    builder.instrument(Counting())  # expect-error: an observer is made per connection
