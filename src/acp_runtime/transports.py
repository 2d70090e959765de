"""Transports: whole JSON-RPC messages over pipes, processes, memory and byte streams.

``stdio_transport``, ``memory_pair``, ``spawn_agent`` and ``Transport`` are also at the
root; this module adds what a custom transport or a tuned one needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from ._framing import DEFAULT_MAX_MESSAGE_BYTES as DEFAULT_MAX_MESSAGE_BYTES
    from ._framing import LineTransport as LineTransport
    from ._memory import MemoryTransport as MemoryTransport
    from ._memory import memory_pair as memory_pair
    from ._outbox import DEFAULT_HIGH_WATER_BYTES as DEFAULT_HIGH_WATER_BYTES
    from ._process import AgentProcess as AgentProcess
    from ._process import StderrHandling as StderrHandling
    from ._process import spawn_agent as spawn_agent
    from ._stdio import stdio_transport as stdio_transport
    from ._transport import MessageTooLarge as MessageTooLarge
    from ._transport import Transport as Transport

_EXPORTS: dict[str, str] = {
    "AgentProcess": "_process",
    "DEFAULT_HIGH_WATER_BYTES": "_outbox",
    "DEFAULT_MAX_MESSAGE_BYTES": "_framing",
    "LineTransport": "_framing",
    "MemoryTransport": "_memory",
    "MessageTooLarge": "_transport",
    "StderrHandling": "_process",
    "Transport": "_transport",
    "memory_pair": "_memory",
    "spawn_agent": "_process",
    "stdio_transport": "_stdio",
}
"""Each public name and the private module that defines it."""


if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name is an error
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, base="acp_runtime")

__all__ = [
    "DEFAULT_HIGH_WATER_BYTES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "AgentProcess",
    "LineTransport",
    "MemoryTransport",
    "MessageTooLarge",
    "StderrHandling",
    "Transport",
    "memory_pair",
    "spawn_agent",
    "stdio_transport",
]
