"""MCP over ACP: the editor's MCP servers for the agent, through the ACP connection.

Two wire bindings, both served (each ``mcp/message`` is read by its keys):

* **stateless**: ``mcp/message {serverId, requestId, method, params}`` answered by a
  carrier ``{"result": ...}``/``{"error": ...}``, MCP 2026-07-28 inside. Spoken by the
  TypeScript SDK 2.4.0 (``McpOverAcpProvider``, ``McpOverAcpCaller``) and described by
  the ACP schemas this SDK is generated from (``MessageMcpRequest``).
* **connect**: ``mcp/connect`` -> ``connectionId``, ``mcp/message {connectionId, method,
  params}`` both ways with bare results, ``mcp/disconnect``; stateful MCP inside. Spoken
  by the spec repository's schema of August 2026 and its RFD, the Rust SDK before its
  switch to the stateless binding, the Go SDK, and modelled (never dispatched) by the
  PyPI ``agent-client-protocol`` 0.12.1.

* :class:`McpProvider` (the editor): register MCP servers on a connection, put their
  :attr:`~McpServerRegistration.declaration` in ``session/new``.
* :class:`McpCaller` (the agent): :meth:`McpCaller.session` is an MCP SDK ``ClientSession``
  over ACP; :func:`acp_servers` finds the declared servers.

Importing this package needs nothing beyond the runtime; the MCP SDK parts (serving an
MCP SDK server, ``ClientSession``) need the ``mcp`` extra and import it when used.
"""

from ._caller import DeclaredServer as DeclaredServer
from ._caller import McpCaller as McpCaller
from ._caller import acp_servers as acp_servers
from ._capabilities import accepts_mcp_over_acp as accepts_mcp_over_acp
from ._capabilities import advertise_mcp_over_acp as advertise_mcp_over_acp
from ._mcp_connection import Binding as Binding
from ._mcp_connection import McpConnection as McpConnection
from ._mcp_connection import McpNotification as McpNotification
from ._provider import McpProvider as McpProvider
from ._provider import McpServerRegistration as McpServerRegistration
from ._server_api import McpHandler as McpHandler
from ._server_api import McpRequest as McpRequest
from ._server_api import ServerBackend as ServerBackend
from ._wire import MCP_PROTOCOL_VERSION as MCP_PROTOCOL_VERSION
from ._wire import BindingErrorCode as BindingErrorCode
from ._wire import McpError as McpError

__all__ = [
    "MCP_PROTOCOL_VERSION",
    "Binding",
    "BindingErrorCode",
    "DeclaredServer",
    "McpCaller",
    "McpConnection",
    "McpError",
    "McpHandler",
    "McpNotification",
    "McpProvider",
    "McpRequest",
    "McpServerRegistration",
    "ServerBackend",
    "accepts_mcp_over_acp",
    "acp_servers",
    "advertise_mcp_over_acp",
]
