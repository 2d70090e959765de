"""Issue #15 trap 2: a handler method whose name is no ACP method is refused at ``attach``.

Before, ``async def session_promt`` was silently not registered and the peer got -32601.
A handler under its name before the one-name-per-method rename (``session_prompt``) is
refused the same way, and the message names the new one.
"""

from __future__ import annotations

import anyio
import pytest

from acp_generated import v1, v2
from acp_runtime import ConnectionBuilder, Responder, not_a_handler
from acp_runtime.testing import request, wire_connection


class Typo(v1.AgentHandler):
    async def promt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")


class OtherSide(v1.AgentHandler):
    async def session_update(self, params: v1.SessionNotification, cx: object) -> None:
        """A client-side method, written on an agent."""


class OldName(v1.AgentHandler):
    async def session_prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        return v1.PromptResponse(stop_reason="end_turn")


class Fine(v1.AgentHandler):
    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        await self._think()
        return v1.PromptResponse(stop_reason=self.stop_reason())

    async def _think(self) -> None:
        """Private helpers are the handler's own business."""

    def stop_reason(self) -> v1.StopReason:
        """Public plain methods are never mistaken for handlers (only async ones are)."""
        return "end_turn"

    @not_a_handler
    async def wait_idle(self) -> None:
        """A public async method marked as the class's own API."""


def test_typo_is_refused_with_the_closest_name() -> None:
    with pytest.raises(TypeError, match=r"Typo\.promt \(did you mean 'prompt'\?\)"):
        Typo().attach(ConnectionBuilder(role="agent"))


def test_an_old_name_is_refused_with_the_new_one() -> None:
    with pytest.raises(
        TypeError, match=r"OldName\.session_prompt \(renamed: the handler is now 'prompt'\)"
    ):
        OldName().attach(ConnectionBuilder(role="agent"))

    class OldClient(v1.ClientHandler):
        async def fs_read_text_file(self, params: object, responder: object) -> None: ...

    with pytest.raises(TypeError, match=r"now 'read_text_file'"):
        OldClient().attach(ConnectionBuilder(role="client"))


def test_a_method_of_the_other_side_is_refused() -> None:
    with pytest.raises(
        TypeError, match=r"OtherSide\.session_update \(a method the other side handles\).*the agent"
    ):
        OtherSide().attach(ConnectionBuilder(role="agent"))


def test_any_unmarked_public_async_method_is_refused() -> None:
    """Not only near-misses: ``ponder`` is far from every name, and still never called."""

    class Far(v1.AgentHandler):
        async def ponder(self) -> None: ...

        async def wait_idle(self) -> None: ...

    with pytest.raises(
        TypeError, match=r"Far\.ponder.*Far\.wait_idle|Far\.wait_idle.*Far\.ponder"
    ):
        Far().attach(ConnectionBuilder(role="agent"))


def test_an_inherited_typo_is_refused_and_v2_and_clients_too() -> None:
    class Child(Typo):
        pass

    class ClientTypo(v2.ClientHandler):
        async def request_permision(self, params: object, responder: object) -> None: ...

    with pytest.raises(TypeError, match="promt"):
        Child().attach(ConnectionBuilder(role="agent"))
    with pytest.raises(TypeError, match=r"'request_permission'.*the client handles"):
        ClientTypo().attach(ConnectionBuilder(role="client"))


@pytest.mark.anyio
async def test_a_correct_handler_attaches_and_answers() -> None:
    """Trap 2's control, both backends: private helpers and plain methods are accepted."""
    builder = ConnectionBuilder(role="agent")
    Fine().attach(builder)
    async with wire_connection(builder) as (_, client):
        prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
        await client.send(request(1, "session/prompt", prompt))
        with anyio.fail_after(5):
            answer = await client.receive()
    assert answer["result"] == {"stopReason": "end_turn"}
