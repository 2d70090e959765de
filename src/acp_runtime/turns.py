"""Prompt turns and ``session/cancel``: the obvious thing by default, on both sides.

ACP stops a turn with the ``session/cancel`` notification, not with ``$/cancel_request``
(real agents ignore the latter). So:

* **Agent side.** While a typed ``session/prompt`` handler runs, a ``session/cancel``
  for its session cancels it (a cancel scope around the handler, kept in
  :class:`RunningTurns`, one per connection), and the runtime answers the turn for it:
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

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, cast

import anyio
from pydantic import ValidationError

from .errors import RequestError
from .methods import JsonValue, RequestMethod

if TYPE_CHECKING:
    from .response_slot import ResponseSlot

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


class RunningTurns:
    """The prompt handlers running on one connection, by session id."""

    __slots__ = ("_scopes",)

    def __init__(self) -> None:
        self._scopes: dict[str, list[anyio.CancelScope]] = {}

    def running(self, session_id: str) -> bool:
        return bool(self._scopes.get(session_id))

    def cancel(self, session_id: str) -> bool:
        """Cancel the turns running for ``session_id``; False if there was none."""
        scopes = self._scopes.get(session_id)
        for scope in scopes or ():
            scope.cancel()
        return bool(scopes)

    async def run(
        self,
        session_id: str | None,
        handling: Awaitable[None],
        slot: ResponseSlot,
        cancelled: JsonValue | RequestError,
    ) -> None:
        """Await ``handling`` (the handler and its answer) as a turn of ``session_id``;
        if the turn is cancelled before it answered, answer ``cancelled``."""
        if session_id is None:
            await handling
            return
        scope = anyio.CancelScope()
        scopes = self._scopes.setdefault(session_id, [])
        scopes.append(scope)
        try:
            with scope:
                await handling
        finally:
            scopes.remove(scope)
            if not scopes:
                del self._scopes[session_id]
        if scope.cancel_called and not slot.answered:
            if isinstance(cancelled, RequestError):
                slot.answer_error(cancelled)
            else:
                slot.answer(cancelled)
