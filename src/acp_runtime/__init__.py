"""ACP runtime: JSON-RPC connection, dispatch, settlement and cancellation on anyio.

Knows nothing of any schema version; typed bindings from ``acp_generated`` plug in
through :mod:`acp_runtime.methods`.

Names load on first access (PEP 562): an agent that never proxies, routes versions or
spawns a process does not import those modules, and ``acp_runtime.lenient`` (which every
generated model imports) does not pull in the whole runtime. Checkers see the imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from .builder import ConnectionBuilder as ConnectionBuilder
    from .cancellation import CancellationMarker as CancellationMarker
    from .connection import Connection as Connection
    from .errors import DeadlockError as DeadlockError
    from .errors import ErrorCode as ErrorCode
    from .errors import RequestError as RequestError
    from .framing import DEFAULT_MAX_MESSAGE_BYTES as DEFAULT_MAX_MESSAGE_BYTES
    from .framing import LineTransport as LineTransport
    from .handler_class import not_a_handler as not_a_handler
    from .handlers import NotificationHandler as NotificationHandler
    from .handlers import RawNotificationHandler as RawNotificationHandler
    from .handlers import RawRequestHandler as RawRequestHandler
    from .handlers import RequestHandler as RequestHandler
    from .jsonrpc import RequestId as RequestId
    from .memory import MemoryTransport as MemoryTransport
    from .memory import memory_pair as memory_pair
    from .methods import JsonValue as JsonValue
    from .methods import NotificationMethod as NotificationMethod
    from .methods import RequestMethod as RequestMethod
    from .methods import TypedNotification as TypedNotification
    from .methods import TypedRequest as TypedRequest
    from .peer import COUNTERPART as COUNTERPART
    from .peer import Peer as Peer
    from .process import AgentProcess as AgentProcess
    from .process import spawn_agent as spawn_agent
    from .proxied import ProxiedMessage as ProxiedMessage
    from .proxied import ProxiedNotification as ProxiedNotification
    from .proxied import ProxiedRequest as ProxiedRequest
    from .proxy import ConductedProxy as ConductedProxy
    from .proxy import Proxy as Proxy
    from .responder import Responder as Responder
    from .roles import Role as Role
    from .run import connect_to_agent as connect_to_agent
    from .run import run_agent as run_agent
    from .run import serve_agent as serve_agent
    from .sent_request import RequestCancellationHandle as RequestCancellationHandle
    from .sent_request import SentRequest as SentRequest
    from .stderr_log import StderrLogHandler as StderrLogHandler
    from .stderr_log import log_nothing as log_nothing
    from .stderr_log import log_to_stderr as log_to_stderr
    from .stdio import stdio_transport as stdio_transport
    from .successor import SUCCESSOR as SUCCESSOR
    from .successor import SuccessorPeer as SuccessorPeer
    from .trace import TraceEvent as TraceEvent
    from .trace import TraceSink as TraceSink
    from .trace import TracingTransport as TracingTransport
    from .trace import jsonl_sink as jsonl_sink
    from .trace import logging_sink as logging_sink
    from .transport import MessageTooLarge as MessageTooLarge
    from .transport import Transport as Transport
    from .version_router import Routed as Routed
    from .version_router import VersionRouter as VersionRouter

_EXPORTS: dict[str, str] = {
    "AgentProcess": "process",
    "COUNTERPART": "peer",
    "CancellationMarker": "cancellation",
    "ConductedProxy": "proxy",
    "Connection": "connection",
    "ConnectionBuilder": "builder",
    "DEFAULT_MAX_MESSAGE_BYTES": "framing",
    "DeadlockError": "errors",
    "ErrorCode": "errors",
    "JsonValue": "methods",
    "LineTransport": "framing",
    "MemoryTransport": "memory",
    "MessageTooLarge": "transport",
    "NotificationHandler": "handlers",
    "NotificationMethod": "methods",
    "Peer": "peer",
    "ProxiedMessage": "proxied",
    "ProxiedNotification": "proxied",
    "ProxiedRequest": "proxied",
    "Proxy": "proxy",
    "RawNotificationHandler": "handlers",
    "RawRequestHandler": "handlers",
    "RequestCancellationHandle": "sent_request",
    "RequestError": "errors",
    "RequestHandler": "handlers",
    "RequestId": "jsonrpc",
    "RequestMethod": "methods",
    "Responder": "responder",
    "Role": "roles",
    "Routed": "version_router",
    "SUCCESSOR": "successor",
    "SentRequest": "sent_request",
    "StderrLogHandler": "stderr_log",
    "SuccessorPeer": "successor",
    "TraceEvent": "trace",
    "TraceSink": "trace",
    "TracingTransport": "trace",
    "Transport": "transport",
    "TypedNotification": "methods",
    "TypedRequest": "methods",
    "VersionRouter": "version_router",
    "connect_to_agent": "run",
    "jsonl_sink": "trace",
    "log_nothing": "stderr_log",
    "log_to_stderr": "stderr_log",
    "logging_sink": "trace",
    "memory_pair": "memory",
    "not_a_handler": "handler_class",
    "run_agent": "run",
    "serve_agent": "run",
    "spawn_agent": "process",
    "stdio_transport": "stdio",
}
"""Each public name and the module that defines it."""


if not TYPE_CHECKING:  # checkers see the imports above, so a misspelt name is an error
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "COUNTERPART",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "SUCCESSOR",
    "AgentProcess",
    "CancellationMarker",
    "ConductedProxy",
    "Connection",
    "ConnectionBuilder",
    "DeadlockError",
    "ErrorCode",
    "JsonValue",
    "LineTransport",
    "MemoryTransport",
    "MessageTooLarge",
    "NotificationHandler",
    "NotificationMethod",
    "Peer",
    "ProxiedMessage",
    "ProxiedNotification",
    "ProxiedRequest",
    "Proxy",
    "RawNotificationHandler",
    "RawRequestHandler",
    "RequestCancellationHandle",
    "RequestError",
    "RequestHandler",
    "RequestId",
    "RequestMethod",
    "Responder",
    "Role",
    "Routed",
    "SentRequest",
    "StderrLogHandler",
    "SuccessorPeer",
    "TraceEvent",
    "TraceSink",
    "TracingTransport",
    "Transport",
    "TypedNotification",
    "TypedRequest",
    "VersionRouter",
    "connect_to_agent",
    "jsonl_sink",
    "log_nothing",
    "log_to_stderr",
    "logging_sink",
    "memory_pair",
    "not_a_handler",
    "run_agent",
    "serve_agent",
    "spawn_agent",
    "stdio_transport",
]
