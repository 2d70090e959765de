"""The machinery every version's test client shares: an agent handler and a scripted
client handler connected in memory, the agent's messages checked on the wire.

The agent runs in this process on the runtime's in-memory transport, exactly as it would
over stdio (the same connection code), with :class:`~acp_runtime.testing._validation.
MessageValidator` watching what it sends.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, cast

from .._builder import ConnectionBuilder
from .._connection import Connection
from .._memory import memory_pair
from .._run import Attachable
from .._trace import TracingTransport
from ._validation import Finding, MessageValidator


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
    except Exception as error:
        raise _sole(error) from None


def _sole(error: Exception) -> BaseException:
    """The one exception a test raised, out of the task groups that wrapped it (a test's
    failure reads as the assertion it is); a group that holds more is kept whole."""
    inner: BaseException = error
    while True:
        nested: Any = getattr(inner, "exceptions", None)
        if not isinstance(nested, tuple):
            return inner
        if len(nested) != 1:  # pyright: ignore[reportUnknownArgumentType]
            return error
        inner = cast(BaseException, nested[0])
