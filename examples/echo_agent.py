"""An ACP v1 agent on stdin/stdout whose behaviour is driven by the prompt text.

It is the SDK's demo agent and the Python side of the interop tests and benchmarks
(``tests/interop/peers/agent.mjs`` is its TypeScript twin and must answer the same).
The prompt's text blocks are joined and trimmed, then read as one command:

==========================  ==================================================================
``sleep <ms>``              wait; ``session/cancel`` ends the turn with ``cancelled``,
                            ``$/cancel_request`` for the prompt answers -32800; otherwise one
                            chunk ``slept <ms>`` and ``end_turn``
``sleep-ignore <ms>``       wait, ignoring every cancellation, then ``end_turn``
``chunks <n> [size <s>]``   n ``agent_message_chunk`` updates (``chunk <i>\\n`` for i = 0..n-1,
                            or s times ``x``), then ``end_turn``; each is awaited (a client
                            that stops reading holds the stream up), and between two of them
                            ``session/cancel`` ends the turn with ``cancelled``,
                            ``$/cancel_request`` for the prompt answers -32800
``permission``              ask ``session/request_permission`` (options ``allow``, ``reject``);
                            if the turn is cancelled meanwhile, cancel that request with
                            ``$/cancel_request``; then chunk ``permission:<outcome>[:<id>]``
                            and ``cancelled`` or ``end_turn``
``read <absolute path>``    ``fs/read_text_file`` on the client; the content as one chunk, or
                            ``read-error:<code>:<message>``
``mixed``                   a thought chunk, a tool call, its update, a plan, a message chunk
``error <code> [message]``  answer ``session/prompt`` with that JSON-RPC error
anything else               echo the text back in up to 3 chunks
==========================  ==================================================================

The extension request ``_echo/ping`` returns ``{"pong": <params>}``. Sessions are
``sess-1``, ``sess-2``, ... The agent exits 0 when stdin closes, after answering the
prompts still in flight.

Usage: ``python examples/echo_agent.py [--quiet] [--max-message-bytes N]
[--high-water-bytes N] [--backend asyncio|trio]`` (the limit can also come from
``ECHO_AGENT_MAX_MESSAGE_BYTES``; the second sets the connection's backpressure mark).

It logs to stderr through :class:`acp_runtime.StderrLogHandler`, which never blocks the
agent on an editor that does not read stderr; ``--quiet`` writes nothing to stderr at
all. SIGINT ends it quietly, with status 0.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable
from typing import NamedTuple

import anyio

from acp_generated import v1  # `v1.X` creates each model class on its first use
from acp_runtime import (
    Connection,
    ErrorCode,
    JsonValue,
    RequestError,
    Responder,
    SentRequest,
    not_a_handler,
    run_agent,
)
from acp_runtime.transports import DEFAULT_HIGH_WATER_BYTES, DEFAULT_MAX_MESSAGE_BYTES

log = logging.getLogger("echo_agent")

# -- the command language ---------------------------------------------------------------
# Commands are named tuples: records like frozen dataclasses, created in a seventh of the
# time (a dataclass compiles its methods at import, which an agent's cold start pays).


class Sleep(NamedTuple):
    ms: int
    ignore_cancel: bool


class Chunks(NamedTuple):
    n: int
    size: int | None


class Permission(NamedTuple):
    pass


class Read(NamedTuple):
    path: str


class Mixed(NamedTuple):
    pass


class Error(NamedTuple):
    code: int
    message: str


class Echo(NamedTuple):
    text: str


Immediate = Mixed | Error | Echo
"""Commands answered at once, inside the request handler."""
Waiting = Sleep | Permission | Read | Chunks
"""Commands that wait (on time, on the client, or for it to read): the handler awaits them."""
Command = Immediate | Waiting

_SLEEP = re.compile(r"(sleep|sleep-ignore)\s+(\d+)")
_CHUNKS = re.compile(r"chunks\s+(\d+)(?:\s+size\s+(\d+))?")
_READ = re.compile(r"read\s+(.+)", re.DOTALL)
_ERROR = re.compile(r"error\s+(-?\d+)(?:\s+(.*))?", re.DOTALL)


def prompt_text(prompt: list[v1.ContentBlock]) -> str:
    """All text blocks joined, trimmed: the command the agent reads."""
    return "".join(block.text for block in prompt if isinstance(block, v1.TextContentBlock)).strip()


def parse_command(text: str) -> Command:
    """Read prompt text as a command; anything unrecognised is echoed."""
    if m := _SLEEP.fullmatch(text):
        return Sleep(int(m[2]), ignore_cancel=m[1] == "sleep-ignore")
    if m := _CHUNKS.fullmatch(text):
        return Chunks(int(m[1]), int(m[2]) if m[2] is not None else None)
    if text == "permission":
        return Permission()
    if text == "mixed":
        return Mixed()
    if m := _READ.fullmatch(text):
        return Read(m[1])
    if m := _ERROR.fullmatch(text):
        return Error(int(m[1]), m[2] or "requested error")
    return Echo(text)


def echo_pieces(text: str) -> list[str]:
    """At most 3 non-empty pieces that concatenate to ``text``."""
    k = min(3, len(text))
    return [text[i * len(text) // k : (i + 1) * len(text) // k] for i in range(k)]


# -- the agent ------------------------------------------------------------------------------


def _text(value: str) -> v1.TextContentBlock:
    return v1.TextContentBlock(type="text", text=value)


def mixed_updates() -> list[v1.SessionUpdate]:
    """What ``mixed`` streams. Built when asked, not at import: creating a model builds its
    validator, and an agent's cold start should pay only for the models it answers with."""
    return [
        v1.AgentThoughtChunkSessionUpdate(
            session_update="agent_thought_chunk", content=_text("thinking")
        ),
        v1.ToolCallSessionUpdate(
            session_update="tool_call",
            tool_call_id="call-1",
            title="Echo tool",
            kind="read",
            status="pending",
        ),
        v1.ToolCallUpdateSessionUpdate(
            session_update="tool_call_update",
            tool_call_id="call-1",
            status="completed",
            content=[v1.ContentToolCallContent(type="content", content=_text("tool done"))],
        ),
        v1.PlanSessionUpdate(
            session_update="plan",
            entries=[v1.PlanEntry(content="echo the prompt", priority="high", status="completed")],
        ),
        v1.AgentMessageChunkSessionUpdate(
            session_update="agent_message_chunk", content=_text("mixed done")
        ),
    ]


def permission_options() -> list[v1.PermissionOption]:
    """The options ``permission`` offers (built when asked, as :func:`mixed_updates`)."""
    return [
        v1.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
        v1.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    ]


class Turn:
    """One running prompt turn: what it needs to send updates and notice `session/cancel`."""

    def __init__(self, session_id: str, responder: Responder[v1.PromptResponse]) -> None:
        self.session_id = session_id
        self.responder = responder
        self.cancelled = anyio.Event()
        self._on_cancel: list[Callable[[], None]] = []

    def cancel(self) -> None:
        """`session/cancel` arrived: wake waiters and run the registered callbacks."""
        self.cancelled.set()
        callbacks, self._on_cancel = self._on_cancel, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the turn is cancelled (now, if it already is)."""
        if self.cancelled.is_set():
            callback()
        else:
            self._on_cancel.append(callback)

    @property
    def cx(self) -> Connection:
        return self.responder.connection

    def send(self, update: v1.SessionUpdate) -> Awaitable[None]:
        """Queue an update; awaiting the result waits while the client is behind."""
        return self.cx.send_notification(
            v1.SessionNotification(session_id=self.session_id, update=update)
        )

    def say(self, text: str) -> Awaitable[None]:
        return self.send(
            v1.AgentMessageChunkSessionUpdate(
                session_update="agent_message_chunk", content=_text(text)
            )
        )


class EchoAgent(v1.AgentHandler):
    """Answers prompts according to the command language in the module docstring."""

    def __init__(self) -> None:
        self._sessions = 0
        self._turns: dict[str, Turn] = {}
        self._in_flight = 0
        self._idle = anyio.Event()
        self._idle.set()

    async def initialize(
        self, params: v1.InitializeRequest, responder: Responder[v1.InitializeResponse]
    ) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1.AgentCapabilities(load_session=False),
            agent_info=v1.Implementation(name="python-echo-agent", version="1.0.0"),
        )

    async def new_session(
        self, params: v1.NewSessionRequest, responder: Responder[v1.NewSessionResponse]
    ) -> v1.NewSessionResponse:
        self._sessions += 1
        return v1.NewSessionResponse(session_id=f"sess-{self._sessions}")

    async def prompt(
        self, params: v1.PromptRequest, responder: Responder[v1.PromptResponse]
    ) -> v1.PromptResponse:
        turn = Turn(params.session_id, responder)
        command = parse_command(prompt_text(params.prompt))
        log.info("prompt %s: %s", params.session_id, command)
        if isinstance(command, Immediate):
            return v1.PromptResponse(stop_reason=self._answer_now(turn, command))
        # Waiting work: register the turn before the first wait, so a `session/cancel`
        # right behind this request finds it, then simply await it: the connection goes
        # on reading (and sees cancellations) while the handler waits. This agent handles
        # `session/cancel` itself (`cancel` below), so the runtime cancels nothing for it:
        # `sleep-ignore` can ignore it.
        self._turns[params.session_id] = turn
        self._in_flight += 1
        self._idle = anyio.Event()
        try:
            return await self._turn_result(turn, command)
        finally:
            if self._turns.get(turn.session_id) is turn:
                del self._turns[turn.session_id]
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    async def cancel(self, params: v1.CancelNotification, cx: Connection) -> None:
        log.info("session/cancel %s", params.session_id)
        turn = self._turns.get(params.session_id)
        if turn is not None:
            turn.cancel()

    async def ext_method(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        if method == "_echo/ping":
            return {"pong": params}
        raise RequestError.method_not_found(method)

    @not_a_handler
    async def wait_idle(self) -> None:
        """Wait until no prompt turn is running."""
        await self._idle.wait()

    async def _turn_result(self, turn: Turn, command: Waiting) -> v1.PromptResponse:
        if isinstance(command, Sleep):
            stop_reason = await self._sleep(turn, command)
        elif isinstance(command, Chunks):
            stop_reason = await self._stream_chunks(turn, command)
        elif isinstance(command, Permission):
            stop_reason = await self._ask_permission(turn)
        else:
            await self._read(turn, command.path)
            stop_reason = "end_turn"
        return v1.PromptResponse(stop_reason=stop_reason)

    def _answer_now(self, turn: Turn, command: Immediate) -> v1.StopReason:
        """Commands that never wait: answered at once."""
        if isinstance(command, Mixed):
            for update in mixed_updates():
                turn.send(update)
        elif isinstance(command, Error):
            raise RequestError(command.code, command.message)
        else:
            for piece in echo_pieces(command.text):
                turn.say(piece)
        return "end_turn"

    async def _stream_chunks(self, turn: Turn, command: Chunks) -> v1.StopReason:
        for i in range(command.n):
            if turn.responder.cancellation.is_cancelled():
                raise RequestError.request_cancelled()
            if turn.cancelled.is_set():
                return "cancelled"
            # Waits only while the client is not reading (backpressure); now and then it
            # lets the connection run, which reads the cancels checked above.
            await turn.say(f"chunk {i}\n" if command.size is None else "x" * command.size)
        return "end_turn"

    async def _sleep(self, turn: Turn, command: Sleep) -> v1.StopReason:
        if command.ignore_cancel:
            await anyio.sleep(command.ms / 1000)
            return "end_turn"
        with anyio.move_on_after(command.ms / 1000):
            # `$/cancel_request` for the prompt wins with -32800 (raised here);
            # `session/cancel` ends the turn normally with stopReason `cancelled`.
            await turn.responder.cancellation.run_until_cancelled(turn.cancelled.wait())
            return "cancelled"
        turn.say(f"slept {command.ms}")
        return "end_turn"

    async def _ask_permission(self, turn: Turn) -> v1.StopReason:
        request = turn.cx.send_request(
            v1.RequestPermissionRequest(
                session_id=turn.session_id,
                tool_call=v1.ToolCallUpdate(
                    tool_call_id="perm-1", title="Echo permission", kind="execute", status="pending"
                ),
                options=permission_options(),
            )
        )
        # Cancelling our prompt request cancels the permission request too (PROXY-2);
        # `session/cancel` does it explicitly through a handle. Either way the client's
        # real answer still arrives below (OUT-3).
        request.forward_cancellation_from(turn.responder.cancellation)
        turn.on_cancel(request.cancellation_handle().cancel)
        label = await _outcome_label(request)
        turn.say(f"permission:{label}")
        if turn.responder.cancellation.is_cancelled():
            raise RequestError.request_cancelled()
        return "cancelled" if turn.cancelled.is_set() or label == "cancelled" else "end_turn"

    async def _read(self, turn: Turn, path: str) -> None:
        try:
            response = await turn.cx.send_request(
                v1.ReadTextFileRequest(session_id=turn.session_id, path=path)
            )
        except RequestError as error:
            turn.say(f"read-error:{error.code}:{error.message}")
        else:
            turn.say(response.content)


async def _outcome_label(request: SentRequest[v1.RequestPermissionResponse]) -> str:
    """``selected:<optionId>`` or ``cancelled`` (the outcome, or a -32800 answer)."""
    try:
        outcome = (await request).outcome
    except RequestError as error:
        if error.code != ErrorCode.REQUEST_CANCELLED:
            raise
        return "cancelled"
    if outcome.outcome == "selected":
        return f"selected:{outcome.option_id}"
    return outcome.outcome


# -- running on stdio -------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="ACP v1 echo agent on stdin/stdout")
    parser.add_argument("--quiet", action="store_true", help="write nothing to stderr")
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        default=int(os.environ.get("ECHO_AGENT_MAX_MESSAGE_BYTES") or DEFAULT_MAX_MESSAGE_BYTES),
        help="largest incoming message (default: $ECHO_AGENT_MAX_MESSAGE_BYTES or %(default)s)",
    )
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument(
        "--high-water-bytes",
        type=int,
        default=DEFAULT_HIGH_WATER_BYTES,
        help="output queued for the client at which the agent stops reading (%(default)s)",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    return run_agent(
        EchoAgent(),
        backend=args.backend,
        log_level=None if args.quiet else logging.INFO,
        log_format="[echo-agent] %(message)s",
        max_message_bytes=args.max_message_bytes,
        high_water_bytes=args.high_water_bytes,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
