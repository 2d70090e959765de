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

from ._methods import JsonValue
from ._successor import is_cancel_request

if TYPE_CHECKING:
    from ._connection import Connection
    from ._peer import Peer
    from ._responder import Responder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProxiedRequest:
    """An incoming request to forward; ``responder`` answers it on its own connection."""

    method: str
    params: JsonValue
    responder: Responder[JsonValue]

    def forward(self, connection: Connection, peer: Peer) -> None:
        """Re-send under ``connection``'s own id; the answer (data or error, -32800
        included) goes back through :attr:`responder` unchanged, and an upstream cancel
        becomes a ``$/cancel_request`` for the new id (PROXY-1)."""
        sent = connection.send_raw_request(self.method, _structured(self.params), peer=peer)
        sent.forward_response_to(self.responder)


@dataclass(frozen=True)
class ProxiedNotification:
    """An incoming notification to forward."""

    method: str
    params: JsonValue

    def forward(self, connection: Connection, peer: Peer) -> None:
        """Send it on as it is, except a ``$/cancel_request`` (plain or inside
        ``_proxy/successor`` envelopes): its id belongs to another connection (PROXY-4)."""
        if is_cancel_request(self.method, self.params):
            log.debug(
                "not tunnelling %s to %r: cancellation is re-issued per hop", self.method, peer
            )
            return
        connection.send_raw_notification(self.method, _structured(self.params), peer=peer)


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
    message.forward(connection, peer)


def _structured(params: JsonValue) -> dict[str, JsonValue] | list[JsonValue] | None:
    """Params as JSON-RPC allows them (an object, an array or absent); incoming messages
    and successor envelopes were validated to that shape already."""
    return params if isinstance(params, (dict, list)) else None
