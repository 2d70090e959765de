"""ACP runtime: JSON-RPC connection, dispatch, settlement and cancellation on anyio.

The one documented way: an agent is a generated ``vN.AgentHandler`` subclass run by
:func:`run_agent`; a client is :func:`connect_to_agent` and the typed ``vN.RemoteAgent``.
This root exports what an author needs. The plumbing is in a few public submodules:
:mod:`acp_runtime.transports`, :mod:`acp_runtime.proxies`, :mod:`acp_runtime.tracing`, and
the subpackages ``remote``, ``mcp``, ``contrib``, ``testing``, ``otel``; generated packages
import :mod:`acp_runtime.codegen_support`. Every other module is private (``_``-named).

Names load on first access (PEP 562): an agent that never spawns a process does not import
that module. Checkers see the imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from ._builder import ConnectionBuilder as ConnectionBuilder
    from ._cancellation import CancellationMarker as CancellationMarker
    from ._connection import Connection as Connection
    from ._errors import DeadlockError as DeadlockError
    from ._errors import ErrorCode as ErrorCode
    from ._errors import RequestError as RequestError
    from ._handler_class import not_a_handler as not_a_handler
    from ._jsonrpc import RequestId as RequestId
    from ._memory import memory_pair as memory_pair
    from ._methods import JsonValue as JsonValue
    from ._methods import NotificationMethod as NotificationMethod
    from ._methods import RequestMethod as RequestMethod
    from ._peer import Peer as Peer
    from ._process import AgentProcess as AgentProcess
    from ._process import spawn_agent as spawn_agent
    from ._responder import Responder as Responder
    from ._run import connect_to_agent as connect_to_agent
    from ._run import run_agent as run_agent
    from ._run import serve_agent as serve_agent
    from ._sent_request import RequestCancellationHandle as RequestCancellationHandle
    from ._sent_request import SentRequest as SentRequest
    from ._stdio import stdio_transport as stdio_transport
    from ._transport import Transport as Transport

_EXPORTS: dict[str, str] = {
    "AgentProcess": "_process",
    "CancellationMarker": "_cancellation",
    "Connection": "_connection",
    "ConnectionBuilder": "_builder",
    "DeadlockError": "_errors",
    "ErrorCode": "_errors",
    "JsonValue": "_methods",
    "NotificationMethod": "_methods",
    "Peer": "_peer",
    "RequestCancellationHandle": "_sent_request",
    "RequestError": "_errors",
    "RequestId": "_jsonrpc",
    "RequestMethod": "_methods",
    "Responder": "_responder",
    "SentRequest": "_sent_request",
    "Transport": "_transport",
    "connect_to_agent": "_run",
    "memory_pair": "_memory",
    "not_a_handler": "_handler_class",
    "run_agent": "_run",
    "serve_agent": "_run",
    "spawn_agent": "_process",
    "stdio_transport": "_stdio",
}
"""Each public name and the private module that defines it."""


if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name is an error
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AgentProcess",
    "CancellationMarker",
    "Connection",
    "ConnectionBuilder",
    "DeadlockError",
    "ErrorCode",
    "JsonValue",
    "NotificationMethod",
    "Peer",
    "RequestCancellationHandle",
    "RequestError",
    "RequestId",
    "RequestMethod",
    "Responder",
    "SentRequest",
    "Transport",
    "connect_to_agent",
    "memory_pair",
    "not_a_handler",
    "run_agent",
    "serve_agent",
    "spawn_agent",
    "stdio_transport",
]
