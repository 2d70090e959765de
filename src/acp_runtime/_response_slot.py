"""The once-only answer of one incoming request, below any handler or connection.

A :class:`ResponseSlot` is what the dispatch loop creates for each incoming request:
exactly one response goes to the peer (IN-6), the first answer wins and later ones are
logged and dropped. It needs only a :class:`ResponseLink` (queue a message, schedule a
callback), so the typed :class:`~acp_runtime.Responder` on top of it, and the tests, can
use it without a connection.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from ._cancellation import IncomingRequests
from ._errors import RequestError
from ._jsonrpc import RequestId, encode, encode_result, error_message, log_fields
from ._log_throttle import peer_log
from ._methods import Payload
from ._settlement import OutboxClosed

log = logging.getLogger(__name__)

T = TypeVar("T")


class ResponseLink(Protocol):
    """What an answer needs from its connection."""

    def enqueue(self, message: bytes) -> int:
        """Queue one encoded message for the writer (FIFO). Raises :class:`OutboxClosed`."""
        ...

    def enqueue_urgent(self, message: bytes) -> None:
        """Queue one encoded message ahead of the queued ones. Raises :class:`OutboxClosed`."""
        ...

    def call_soon(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` soon on the loop; safe from finalizers."""
        ...


class ResponseSlot:
    """The once-only answer state of one incoming request (no reference to the Responder,
    so the Responder's finalizer can use it)."""

    __slots__ = ("answered", "id", "link", "marker", "method", "registry")

    def __init__(
        self,
        link: ResponseLink,
        registry: IncomingRequests,
        request_id: RequestId,
        method: str,
    ) -> None:
        self.link = link
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
        peer_log.log(
            log,
            logging.WARNING,
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
        # The answer to a request the peer cancelled goes ahead of queued output.
        enqueue = self.link.enqueue_urgent if self.marker.is_cancelled() else self.link.enqueue
        try:
            if error is None:
                enqueue(encode_result(self.id, result))
            else:
                enqueue(encode(error_message(self.id, error)))
        except OutboxClosed:
            log.debug(
                "connection closed; response to %s id=%r not sent",
                self.method,
                self.id,
                extra=log_fields(self.method, self.id),
            )
        except (TypeError, ValueError):
            peer_log.log(
                log,
                logging.ERROR,
                "response to %s id=%r is not JSON-serializable",
                self.method,
                self.id,
                exc_info=True,
                extra=log_fields(self.method, self.id),
            )
            self.answered = False
            self._send(None, RequestError.internal_error(method=self.method))

    def on_responder_lost(self) -> None:
        """Finalizer target: answer -32603 from the loop if the handler never did.
        Never raises (it may run while the interpreter shuts down)."""
        try:
            if not self.answered:
                self.link.call_soon(self._answer_lost)
        except Exception:  # pragma: no cover - module globals torn down at exit
            pass

    def _answer_lost(self) -> None:
        if self.answered:
            return
        peer_log.log(
            log,
            logging.WARNING,
            "responder for %s id=%r was dropped unanswered; sending -32603",
            self.method,
            self.id,
            extra=log_fields(self.method, self.id),
        )
        self.answer_error(
            RequestError.internal_error({"reason": "responder_dropped", "method": self.method})
        )


async def answer_failures(work: Awaitable[T], slot: ResponseSlot, doing: str) -> tuple[T] | None:
    """Await ``work``; if it raises, answer the request with the failure instead (see
    :func:`answer_failure`). Returns ``(result,)`` when ``work`` returned, ``None`` when
    its failure was answered."""
    try:
        return (await work,)
    except Exception as error:
        answer_failure(error, slot, doing)
    return None


def answer_failure(error: Exception, slot: ResponseSlot, doing: str) -> None:
    """Answer the request with a failure: a :class:`RequestError` as it is; anything else
    is logged with its traceback and answered -32603 "Internal error in <method>", so
    nothing of it leaks onto the wire. ``doing`` starts the log line (``"handler for"``)."""
    if isinstance(error, RequestError):
        slot.answer_error(error)
        return
    peer_log.log(
        log,
        logging.ERROR,
        "%s %s id=%r failed; answering -32603",
        doing,
        slot.method,
        slot.id,
        exc_info=error,
        extra=log_fields(slot.method, slot.id),
    )
    slot.answer_error(RequestError.internal_error(method=slot.method))


def answer_spawned_failure(error: Exception, slot: ResponseSlot | None, work: object) -> None:
    """Log a failure that escaped spawned work and answer the request it served, if any.

    The connection goes on either way: one turn's failure must not end every session.
    """
    name = getattr(work, "__qualname__", repr(work))
    if slot is None:
        log.error("spawned work %s failed", name, exc_info=error)
    elif slot.answered:
        log.error(
            "spawned work %s for %s id=%r failed after the answer",
            name,
            slot.method,
            slot.id,
            exc_info=error,
            extra=log_fields(slot.method, slot.id),
        )
    else:
        answer_failure(error, slot, f"spawned work {name} for")
