"""A scripted ACP v2 client for testing an agent in one process (v2 is experimental).

As :mod:`acp_runtime.testing.v1`, for the v2 prompt lifecycle: the ``session/prompt``
answer only says the message was inserted, and the turn ends with a ``state_update``
``idle``. :meth:`TestClient.prompt` waits for it and returns the turn's updates and its
stop reason. v2 clients serve no files or terminals, so there are no fakes for them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from acp_generated import v2
from acp_generated.v2 import methods as m

from .._connection import Connection
from .._responder import Responder
from .._run import Attachable
from ._client import connect_in_memory, raise_on_errors
from ._fakes import PermissionRule, choose_option
from ._validation import Finding, MessageValidator

__all__ = ["ScriptedClient", "TestClient", "agent_client", "stop_reason_of", "text_of"]


class ScriptedClient(v2.ClientHandler):
    """The client side: records updates, answers permissions by a rule."""

    def __init__(self, permission: PermissionRule[v2.RequestPermissionRequest]) -> None:
        self.permission: PermissionRule[v2.RequestPermissionRequest] = permission
        self.notifications: list[v2.UpdateSessionNotification] = []
        self.permission_requests: list[v2.RequestPermissionRequest] = []
        self.arrived = anyio.Event()
        """Set (and replaced) at each update."""

    async def session_update(self, params: v2.UpdateSessionNotification, cx: Connection) -> None:
        self.notifications.append(params)
        self.arrived.set()
        self.arrived = anyio.Event()

    async def request_permission(
        self,
        params: v2.RequestPermissionRequest,
        responder: Responder[v2.RequestPermissionResponse],
    ) -> v2.RequestPermissionResponse:
        self.permission_requests.append(params)
        options = [(option.option_id, str(option.kind)) for option in params.options]
        chosen = choose_option(self.permission, params, options)
        outcome: v2.RequestPermissionOutcome = (
            v2.CancelledRequestPermissionOutcome()
            if chosen is None
            else v2.SelectedRequestPermissionOutcome(option_id=chosen)
        )
        return v2.RequestPermissionResponse(outcome=outcome)


class TestClient:
    """One connection to the v2 agent under test."""

    __test__ = False  # not a pytest test class

    def __init__(
        self, cx: Connection, scripted: ScriptedClient, validator: MessageValidator
    ) -> None:
        self.connection = cx
        self.agent = v2.RemoteAgent(cx)
        self._scripted = scripted
        self._validator = validator
        self.initialized: v2.InitializeResponse | None = None
        self.session_id: str | None = None

    @property
    def notifications(self) -> list[v2.UpdateSessionNotification]:
        return self._scripted.notifications

    @property
    def warnings(self) -> list[Finding]:
        return self._validator.warnings()

    def check(self) -> None:
        raise_on_errors(self._validator)

    async def initialize(self) -> v2.InitializeResponse:
        info = v2.Implementation(name="acp-test-client", version="1")
        answer = await self.agent.initialize(protocol_version=m.PROTOCOL_VERSION, info=info)
        self.check()
        self.initialized = answer
        return answer

    async def new_session(self, cwd: str = "/") -> str:
        if self.initialized is None:
            await self.initialize()
        answer = await self.agent.new_session(cwd=cwd)
        self.check()
        self.session_id = answer.session_id
        return answer.session_id

    async def prompt(
        self,
        prompt: str | Sequence[v2.ContentBlock],
        *,
        session_id: str | None = None,
        time_limit: float = 10,
    ) -> tuple[list[v2.SessionUpdate], str | None]:
        """One prompt turn: its updates up to the ``idle`` state update, and its stop reason."""
        if session_id is None:
            session_id = self.session_id or await self.new_session()
        blocks = [v2.TextContentBlock(text=prompt)] if isinstance(prompt, str) else list(prompt)
        start = len(self.notifications)
        with anyio.fail_after(time_limit):
            await self.agent.prompt(session_id=session_id, prompt=blocks)
            while True:
                arrived = self._scripted.arrived
                self.check()
                turn = [n.update for n in self.notifications[start:] if n.session_id == session_id]
                idle = [i for i, u in enumerate(turn) if _is_idle(u)]
                if idle:
                    return turn[: idle[0] + 1], stop_reason_of(turn[idle[0]])
                await arrived.wait()

    async def cancel(self, session_id: str | None = None) -> None:
        sid = session_id or self.session_id
        assert sid is not None, "no session to cancel: call new_session() or prompt() first"
        await self.agent.cancel(session_id=sid)

    def text(self, updates: Sequence[v2.SessionUpdate] | None = None) -> str:
        return text_of(updates if updates is not None else [n.update for n in self.notifications])


def _is_idle(update: v2.SessionUpdate) -> bool:
    return update.session_update == "state_update" and getattr(update, "state", None) == "idle"


def stop_reason_of(update: v2.SessionUpdate) -> str | None:
    """The ``stopReason`` of a ``state_update`` (None when it has none)."""
    reason: Any = getattr(update, "stop_reason", None)
    return reason if isinstance(reason, str) else None


def text_of(updates: Sequence[v2.SessionUpdate]) -> str:
    """The text of the ``agent_message_chunk`` updates among ``updates``, joined."""
    return "".join(
        update.content.text
        for update in updates
        if isinstance(update, v2.AgentMessageChunkSessionUpdate)
        and isinstance(update.content, v2.TextContentBlock)
    )


@asynccontextmanager
async def agent_client(
    agent: Attachable,
    *,
    permission: PermissionRule[v2.RequestPermissionRequest] = "allow",
    initialize: bool = True,
) -> AsyncGenerator[TestClient, None]:
    """Connect a scripted v2 client to ``agent`` (a ``v2.AgentHandler`` instance)."""
    scripted = ScriptedClient(permission)
    validator = MessageValidator(m.REQUESTS, m.NOTIFICATIONS)
    async with connect_in_memory(agent, scripted, validator) as cx:
        client = TestClient(cx, scripted, validator)
        if initialize:
            await client.initialize()
        yield client
    client.check()
