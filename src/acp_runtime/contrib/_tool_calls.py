"""The agent side's tool calls: fresh ids, updates, completion, sent as ``session/update``.

A tool call is a ``tool_call`` update that starts it, then ``tool_call_update``s that change
it (status, content, locations), ending ``completed`` or ``failed``. The tracker keeps each
call's latest fields, so an update needs only what changed and :meth:`TrackedToolCall.as_update`
can hand the whole call to a permission request::

    tracker = ToolCallTracker(v1.RemoteClient(cx), v1.builders, session_id=sid)
    async with tracker.track(title="Read a.py", kind="read") as call:
        await call.update(status="in_progress")
        ...                                 # left normally: completed; by an error: failed

Every method sends through the facade and awaits its drain, so a stream of updates is paced
by a slow client instead of piling up.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from ._shapes import ToolCallBuilders, UpdateSender

_FINAL = frozenset({"completed", "failed"})
FAIL_TIMEOUT = 5.0
"""Seconds :meth:`ToolCallTracker.track` waits, shielded, to report a call failed on its
way out (a cancelled turn included)."""


def fresh_tool_call_id() -> str:
    """A new, unguessable id (``call_<32 hex digits>``)."""
    return f"call_{uuid.uuid4().hex}"


class TrackedToolCall:
    """One tool call of a :class:`ToolCallTracker`, with its latest fields."""

    def __init__(self, tracker: ToolCallTracker, tool_call_id: str, fields: dict[str, Any]) -> None:
        self._tracker = tracker
        self.tool_call_id = tool_call_id
        self._fields = fields

    @property
    def status(self) -> str | None:
        return self._fields.get("status")

    @property
    def is_finished(self) -> bool:
        """Completed or failed: no update follows."""
        return self.status in _FINAL

    def field(self, name: str) -> Any:
        """The latest value of a field (``title``, ``kind``, ``content``, ...), or ``None``."""
        return self._fields.get(name)

    async def update(
        self,
        *,
        title: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        content: Sequence[Any] | None = None,
        locations: Sequence[Any] | None = None,
        raw_input: Any = None,
        raw_output: Any = None,
    ) -> None:
        """Send a ``tool_call_update`` with the fields given (the others stay as they are)."""
        changes = _given(
            title=title,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
        )
        if self.is_finished:
            raise RuntimeError(f"tool call {self.tool_call_id} is already {self.status}")
        self._fields.update(changes)
        update = self._tracker.builders.tool_call_update(tool_call_id=self.tool_call_id, **changes)
        await self._tracker.send(update)

    async def complete(
        self, *, content: Sequence[Any] | None = None, raw_output: Any = None
    ) -> None:
        """Mark it ``completed``, with its final content or output if given."""
        await self.update(status="completed", content=content, raw_output=raw_output)

    async def fail(self, *, content: Sequence[Any] | None = None, raw_output: Any = None) -> None:
        """Mark it ``failed``; ``content`` can say why."""
        await self.update(status="failed", content=content, raw_output=raw_output)

    def as_update(self) -> Any:
        """The whole call as a ``tool_call_update`` (the ``tool_call`` a permission request
        names), built with the tracker's builders; nothing is sent."""
        return self._tracker.builders.tool_call_update(
            tool_call_id=self.tool_call_id, **self._fields
        )

    def __repr__(self) -> str:
        return f"<TrackedToolCall {self.tool_call_id} status={self.status}>"


class ToolCallTracker:
    """Starts and follows the tool calls of one session.

    ``client`` is the agent's facade for the client (``acp_generated.vN.RemoteClient``) and
    ``builders`` the same version's ``builders`` module.
    """

    def __init__(
        self,
        client: UpdateSender,
        builders: ToolCallBuilders,
        *,
        session_id: str,
        new_id: Callable[[], str] = fresh_tool_call_id,
    ) -> None:
        self.client = client
        self.builders = builders
        self.session_id = session_id
        self._new_id = new_id
        self._calls: dict[str, TrackedToolCall] = {}

    @property
    def calls(self) -> dict[str, TrackedToolCall]:
        """Every call started, by id (a copy)."""
        return dict(self._calls)

    async def start(
        self,
        *,
        title: str,
        kind: str | None = None,
        status: str | None = "pending",
        content: Sequence[Any] | None = None,
        locations: Sequence[Any] | None = None,
        raw_input: Any = None,
        tool_call_id: str | None = None,
    ) -> TrackedToolCall:
        """Send the ``tool_call`` that starts a call (a fresh id unless one is given)."""
        call_id = tool_call_id if tool_call_id is not None else self._new_id()
        if call_id in self._calls:
            raise ValueError(f"tool call id {call_id!r} is already used in this session")
        fields = _given(
            title=title,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=raw_input,
        )
        call = TrackedToolCall(self, call_id, fields)
        self._calls[call_id] = call
        await self.send(self.builders.tool_call(tool_call_id=call_id, **fields))
        return call

    @asynccontextmanager
    async def track(
        self,
        *,
        title: str,
        kind: str | None = None,
        content: Sequence[Any] | None = None,
        locations: Sequence[Any] | None = None,
        raw_input: Any = None,
    ) -> AsyncGenerator[TrackedToolCall, None]:
        """Start a call for the block: left normally it is completed (unless the block
        finished it), left by an exception it is failed and the exception goes on."""
        call = await self.start(
            title=title, kind=kind, content=content, locations=locations, raw_input=raw_input
        )
        try:
            yield call
        except BaseException:
            if not call.is_finished:
                # Also when the turn is cancelled: the client should not show it running.
                # Shielded, since a cancelled scope would stop a sender at its first await.
                with anyio.move_on_after(FAIL_TIMEOUT, shield=True):
                    await call.fail()
            raise
        if not call.is_finished:
            await call.complete()

    async def send(self, update: Any) -> None:
        """Send one session update of this session and wait for the drain."""
        await self.client.session_update(session_id=self.session_id, update=update)


def _given(**fields: Any) -> dict[str, Any]:
    return {
        name: list(value) if name in ("content", "locations") else value
        for name, value in fields.items()
        if value is not None
    }
