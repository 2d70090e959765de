"""The answering side of one incoming request.

A :class:`Responder` is handed to the request handler. Exactly one response goes to
the peer per request (IN-6): the first answer wins and later ones are logged and
dropped; a responder garbage-collected without an answer sends -32603 so the peer is
never left waiting on a forgotten request.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from .cancellation import CancellationMarker, IncomingRequests
from .errors import RequestError
from .jsonrpc import RequestId, encode, encode_result, error_message, log_fields
from .methods import JsonValue, Payload
from .settlement import OutboxClosed

if TYPE_CHECKING:
    from .connection import Connection

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")


class ResponseSlot:
    """The once-only answer state of one incoming request (no reference to the Responder,
    so the Responder's finalizer can use it)."""

    __slots__ = ("answered", "connection", "id", "marker", "method", "registry")

    def __init__(
        self,
        connection: Connection,
        registry: IncomingRequests,
        request_id: RequestId,
        method: str,
    ) -> None:
        self.connection = connection
        self.registry = registry
        self.id = request_id
        self.method = method
        self.marker = registry.register(request_id)
        self.answered = False

    def answer(self, result: Payload) -> None:
        self._send(result, None)

    def answer_error(self, error: RequestError) -> None:
        self._send(None, error)

    def warn_duplicate(self, what: str) -> None:
        log.warning(
            "request %s id=%r already answered; dropping %s",
            self.method,
            self.id,
            what,
            extra=log_fields(self.method, self.id),
        )

    def _send(self, result: Payload, error: RequestError | None) -> None:
        if self.answered:
            self.warn_duplicate("result" if error is None else f"error {error}")
            return
        self.answered = True
        self.registry.finish(self.id, self.marker)
        try:
            if error is None:
                self.connection.enqueue(encode_result(self.id, result))
            else:
                self.connection.enqueue(encode(error_message(self.id, error)))
        except OutboxClosed:
            log.debug(
                "connection closed; response to %s id=%r not sent",
                self.method,
                self.id,
                extra=log_fields(self.method, self.id),
            )
        except (TypeError, ValueError):
            log.exception(
                "response to %s id=%r is not JSON-serializable",
                self.method,
                self.id,
                extra=log_fields(self.method, self.id),
            )
            self.answered = False
            self._send(None, RequestError.internal_error())

    def on_responder_lost(self) -> None:
        """Finalizer target: answer -32603 from the loop if the handler never did.
        Never raises (it may run while the interpreter shuts down)."""
        try:
            if not self.answered:
                self.connection.call_soon(self._answer_lost)
        except Exception:  # pragma: no cover - module globals torn down at exit
            pass

    def _answer_lost(self) -> None:
        if self.answered:
            return
        log.warning(
            "responder for %s id=%r was dropped unanswered; sending -32603",
            self.method,
            self.id,
            extra=log_fields(self.method, self.id),
        )
        self.answer_error(
            RequestError.internal_error({"reason": "responder_dropped", "method": self.method})
        )


class Responder(Generic[R]):
    """Answers one incoming request; typed by the method's result type ``R``.

    Returning a value from the handler answers with it. To answer later, hand the
    responder to work started with :meth:`Connection.spawn` and return ``None``.
    """

    __slots__ = ("__weakref__", "_encode", "_slot")

    def __init__(self, slot: ResponseSlot, encode: Callable[[R], Payload]) -> None:
        self._slot = slot
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
        return self._slot.connection

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
            log.exception(
                "cannot encode the result of %s id=%r",
                self.method,
                self.id,
                extra=log_fields(self.method, self.id),
            )
            self._slot.answer_error(RequestError.internal_error())
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


async def answer_failures(work: Awaitable[T], slot: ResponseSlot, doing: str) -> tuple[T] | None:
    """Await ``work``; if it raises, answer the request with the failure instead.

    A :class:`RequestError` is the answer as it is; any other exception is logged with
    its traceback and answered with a bare -32603, so nothing leaks onto the wire.
    Returns ``(result,)`` when ``work`` returned, ``None`` when its failure was answered.
    """
    try:
        return (await work,)
    except RequestError as error:
        slot.answer_error(error)
    except Exception:
        fields = log_fields(slot.method, slot.id)
        log.exception("%s %s id=%r failed", doing, slot.method, slot.id, extra=fields)
        slot.answer_error(RequestError.internal_error())
    return None
