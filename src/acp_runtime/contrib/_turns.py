"""One prompt turn, one cancellation: ``session/cancel`` and ``$/cancel_request`` together.

A prompt turn can be stopped two ways, and the protocol answers them differently: the
``session/cancel`` notification (for the session) ends the turn with stop reason
``cancelled``; ``$/cancel_request`` (for the prompt request) answers it -32800.
:class:`PromptTurns` ties both to one cancel scope around the turn's work, so an agent writes
one code path::

    turns = PromptTurns(cancelled=PromptResponse(stop_reason="cancelled"))

    async def prompt(self, params, responder):
        turns.start(params.session_id, responder, self._turn, params)  # spawned; returns

    async def cancel(self, params, cx):
        turns.cancel(params.session_id)

Cancelling the scope also abandons whatever the turn awaits on the client (a permission
request, a file read), and an abandoned request is cancelled on the wire in turn (OUT-5),
so cancellation goes on hop by hop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio

from .._responder import Responder

if TYPE_CHECKING:
    from typing_extensions import TypeVarTuple, Unpack

    Args = TypeVarTuple("Args")

R = TypeVar("R")


class Turn:
    """What a running turn's work can see of its own cancellation."""

    __slots__ = ("scope", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.scope = anyio.CancelScope()
        """The scope the turn's work runs in; cancelled by ``session/cancel``."""

    @property
    def session_cancelled(self) -> bool:
        """``session/cancel`` arrived for this turn's session."""
        return self.scope.cancel_called

    def __repr__(self) -> str:
        return f"<Turn session={self.session_id!r} cancelled={self.session_cancelled}>"


class PromptTurns(Generic[R]):
    """The running prompt turns of an agent, by session, with their shared cancellation.

    ``cancelled`` is the answer to a turn stopped by ``session/cancel`` (the version's
    ``PromptResponse(stop_reason="cancelled")``): the runtime knows no schema version.
    """

    def __init__(self, *, cancelled: R) -> None:
        self._cancelled = cancelled
        self._running: dict[str, list[Turn]] = {}

    def start(
        self,
        session_id: str,
        responder: Responder[R],
        work: Callable[[Turn, Unpack[Args]], Awaitable[R]],
        *args: Unpack[Args],
    ) -> Turn:
        """Run ``work(turn, *args)`` as spawned work that answers ``responder`` when done.

        Call it from the ``session/prompt`` handler and return: the turn is registered at
        once, so a ``session/cancel`` read right after the prompt still stops it.
        """
        turn = Turn(session_id)
        self._running.setdefault(session_id, []).append(turn)
        responder.connection.spawn(self._run, turn, responder, work, args)
        return turn

    def cancel(self, session_id: str) -> bool:
        """Stop the session's running turns (``session/cancel``); False if none runs."""
        turns = self._running.get(session_id, [])
        for turn in turns:
            turn.scope.cancel()
        return bool(turns)

    def running(self, session_id: str) -> bool:
        return bool(self._running.get(session_id))

    async def _run(
        self,
        turn: Turn,
        responder: Responder[R],
        work: Callable[..., Awaitable[R]],
        args: tuple[Any, ...],
    ) -> None:
        # ``respond_with`` answers a RequestError as itself (-32800 for $/cancel_request, or
        # the work's own) and anything else, logged, as a bare -32603.
        try:
            await responder.respond_with(self._outcome(turn, responder, work, args))
        finally:
            self._forget(turn)

    async def _outcome(
        self,
        turn: Turn,
        responder: Responder[R],
        work: Callable[..., Awaitable[R]],
        args: tuple[Any, ...],
    ) -> R:
        with turn.scope:
            return await responder.cancellation.run_until_cancelled(work(turn, *args))
        return self._cancelled  # the scope took a session/cancel

    def _forget(self, turn: Turn) -> None:
        turns = self._running.get(turn.session_id, [])
        if turn in turns:
            turns.remove(turn)
        if not turns:
            self._running.pop(turn.session_id, None)
