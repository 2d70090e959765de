"""Prompt turns and ``session/cancel``: the obvious thing by default, on both sides.

ACP stops a turn with the ``session/cancel`` notification, not with ``$/cancel_request``
(real agents ignore the latter). So:

* **Agent side.** While a typed ``session/prompt`` handler runs, a ``session/cancel``
  for its session cancels it (:class:`RunningTurns`, one per connection, finds it by
  session id; the connection registers it when it first suspends, since nothing else
  can run before that), and the runtime answers the turn for it:
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


def cancelled_turn_answer(binding: RequestMethod[Any, Any]) -> JsonValue | RequestError:
    """How a prompt turn of ``binding`` that ``session/cancel`` stopped is answered."""
    try:
        binding.result.load(_CANCELLED_RESULT)
    except ValidationError:
        return RequestError.request_cancelled()
    return _CANCELLED_RESULT


def session_id_of(params: object) -> str | None:
    """The ``sessionId`` of a prompt's params: typed (``session_id``, asked first: a
    client's typed prompt asks per request) or plain JSON."""
    value = getattr(params, "session_id", None)
    if value is None and isinstance(params, dict):
        value = cast("dict[str, object]", params).get("sessionId")
    return value if isinstance(value, str) else None


def cancel_notification(session_id: str) -> tuple[str, JsonValue]:
    """The ``session/cancel`` that goes with a cancelled prompt request."""
    return CANCEL_METHOD, {"sessionId": session_id}


class Turn:
    """One prompt handler that suspended: what ``session/cancel`` stops, and how."""

    __slots__ = ("binding", "cancelled", "scope", "session_id", "slot")

    def __init__(
        self,
        session_id: str,
        scope: anyio.CancelScope,
        slot: ResponseSlot,
        binding: RequestMethod[Any, Any],
    ) -> None:
        self.session_id = session_id
        self.scope = scope
        self.slot = slot
        self.binding = binding
        self.cancelled = False


class RunningTurns:
    """The prompt handlers waiting on one connection, by session id.

    A turn is registered when its handler first suspends, by the connection, which runs
    it from then on in a task of its own: ``scope`` is the one that task was reading in,
    and cancelling it stops only the handler. A handler that answers without suspending
    is never registered: nothing else runs before it has answered, so no
    ``session/cancel`` can reach it, and it costs nothing here.
    """

    __slots__ = ("_turns",)

    def __init__(self) -> None:
        self._turns: dict[str, list[Turn]] = {}

    def running(self, session_id: str) -> bool:
        return session_id in self._turns

    def cancel(self, session_id: str) -> bool:
        """Cancel the turns running for ``session_id``; False if there was none."""
        turns = self._turns.get(session_id)
        for turn in turns or ():
            turn.cancelled = True
            turn.scope.cancel()
        return bool(turns)

    def start(
        self,
        session_id: str,
        scope: anyio.CancelScope,
        slot: ResponseSlot,
        binding: RequestMethod[Any, Any],
    ) -> Turn:
        """Register a suspended ``binding`` handler of ``session_id`` that ``scope``
        cancels; :meth:`end` it when the handler has returned or raised."""
        turn = Turn(session_id, scope, slot, binding)
        self._turns.setdefault(session_id, []).append(turn)
        return turn

    def end(self, turn: Turn) -> None:
        """The handler of ``turn`` is over: forget it, and if ``session/cancel`` stopped
        it before it answered, answer for it (after the updates it sent)."""
        turns = self._turns[turn.session_id]
        turns.remove(turn)
        if not turns:
            del self._turns[turn.session_id]
        slot = turn.slot
        if turn.cancelled and not slot.answered:
            answer = cancelled_turn_answer(turn.binding)
            if isinstance(answer, RequestError):
                slot.answer_error(answer)
            else:
                slot.answer(answer)
