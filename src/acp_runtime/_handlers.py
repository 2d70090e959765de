"""Handler routes: decode params, call the user handler, map its outcome to the wire.

This is the one place where handler exceptions become JSON-RPC errors:

* a :class:`RequestError` raised by a request handler answers with it;
* pydantic's ``ValidationError`` while decoding params answers -32602 with a summary of
  the errors in ``data`` (locations, messages, types; not the input);
* any other exception is logged with its traceback and answered -32603 "Internal error
  in <method>", with no details of it on the wire.

Notification handlers never answer; their failures are only logged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from ._errors import RequestError
from ._jsonrpc import log_fields
from ._log_throttle import peer_log
from ._methods import JsonValue, NotificationMethod, RequestMethod
from ._responder import Responder
from ._response_slot import ResponseSlot, answer_failure
from ._sent_request import validation_summary
from ._turns import session_id_of

if TYPE_CHECKING:
    from ._connection import Connection, NotificationRoute, RequestRoute

log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")

RequestHandler = Callable[[P, Responder[R]], Awaitable["R | None"]]
"""``async (params, responder) -> result | None``: a returned value answers the request;
``None`` means the responder was answered or handed to spawned work."""

NotificationHandler = Callable[[P, "Connection"], Awaitable[None]]
"""``async (params, connection) -> None``."""

RawRequestHandler = Callable[[str, JsonValue, Responder[JsonValue]], Awaitable[JsonValue]]
"""``async (method, params, responder) -> json | None``, for methods without a typed
binding (``_``-prefixed extensions). Returning ``None`` leaves the answer to the
responder; to answer JSON ``null``, call ``responder.respond(None)``."""

RawNotificationHandler = Callable[[str, JsonValue, "Connection"], Awaitable[None]]
"""``async (method, params, connection) -> None``."""


def _identity(value: JsonValue) -> JsonValue:
    return value


def typed_request_route(
    binding: RequestMethod[P, R], handler: RequestHandler[P, R]
) -> RequestRoute:
    async def route(method: str, raw: JsonValue, slot: ResponseSlot, cx: Connection) -> None:
        try:
            params = binding.params.load(raw)
        except ValidationError as error:
            slot.answer_error(RequestError.invalid_params({"errors": validation_summary(error)}))
            return
        responder = Responder(slot, cx, binding.result.encode)
        # As answer_failures does, inline: a shared coroutine would cost one per request.
        try:
            result = await handler(params, responder)
        except Exception as error:
            answer_failure(error, slot, "handler for")
            return
        if result is not None:
            responder.respond(result)

    return route


async def cancel_turn_route(method: str, raw: JsonValue, connection: Connection) -> None:
    """The default ``session/cancel`` handling: cancel the session's running turns."""
    session_id = session_id_of(raw)
    if session_id is not None:
        connection.running_turns.cancel(session_id)


def raw_request_route(handler: RawRequestHandler) -> RequestRoute:
    async def route(method: str, raw: JsonValue, slot: ResponseSlot, cx: Connection) -> None:
        responder = Responder(slot, cx, _identity)
        # As in typed_request_route: no shared coroutine per request.
        try:
            result = await handler(method, raw, responder)
        except Exception as error:
            answer_failure(error, slot, "handler for")
            return
        if result is not None:
            responder.respond(result)

    return route


def typed_notification_route(
    binding: NotificationMethod[P], handler: NotificationHandler[P]
) -> NotificationRoute:
    async def route(method: str, raw: JsonValue, connection: Connection) -> None:
        try:
            params = binding.params.load(raw)
        except ValidationError as error:
            peer_log.log(
                log,
                logging.WARNING,
                "notification %s with invalid params ignored: %s",
                method,
                validation_summary(error),
                extra=log_fields(method),
            )
            return
        await _notify(handler, params, connection, method)

    return route


def raw_notification_route(handler: RawNotificationHandler) -> NotificationRoute:
    async def route(method: str, raw: JsonValue, connection: Connection) -> None:
        async def call(params: JsonValue, cx: Connection) -> None:
            await handler(method, params, cx)

        await _notify(call, raw, connection, method)

    return route


async def _notify(
    handler: Callable[[Any, Connection], Awaitable[None]],
    params: object,
    connection: Connection,
    method: str,
) -> None:
    try:
        await handler(params, connection)
    except Exception:
        peer_log.log(
            log,
            logging.ERROR,
            "notification handler for %s failed",
            method,
            exc_info=True,
            extra=log_fields(method),
        )
