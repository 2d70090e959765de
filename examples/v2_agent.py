"""An ACP v2 agent on stdin/stdout showing the v2 prompt lifecycle (v2 is experimental).

In v2 the answer to ``session/prompt`` only says the user message was *inserted*
(``{"messageId": ...}``); the turn then runs on its own and reports through
``session/update``:

1. ``user_message`` with the inserted message and ``state_update`` ``running``;
2. the streamed ``agent_message_chunk`` updates;
3. ``state_update`` ``idle`` with ``stopReason`` ``end_turn``, or ``cancelled`` when the
   client sent ``session/cancel`` (the way to stop a v2 turn; request cancellation
   cannot, since the prompt request is already answered).

The prompt ``sleep <ms>`` works for that long; any other text is echoed back word by
word, ``--chunk-delay`` seconds apart (default 0.05). Pair: ``examples/v2_client.py``.

Usage: ``python examples/v2_agent.py [--quiet] [--chunk-delay SECONDS]``
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from itertools import count

import anyio

from acp_generated.v2 import (
    AgentHandler,
    AgentMessageChunkSessionUpdate,
    CancelledIdleStateUpdateSessionUpdate,
    CancelSessionNotification,
    ContentBlock,
    EndTurnIdleStateUpdateSessionUpdate,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    RunningStateUpdateSessionUpdate,
    SessionUpdate,
    TextContentBlock,
    UpdateSessionNotification,
    UserMessageSessionUpdate,
)
from acp_runtime import Connection, Responder, run_agent

log = logging.getLogger("v2_agent")

_SLEEP = re.compile(r"sleep\s+(\d+)")


class Session:
    """One session's running turn (at most one: later prompts queue behind it)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.turn_lock = anyio.Lock()
        self.turn_scope: anyio.CancelScope | None = None

    async def send(self, cx: Connection, update: SessionUpdate) -> None:
        """Send an update; awaiting it waits while the client is behind."""
        await cx.send_notification(
            UpdateSessionNotification(session_id=self.session_id, update=update)
        )


class V2Agent(AgentHandler):
    def __init__(self, chunk_delay: float) -> None:
        self._chunk_delay = chunk_delay
        self._session_ids = count(1)
        self._message_ids = count(1)
        self._sessions: dict[str, Session] = {}

    async def initialize(
        self, params: InitializeRequest, responder: Responder[InitializeResponse]
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=2, info=Implementation(name="python-v2-agent", version="1.0.0")
        )

    async def new_session(
        self, params: NewSessionRequest, responder: Responder[NewSessionResponse]
    ) -> NewSessionResponse:
        session = Session(f"sess-{next(self._session_ids)}")
        self._sessions[session.session_id] = session
        return NewSessionResponse(session_id=session.session_id)

    async def prompt(
        self, params: PromptRequest, responder: Responder[PromptResponse]
    ) -> PromptResponse:
        session = self._sessions[params.session_id]
        cx = responder.connection
        user_id = f"user-{next(self._message_ids)}"
        await session.send(
            cx,
            UserMessageSessionUpdate(
                session_update="user_message", message_id=user_id, content=params.prompt
            ),
        )
        cx.spawn(self._run_turn, cx, session, params.prompt)
        log.info("%s: inserted %s", session.session_id, user_id)
        return PromptResponse(message_id=user_id)  # inserted; the turn goes on

    async def cancel(self, params: CancelSessionNotification, cx: Connection) -> None:
        session = self._sessions.get(params.session_id)
        if session is not None and session.turn_scope is not None:
            log.info("%s: session/cancel", params.session_id)
            session.turn_scope.cancel()

    async def _run_turn(self, cx: Connection, session: Session, prompt: list[ContentBlock]) -> None:
        text = " ".join(b.text for b in prompt if isinstance(b, TextContentBlock)).strip()
        async with session.turn_lock:
            await session.send(
                cx, RunningStateUpdateSessionUpdate(session_update="state_update", state="running")
            )
            with anyio.CancelScope() as scope:
                session.turn_scope = scope
                await self._work(cx, session, text)
            session.turn_scope = None
            if scope.cancelled_caught:
                idle: SessionUpdate = CancelledIdleStateUpdateSessionUpdate(
                    session_update="state_update", state="idle", stop_reason="cancelled"
                )
            else:
                idle = EndTurnIdleStateUpdateSessionUpdate(
                    session_update="state_update", state="idle", stop_reason="end_turn"
                )
            await session.send(cx, idle)

    async def _work(self, cx: Connection, session: Session, text: str) -> None:
        reply_id = f"agent-{next(self._message_ids)}"

        async def say(words: str) -> None:
            chunk = AgentMessageChunkSessionUpdate(
                session_update="agent_message_chunk",
                message_id=reply_id,
                content=TextContentBlock(type="text", text=words),
            )
            await session.send(cx, chunk)

        if m := _SLEEP.fullmatch(text):
            await anyio.sleep(int(m[1]) / 1000)
            await say(f"slept {m[1]}")
            return
        for i, word in enumerate(text.split()):
            await anyio.sleep(self._chunk_delay)
            await say(word if i == 0 else " " + word)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="ACP v2 echo agent on stdin/stdout")
    parser.add_argument("--quiet", action="store_true", help="no log on stderr")
    parser.add_argument("--chunk-delay", type=float, default=0.05, metavar="SECONDS")
    args = parser.parse_args(argv)
    return run_agent(
        V2Agent(args.chunk_delay),
        log_level=logging.WARNING if args.quiet else logging.INFO,
        log_format="[v2-agent] %(message)s",
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
