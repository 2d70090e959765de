"""What both remote servers (WebSocket and Streamable HTTP) share: the handler factory
they call once per ACP connection, and the authentication hook they ask first."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from .._builder import ConnectionBuilder
from .._run import Attachable
from .._transport import Transport

log = logging.getLogger(__name__)


@runtime_checkable
class Servable(Protocol):
    """What serves one connection: a :class:`~acp_runtime.ConnectionBuilder` or a
    :class:`~acp_runtime.VersionRouter`."""

    async def serve(self, transport: Transport) -> None: ...


HandlerFactory = Callable[[], "Servable | Attachable"]
"""Called once per ACP connection: a builder or router to serve it, or a handler with
``.attach`` (an ``AgentHandler`` subclass; called with no arguments, the class itself
will do)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """An ``authenticate`` hook's "no", when plain ``False`` (403) is not the answer wanted:
    ``Refusal(401, challenge='Bearer')`` answers 401 with ``WWW-Authenticate: Bearer``."""

    status: Literal[401, 403] = 403
    challenge: str | None = None


Authenticate = Callable[[Mapping[str, str]], "bool | Refusal | Awaitable[bool | Refusal]"]
"""Sees the request's headers (lower-case names): True lets it through, False refuses
with 403, a :class:`Refusal` with its own status."""

FORBIDDEN: Refusal = Refusal(403)


def servable(made: Servable | Attachable) -> Servable:
    """What the factory made, as something with ``serve``: a handler is attached to a
    fresh agent-side builder."""
    if isinstance(made, Servable):
        return made
    builder = ConnectionBuilder(role="agent")
    made.attach(builder)
    return builder


async def refusal(authenticate: Authenticate | None, headers: Mapping[str, str]) -> Refusal | None:
    """None when the request may pass, else how to refuse it. A hook that raises refuses
    with 403 (logged by exception type only: its message could quote a header)."""
    if authenticate is None:
        return None
    try:
        verdict = authenticate(headers)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:
        log.error("the authenticate hook raised %s: refusing the request", type(exc).__name__)
        return FORBIDDEN
    if verdict is True:
        return None
    if isinstance(verdict, Refusal):
        return verdict
    return FORBIDDEN
