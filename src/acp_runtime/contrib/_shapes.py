"""What the helpers need of the generated code, as protocols (no schema version imported).

``acp_generated.vN.RemoteClient`` and the module ``acp_generated.vN.builders`` satisfy them
as they are; the helpers' own signatures carry the types users see.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol


class UpdateSender(Protocol):
    """Sends ``session/update``: what :class:`RemoteClient.session_update` does."""

    def session_update(self, *, session_id: str, update: Any) -> Awaitable[None]: ...


class PermissionAsker(Protocol):
    """Sends ``session/request_permission``: :class:`RemoteClient.request_permission`."""

    def request_permission(
        self, *, session_id: str, tool_call: Any, options: Any
    ) -> Awaitable[Any]: ...


class ToolCallBuilders(Protocol):
    """The ``tool_call`` / ``tool_call_update`` builders of a generated ``builders`` module."""

    def tool_call(
        self,
        *,
        tool_call_id: str,
        title: str,
        kind: Any = ...,
        status: Any = ...,
        content: Any = ...,
        locations: Any = ...,
        raw_input: Any = ...,
        raw_output: Any = ...,
    ) -> Any: ...

    def tool_call_update(
        self,
        *,
        tool_call_id: str,
        kind: Any = ...,
        status: Any = ...,
        title: Any = ...,
        content: Any = ...,
        locations: Any = ...,
        raw_input: Any = ...,
        raw_output: Any = ...,
    ) -> Any: ...
