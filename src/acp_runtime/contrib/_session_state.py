"""The client side's view of a session: its ``session/update`` stream folded into a state.

A client feeds every notification it receives to :meth:`SessionAccumulator.apply` (from its
``session_update`` handler) and reads :meth:`~SessionAccumulator.state`, or subscribes to be
called with each new state::

    sessions = SessionAccumulator()
    sessions.subscribe(lambda state, update: render(state))

    class Client(v1.ClientHandler):
        async def session_update(self, params, cx):
            sessions.apply(params)

States are immutable snapshots: a subscriber may keep one while later updates arrive.
Updates are read by their wire tags (``agent_message_chunk``, ``tool_call``, ...), so any
protocol version whose updates carry these shapes works; other kinds are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, Protocol

Role = Literal["user", "agent", "thought"]
"""Who a message is from: the user, the agent, or the agent's visible reasoning."""

_CHUNK_ROLES: dict[str, Role] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
_TOOL_FIELDS = ("title", "kind", "status", "content", "locations", "raw_input", "raw_output")

Subscriber = Callable[["SessionState", Any], None]
"""Called with the new state and the update that made it."""


class SessionNotificationLike(Protocol):
    """A ``session/update`` notification's params (``SessionNotification`` of any version)."""

    @property
    def session_id(self) -> str: ...

    @property
    def update(self) -> object: ...


@dataclass(frozen=True)
class Message:
    """Consecutive chunks from one role (and one ``message_id``, when the agent gives them)."""

    role: Role
    message_id: str | None = None
    content: tuple[Any, ...] = ()
    """The content blocks, as received."""

    @property
    def text(self) -> str:
        """The text of its text blocks, joined."""
        return "".join(_text_of(block) for block in self.content)


@dataclass(frozen=True)
class ToolCallState:
    """A tool call's latest known fields: the start, with each update's changes applied."""

    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: tuple[Any, ...] = ()
    locations: tuple[Any, ...] = ()
    raw_input: Any = None
    raw_output: Any = None


@dataclass(frozen=True)
class SessionState:
    """One session as its updates have told it so far."""

    session_id: str
    messages: tuple[Message, ...] = ()
    plan: tuple[Any, ...] = ()
    """The entries of the latest plan (each plan replaces the whole list)."""
    tool_calls: Mapping[str, ToolCallState] = field(default_factory=lambda: MappingProxyType({}))
    """By id, in the order they started."""
    current_mode_id: str | None = None

    def text(self, role: Role = "agent") -> str:
        """All text from ``role`` so far, messages joined as they came."""
        return "".join(m.text for m in self.messages if m.role == role)

    @property
    def last_message(self) -> Message | None:
        return self.messages[-1] if self.messages else None


class SessionAccumulator:
    """Folds ``session/update`` notifications into one :class:`SessionState` per session."""

    def __init__(self) -> None:
        self._states: dict[str, SessionState] = {}
        self._subscribers: list[Subscriber] = []

    def state(self, session_id: str) -> SessionState:
        """The session's current state (empty if nothing arrived for it yet)."""
        return self._states.get(session_id) or SessionState(session_id)

    @property
    def sessions(self) -> Mapping[str, SessionState]:
        """Every session seen, by id (a read-only view)."""
        return MappingProxyType(self._states)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber(state, update)`` after every update that changes a state;
        returns the function that unsubscribes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def apply(self, notification: SessionNotificationLike) -> SessionState:
        """Fold one notification in; returns the session's state after it."""
        before = self.state(notification.session_id)
        update = notification.update
        after = _fold(before, update)
        if after is before:
            return before
        self._states[after.session_id] = after
        for subscriber in list(self._subscribers):
            subscriber(after, update)
        return after

    def forget(self, session_id: str) -> None:
        """Drop a session's state (after ``session/close``, say)."""
        self._states.pop(session_id, None)


def _fold(state: SessionState, update: object) -> SessionState:
    tag = getattr(update, "session_update", None)
    if tag in _CHUNK_ROLES:
        return _add_chunk(state, _CHUNK_ROLES[tag], update)
    if tag == "plan":
        return replace(state, plan=tuple(getattr(update, "entries", ())))
    if tag in ("tool_call", "tool_call_update"):
        return _merge_tool_call(state, update, start=tag == "tool_call")
    if tag == "current_mode_update":
        return replace(state, current_mode_id=getattr(update, "current_mode_id", None))
    return state


def _add_chunk(state: SessionState, role: Role, update: object) -> SessionState:
    block = getattr(update, "content", None)
    message_id = getattr(update, "message_id", None)
    last = state.last_message
    if last is not None and last.role == role and last.message_id == message_id:
        grown = replace(last, content=(*last.content, block))
        return replace(state, messages=(*state.messages[:-1], grown))
    return replace(state, messages=(*state.messages, Message(role, message_id, (block,))))


def _merge_tool_call(state: SessionState, update: object, *, start: bool) -> SessionState:
    call_id = str(getattr(update, "tool_call_id", ""))
    known = state.tool_calls.get(call_id)
    base = ToolCallState(call_id) if start or known is None else known
    changes: dict[str, Any] = {}
    for name in _TOOL_FIELDS:
        value = getattr(update, name, None)
        if value is not None:  # absent or null: unchanged (the protocol's rule for updates)
            changes[name] = tuple(value) if name in ("content", "locations") else value
    calls = dict(state.tool_calls)
    calls[call_id] = replace(base, **changes)
    return replace(state, tool_calls=MappingProxyType(calls))


def _text_of(block: object) -> str:
    return str(getattr(block, "text", "")) if getattr(block, "type", None) == "text" else ""
