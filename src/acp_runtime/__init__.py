"""ACP runtime: JSON-RPC connection, dispatch, settlement and cancellation on anyio.

Knows nothing of any schema version; typed bindings from ``acp_generated`` plug in
through :mod:`acp_runtime.methods`.
"""

from .builder import ConnectionBuilder as ConnectionBuilder
from .cancellation import CancellationMarker as CancellationMarker
from .connection import Connection as Connection
from .errors import ErrorCode as ErrorCode
from .errors import RequestError as RequestError
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
from .responder import Responder as Responder
from .roles import Role as Role
from .sent_request import RequestCancellationHandle as RequestCancellationHandle
from .sent_request import SentRequest as SentRequest
from .transport import MessageTooLarge as MessageTooLarge
from .transport import Transport as Transport

__all__ = [
    "COUNTERPART",
    "CancellationMarker",
    "Connection",
    "ConnectionBuilder",
    "ErrorCode",
    "JsonValue",
    "MemoryTransport",
    "MessageTooLarge",
    "NotificationHandler",
    "NotificationMethod",
    "Peer",
    "RawNotificationHandler",
    "RawRequestHandler",
    "RequestCancellationHandle",
    "RequestError",
    "RequestHandler",
    "RequestId",
    "RequestMethod",
    "Responder",
    "Role",
    "SentRequest",
    "Transport",
    "TypedNotification",
    "TypedRequest",
    "memory_pair",
]
