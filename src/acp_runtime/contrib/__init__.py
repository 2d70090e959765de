"""Stateful helpers for agent and client authors, on top of the generated facades.

* :class:`SessionAccumulator` (client): the current state of each session, folded from its
  ``session/update`` stream, with subscribers;
* :class:`ToolCallTracker` (agent): tool calls with fresh ids, their updates, completion
  and failure, sent through the ``RemoteClient`` facade;
* :class:`PermissionBroker` (agent): asks the client with ``session/request_permission``
  and returns the option chosen, or that the turn was cancelled;
* :class:`PromptTurns` (agent): runs each prompt turn as spawned work under one
  cancellation that ``session/cancel`` and ``$/cancel_request`` both set.

They know no schema version: they take the generated facade and builders of the version
in use (``acp_generated.v1.RemoteClient``, ``acp_generated.v1.builders``) and read updates
by their wire tags.
"""

from ._permissions import PermissionBroker as PermissionBroker
from ._permissions import PermissionDecision as PermissionDecision
from ._session_state import Message as Message
from ._session_state import SessionAccumulator as SessionAccumulator
from ._session_state import SessionState as SessionState
from ._session_state import ToolCallState as ToolCallState
from ._tool_calls import ToolCallTracker as ToolCallTracker
from ._tool_calls import TrackedToolCall as TrackedToolCall
from ._turns import PromptTurns as PromptTurns
from ._turns import Turn as Turn

__all__ = [
    "Message",
    "PermissionBroker",
    "PermissionDecision",
    "PromptTurns",
    "SessionAccumulator",
    "SessionState",
    "ToolCallState",
    "ToolCallTracker",
    "TrackedToolCall",
    "Turn",
]
