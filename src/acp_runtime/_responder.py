"""The typed answering side of one incoming request, as a handler sees it.

A :class:`Responder` is handed to the request handler. It wraps the request's
:class:`~acp_runtime._response_slot.ResponseSlot` (exactly one response per request,
IN-6) with the method's result encoder and the connection the request arrived on; a
responder garbage-collected without an answer sends -32603 so the peer is never left
waiting on a forgotten request.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from ._errors import RequestError
from ._jsonrpc import RequestId, log_fields
from ._log_throttle import peer_log
from ._methods import JsonValue, Payload
from ._response_slot import ResponseSlot, answer_failures

if TYPE_CHECKING:
    from ._cancellation import CancellationMarker
    from ._connection import Connection

log = logging.getLogger(__name__)

R = TypeVar("R")


class Responder(Generic[R]):
    """Answers one incoming request; typed by the method's result type ``R``.

    Returning a value from the handler answers with it. To answer later, hand the
    responder to work started with :meth:`Connection.spawn` and return ``None``.
    """

    __slots__ = ("__weakref__", "_connection", "_encode", "_slot")

    def __init__(
        self, slot: ResponseSlot, connection: Connection, encode: Callable[[R], Payload]
    ) -> None:
        self._slot = slot
        self._connection = connection
        self._encode = encode

    def __del__(self) -> None:
        # Dropped unanswered (IN-6): the slot only schedules the -32603, no I/O here.
        self._slot.on_responder_lost()

    @property
    def id(self) -> RequestId:
        """The request's JSON-RPC id, exactly as received."""
        return self._slot.id

    @property
    def method(self) -> str:
        return self._slot.method

    @property
    def connection(self) -> Connection:
        """The connection the request arrived on (to ``spawn`` work or send requests)."""
        return self._connection

    @property
    def cancellation(self) -> CancellationMarker:
        """Set when the peer sends ``$/cancel_request`` for this request (IN-1)."""
        return self._slot.marker

    @property
    def is_answered(self) -> bool:
        return self._slot.answered

    def respond(self, result: R) -> None:
        """Answer with a result. A second answer is logged and dropped."""
        if self._slot.answered:
            self._slot.warn_duplicate("result")
            return
        try:
            encoded = self._encode(result)
        except Exception:
            peer_log.log(
                log,
                logging.ERROR,
                "cannot encode the result of %s id=%r",
                self.method,
                self.id,
                exc_info=True,
                extra=log_fields(self.method, self.id),
            )
            self._slot.answer_error(RequestError.internal_error(method=self.method))
            return
        self._slot.answer(encoded)

    def respond_with_error(self, error: RequestError) -> None:
        """Answer with an error (for example :meth:`RequestError.request_cancelled`)."""
        self._slot.answer_error(error)

    def respond_with_result(self, result: R | RequestError) -> None:
        """Answer with a result or, if ``result`` is a :class:`RequestError`, with it."""
        if isinstance(result, RequestError):
            self.respond_with_error(result)
        else:
            self.respond(result)

    def respond_raw(self, result: JsonValue) -> None:
        """Answer with an already-encoded JSON result, unchanged (for forwarding)."""
        self._slot.answer(result)

    async def respond_with(self, work: Awaitable[R]) -> None:
        """Await ``work`` and answer with its outcome.

        A :class:`RequestError` it raises becomes the error answer (so
        ``responder.respond_with(responder.cancellation.run_until_cancelled(...))``
        answers -32800 when cancelled); any other exception is logged and answered
        with -32603. Meant to run as spawned work.
        """
        outcome = await answer_failures(work, self._slot, "work answering")
        if outcome is not None:
            self.respond(outcome[0])

    def __repr__(self) -> str:
        return f"<Responder {self.method} id={self.id!r} answered={self.is_answered}>"
