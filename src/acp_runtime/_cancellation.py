"""Incoming-request cancellation: the per-request marker and the per-connection registry.

When ``$/cancel_request {"requestId": id}`` arrives, the dispatch loop looks the id up
in :class:`IncomingRequests` (exact JSON match) and sets that request's
:class:`CancellationMarker` before any user handler sees the notification (IN-2).
Unknown or finished ids are ignored and not remembered (IN-3). Cancellation is
cooperative: the marker only informs the request's handler, which still owes the peer
exactly one response (IN-6).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from ._errors import RequestError
from ._jsonrpc import IdKey, RequestId, id_key, log_fields

log = logging.getLogger(__name__)

T = TypeVar("T")


class CancellationMarker:
    """Set once when the peer asks to cancel one incoming request (IN-1).

    Obtained from :attr:`Responder.cancellation`. Cannot be set by user code; only the
    connection sets it. Holding one keeps nothing else alive.
    """

    __slots__ = ("_callbacks", "_event", "_is_cancelled")

    def __init__(self) -> None:
        self._is_cancelled = False
        self._event: anyio.Event | None = None  # created on first wait: most requests never wait
        self._callbacks: list[Callable[[], None]] | None = None  # as the event: on first use

    def is_cancelled(self) -> bool:
        """Whether the peer has asked to cancel the request (non-blocking)."""
        return self._is_cancelled

    async def cancelled(self) -> None:
        """Wait until the peer asks to cancel; returns at once if it already has."""
        if self._is_cancelled:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()

    async def run_until_cancelled(self, work: Awaitable[T]) -> T:
        """Await ``work`` unless cancellation wins.

        Returns the work's result, or raises :meth:`RequestError.request_cancelled`
        (-32800, the standard answer) when the marker is set first; the work is then
        stopped at its next await point and partial results are lost. If the marker is
        already set, ``work`` is not started at all.
        """
        if self._is_cancelled:
            if inspect.iscoroutine(work):
                work.close()
            raise RequestError.request_cancelled()
        with anyio.CancelScope() as scope:
            self._add_callback(scope.cancel)
            try:
                return await work
            finally:
                self._remove_callback(scope.cancel)
        raise RequestError.request_cancelled()

    def _add_callback(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (synchronously, on the loop) when the marker is set."""
        if self._callbacks is None:
            self._callbacks = []
        self._callbacks.append(callback)

    def _remove_callback(self, callback: Callable[[], None]) -> None:
        try:
            if self._callbacks is not None:
                self._callbacks.remove(callback)
        except ValueError:
            pass

    def _set(self) -> bool:
        """Set the marker; False if it was already set (duplicates are no-ops)."""
        if self._is_cancelled:
            return False
        self._is_cancelled = True
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, None
        for callback in callbacks or ():
            callback()
        return True

    def __repr__(self) -> str:
        return f"<CancellationMarker cancelled={self._is_cancelled}>"


class IncomingRequests:
    """The connection's in-flight incoming requests, keyed by exact JSON id.

    If a peer reuses an id while the first request is in flight (a protocol violation),
    the newest registration owns the id: a cancel reaches it, and finishing the stale
    one leaves it alone.
    """

    __slots__ = ("_idle", "_markers")

    def __init__(self) -> None:
        self._markers: dict[IdKey, CancellationMarker] = {}
        self._idle: anyio.Event | None = None

    def register(self, request_id: RequestId) -> CancellationMarker:
        marker = CancellationMarker()
        self._markers[id_key(request_id)] = marker
        return marker

    def finish(self, request_id: RequestId, marker: CancellationMarker) -> None:
        """Forget a request once answered; later cancels for its id are ignored."""
        key = id_key(request_id)
        if self._markers.get(key) is marker:
            del self._markers[key]
            if self._idle is not None and not self._markers:
                self._idle.set()
                self._idle = None

    async def wait_empty(self) -> None:
        """Wait until no request is in flight (each one answered)."""
        if self._markers:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    def cancel(self, request_id: RequestId) -> bool:
        """Set the marker of an in-flight request; False for an unknown id."""
        marker = self._markers.get(id_key(request_id))
        if marker is None:
            log.debug(
                "$/cancel_request for unknown or finished id %r ignored",
                request_id,
                extra=log_fields("$/cancel_request", request_id),
            )
            return False
        marker._set()  # pyright: ignore[reportPrivateUsage]  # the registry owns its markers
        return True

    def __len__(self) -> int:
        return len(self._markers)
