"""Forward one incoming message to another peer, re-issuing cancellation per hop.

Request ids are per connection: a ``$/cancel_request`` means nothing on any other
connection than the one it arrived on. So a forwarded request gets the next hop's own
id and watches the incoming request's cancellation marker, sending a fresh cancel for
that id when the marker is set (PROXY-1); the raw cancel itself is never tunnelled
(PROXY-4).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .methods import JsonValue
from .successor import is_cancel_request

if TYPE_CHECKING:
    from .connection import Connection
    from .peer import Peer
    from .responder import Responder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProxiedRequest:
    """An incoming request to forward; ``responder`` answers it on its own connection."""

    method: str
    params: JsonValue
    responder: Responder[JsonValue]


@dataclass(frozen=True)
class ProxiedNotification:
    """An incoming notification to forward."""

    method: str
    params: JsonValue


ProxiedMessage = ProxiedRequest | ProxiedNotification


def send_proxied_message_to(connection: Connection, peer: Peer, message: ProxiedMessage) -> None:
    """Forward ``message`` to ``peer`` over ``connection``, cancelling hop by hop.

    A request is re-sent under this connection's own id and its answer (data or error,
    -32800 included) goes back through the message's responder unchanged; the
    responder's cancellation marker is watched, so an upstream cancel becomes a
    ``$/cancel_request`` for the new id (PROXY-1). A ``$/cancel_request`` notification,
    plain or inside ``_proxy/successor`` envelopes, is dropped: its id belongs to
    another connection (PROXY-4). Other notifications are forwarded as they are.
    """
    params = _structured(message.params)
    if isinstance(message, ProxiedRequest):
        connection.send_raw_request(message.method, params, peer=peer).forward_response_to(
            message.responder
        )
    elif is_cancel_request(message.method, message.params):
        log.debug(
            "not tunnelling %s to %r: cancellation is re-issued per hop", message.method, peer
        )
    else:
        connection.send_raw_notification(message.method, params, peer=peer)


def _structured(params: JsonValue) -> dict[str, JsonValue] | list[JsonValue] | None:
    """Params as JSON-RPC allows them (an object, an array or absent); incoming messages
    and successor envelopes were validated to that shape already."""
    return params if isinstance(params, (dict, list)) else None
