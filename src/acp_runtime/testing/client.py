"""The machinery every version's test client shares: an agent handler and a scripted
client handler connected in memory, the agent's messages checked on the wire.

The agent runs in this process on the runtime's in-memory transport, exactly as it would
over stdio (the same connection code), with :class:`~acp_runtime.testing.validation.
MessageValidator` watching what it sends.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from ..builder import ConnectionBuilder
from ..connection import Connection
from ..memory import memory_pair
from ..run import Attachable
from ..trace import TracingTransport
from .validation import Finding, MessageValidator

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup


class AgentProtocolError(AssertionError):
    """The agent sent something the strict schema refuses: each line names the message's
    method, the part (``params`` or ``result``) and the field path."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(
            "the agent sent invalid messages:\n" + "\n".join(f"  {f}" for f in findings)
        )
        self.findings = findings


def raise_on_errors(validator: MessageValidator) -> None:
    """Raise :class:`AgentProtocolError` for the errors not raised yet (warnings stay in
    ``validator.findings``)."""
    errors = validator.errors()
    if errors:
        validator.findings = [f for f in validator.findings if f.severity != "error"]
        raise AgentProtocolError(errors)


@asynccontextmanager
async def connect_in_memory(
    agent: Attachable, client: Attachable, validator: MessageValidator
) -> AsyncGenerator[Connection, None]:
    """The client's connection to ``agent``, both served in this task group's process."""
    client_end, agent_end = memory_pair()
    agent_builder = ConnectionBuilder(role="agent")
    agent.attach(agent_builder)
    client_builder = ConnectionBuilder(role="client")
    client.attach(client_builder)
    try:
        async with (
            agent_builder.connect(agent_end),
            client_builder.connect(TracingTransport(client_end, validator)) as cx,
        ):
            yield cx
    except BaseExceptionGroup as group:
        raise _sole(group) from None


def _sole(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception a test raised, out of the task groups that wrapped it (a test's
    failure reads as the assertion it is); the group itself when it holds more."""
    inner: BaseException = group
    while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
        inner = inner.exceptions[0]
    return group if isinstance(inner, BaseExceptionGroup) else inner
