"""MCP over ACP: the editor's MCP servers for the agent, through the ACP connection.

Two wire bindings, both served (read by the keys of each ``mcp/message``):

=============  ==============================================================  ==========================================
binding        who speaks it                                                   wire
=============  ==============================================================  ==========================================
stateless      TypeScript SDK 2.4.0 (``McpOverAcpProvider``/``Caller``), the    ``mcp/message {serverId, requestId, ...}``,
               ACP schemas this SDK is generated from (``MessageMcpRequest``)   carrier ``{"result"}``/``{"error"}``,
                                                                               MCP 2026-07-28 inside
connect        spec repository schema of August 2026 and its RFD, Rust SDK      ``mcp/connect`` -> ``connectionId``,
               2.x before its stateless switch, Go SDK, the PyPI                ``mcp/message {connectionId, ...}``,
               ``agent-client-protocol`` models (never dispatched there)        ``mcp/disconnect``; stateful MCP inside
=============  ==============================================================  ==========================================

* :class:`McpProvider` (the editor): register MCP servers on a connection, put their
  :attr:`~McpServerRegistration.declaration` in ``session/new``.
* :class:`McpCaller` (the agent): :meth:`McpCaller.session` is an MCP SDK ``ClientSession``
  over ACP; :func:`acp_servers` finds the declared servers.

Importing this package needs nothing beyond the runtime; the MCP SDK parts (serving an
MCP SDK server, ``ClientSession``) need the ``mcp`` extra and import it when used.
"""

from .caller import Binding as Binding
from .caller import DeclaredServer as DeclaredServer
from .caller import McpCaller as McpCaller
from .caller import McpConnection as McpConnection
from .caller import McpNotification as McpNotification
from .caller import acp_servers as acp_servers
from .capabilities import accepts_mcp_over_acp as accepts_mcp_over_acp
from .capabilities import advertise_mcp_over_acp as advertise_mcp_over_acp
from .provider import McpHandler as McpHandler
from .provider import McpProvider as McpProvider
from .provider import McpRequest as McpRequest
from .provider import McpServerRegistration as McpServerRegistration
from .provider import ServerBackend as ServerBackend
from .wire import MCP_PROTOCOL_VERSION as MCP_PROTOCOL_VERSION
from .wire import BindingErrorCode as BindingErrorCode
from .wire import McpError as McpError

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
