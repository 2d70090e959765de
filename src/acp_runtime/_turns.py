"""Prompt turns and ``session/cancel``: the obvious thing by default, on both sides.

ACP stops a turn with the ``session/cancel`` notification, not with ``$/cancel_request``
(real agents ignore the latter). So:

* **Agent side.** While a typed ``session/prompt`` handler runs, a ``session/cancel``
  for its session cancels it (:class:`RunningTurns`, one per connection, finds it by
  session id), and the runtime answers the turn for it:
  ``{"stopReason": "cancelled"}`` where the result type has that stop reason (v1), else
  -32800 (v2, where a prompt not yet inserted is what ``session/cancel`` drops). The
  updates the handler sent before go out first. A handler that answers in spite of the
  cancellation (it caught it to return partial results) keeps its answer. An agent that
  registers its own ``session/cancel`` handler takes over: the runtime then cancels
  nothing (call :meth:`RunningTurns.cancel` from it to get the default as well).
* **Client side.** Cancelling a typed ``session/prompt`` request (``sent.cancel()``,
  cancelling the task that awaits it, or dropping it) sends ``session/cancel`` for its
  session right after the ``$/cancel_request`` the JSON-RPC rules require.

The wire names live here and nowhere else in the runtime.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, cast

import anyio
from pydantic import ValidationError

from ._errors import RequestError
from ._methods import JsonValue, RequestMethod


class ResponseSlot(Protocol):
    """What a turn needs of its request's answer (a
    :class:`~acp_runtime._response_slot.ResponseSlot`)."""

    @property
    def answered(self) -> bool: ...

    def answer(self, result: JsonValue) -> None: ...

    def answer_error(self, error: RequestError) -> None: ...


PROMPT_METHOD = "session/prompt"
CANCEL_METHOD = "session/cancel"
_CANCELLED_RESULT: JsonValue = {"stopReason": "cancelled"}


def turn_cancellation(binding: RequestMethod[Any, Any]) -> JsonValue | RequestError | None:
    """How a cancelled turn of ``binding`` is answered, or None if it is no prompt turn."""
    if binding.name != PROMPT_METHOD:
        return None
    try:
        binding.result.load(_CANCELLED_RESULT)
    except ValidationError:
        return RequestError.request_cancelled()
    return _CANCELLED_RESULT


def session_id_of(params: object) -> str | None:
    """The ``sessionId`` of a prompt's params: typed (``session_id``) or plain JSON."""
    value: object
    if isinstance(params, dict):
        value = cast("dict[str, object]", params).get("sessionId")
    else:
        value = getattr(params, "session_id", None)
    return value if isinstance(value, str) else None


def cancel_notification(session_id: str) -> tuple[str, JsonValue]:
    """The ``session/cancel`` that goes with a cancelled prompt request."""
    return CANCEL_METHOD, {"sessionId": session_id}


class _Turn:
    __slots__ = ("cancelled", "task")

    def __init__(self, task: object) -> None:
        self.task = task
        self.cancelled = False


class RunningTurns:
    """The prompt handlers running on one connection, by session id.

    A turn costs no cancel scope: a handler that waits runs in a task of its own after the
    connection's hand-over, and the scope that task was reading in cancels it
    (``scope_of``, from the connection); one that never waited has already ended.
    """

    __slots__ = ("_scope_of", "_turns")

    def __init__(self, scope_of: Callable[[object], anyio.CancelScope | None]) -> None:
        self._scope_of = scope_of
        self._turns: dict[str, list[_Turn]] = {}

    def running(self, session_id: str) -> bool:
        return bool(self._turns.get(session_id))

    def cancel(self, session_id: str) -> bool:
        """Cancel the turns running for ``session_id``; False if there was none."""
        turns = self._turns.get(session_id)
        for turn in turns or ():
            scope = self._scope_of(turn.task)
            if scope is not None:
                turn.cancelled = True
                scope.cancel()
        return bool(turns)

    async def run(
        self,
        session_id: str | None,
        task: object,
        handling: Awaitable[None],
        slot: ResponseSlot,
        cancelled: JsonValue | RequestError,
    ) -> None:
        """Await ``handling`` (the handler and its answer) as a turn of ``session_id`` run
        by ``task``; if the turn is cancelled before it answered, answer ``cancelled``."""
        if session_id is None:
            await handling
            return
        turn = _Turn(task)
        turns = self._turns.setdefault(session_id, [])
        turns.append(turn)
        try:
            await handling
        finally:
            turns.remove(turn)
            if not turns:
                del self._turns[session_id]
            if turn.cancelled and not slot.answered:
                if isinstance(cancelled, RequestError):
                    slot.answer_error(cancelled)
                else:
                    slot.answer(cancelled)
