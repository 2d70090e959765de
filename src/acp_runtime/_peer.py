"""Peers: *how* a message reaches the other side of a connection.

A connection talks to its counterpart directly. A proxy may address a message to a
peer behind an envelope instead; the :class:`Peer` that sent a request is remembered by
its :class:`~acp_runtime.SentRequest`, so a later ``$/cancel_request`` travels the same
way as the request it cancels (OUT-2).
"""

from __future__ import annotations

from ._methods import EncodedJson, JsonValue, Payload


class Peer:
    """The counterpart, addressed directly. Subclass and override :meth:`wrap` to route
    through an envelope (for example a proxy's successor)."""

    name = "counterpart"

    def wrap(self, method: str, params: JsonValue) -> tuple[str, JsonValue]:
        """The method and params that go on the wire for ``method(params)``."""
        return method, params

    def __repr__(self) -> str:
        return f"<Peer {self.name}>"


COUNTERPART = Peer()
"""The default peer: the other end of the connection, no wrapping."""


def on_wire(peer: Peer, method: str, params: Payload) -> tuple[str, Payload]:
    """``peer.wrap(method, params)`` for a payload that may be JSON text already: it
    passes through a peer that does not wrap (does not override :meth:`Peer.wrap`); an
    envelope gets its value."""
    if isinstance(params, EncodedJson):
        if type(peer).wrap is Peer.wrap:
            return method, params
        params = params.value()
    return peer.wrap(method, params)
