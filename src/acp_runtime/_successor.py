"""The ``_proxy/successor`` envelope: one inner message flattened into the outer params.

A proxy run by a conductor has one connection, to the conductor. Messages for (and
from) the next component down the chain, its *successor*, travel inside an envelope::

    {"method": "_proxy/successor",
     "params": {"method": <inner>, "params": <inner params>, "_meta"?: ...}}

The outer message is a request when it has an ``id``; its response carries the inner
result or error unchanged. Ids are per connection, so the outer id is the one that
counts: a ``$/cancel_request`` for a request sent inside an envelope goes in the same
envelope with ``requestId`` = the outer id, and the receiving connection peels envelopes
before looking the id up (so a wrapped or a plain cancel both reach that request).

The v1 *unstable* schema names the same envelope ``proxy/successor`` and says its cancel
is sent plain; :class:`SuccessorPeer` can speak that dialect too, and incoming envelopes
of either name are peeled.
"""

from __future__ import annotations

from typing import NamedTuple

from ._methods import JsonValue
from ._peer import Peer
from ._settlement import CANCEL_REQUEST_METHOD

SUCCESSOR_METHOD = "_proxy/successor"
"""The envelope method the Rust SDK's conductor uses."""

SCHEMA_SUCCESSOR_METHOD = "proxy/successor"
"""The envelope method of the v1 unstable schema."""

ENVELOPE_METHODS = frozenset({SUCCESSOR_METHOD, SCHEMA_SUCCESSOR_METHOD})
"""Envelope methods peeled on receipt."""

PROXY_INITIALIZE_METHOD = "_proxy/initialize"
"""Sent by a conductor instead of ``initialize`` to a component that has a successor:
the component learns it runs as a proxy. Same params and result as ``initialize``."""

MAX_ENVELOPE_DEPTH = 64
"""Peeling stops here: a deeper nest is treated as not-an-envelope (no unbounded work)."""


class Envelope(NamedTuple):
    """The inner message of one successor envelope (a named tuple, as the records of
    ``acp_runtime._jsonrpc``: cheaper to create than a dataclass at start-up)."""

    method: str
    params: JsonValue
    meta: JsonValue = None
    """The envelope's own ``_meta`` (``meta`` is accepted as an alias on receipt)."""


def wrap_successor(
    method: str,
    params: JsonValue,
    *,
    meta: JsonValue = None,
    envelope_method: str = SUCCESSOR_METHOD,
) -> tuple[str, dict[str, JsonValue]]:
    """The outer method and params that carry ``method(params)`` to a successor."""
    inner: dict[str, JsonValue] = {"method": method}
    if params is not None:
        inner["params"] = params
    if meta is not None:
        inner["_meta"] = meta
    return envelope_method, inner


def open_envelope(method: str, params: JsonValue) -> Envelope | None:
    """The inner message if ``method(params)`` is a well-formed envelope, else ``None``.

    Well-formed: an envelope method, params an object with a string ``method`` and, if
    present and not null, object or array ``params``. A malformed envelope is left for
    the handlers as it is.
    """
    if method not in ENVELOPE_METHODS or not isinstance(params, dict):
        return None
    inner_method = params.get("method")
    inner_params = params.get("params")
    if not isinstance(inner_method, str):
        return None
    if inner_params is not None and not isinstance(inner_params, (dict, list)):
        return None
    meta = params["_meta"] if "_meta" in params else params.get("meta")
    return Envelope(inner_method, inner_params, meta)


def peel_envelopes(method: str, params: JsonValue) -> tuple[str, JsonValue]:
    """The innermost method and params, through any number of well-formed envelopes."""
    for _ in range(MAX_ENVELOPE_DEPTH):
        envelope = open_envelope(method, params)
        if envelope is None:
            return method, params
        method, params = envelope.method, envelope.params
    return method, params


def is_cancel_request(method: str, params: JsonValue) -> bool:
    """Whether a notification is a ``$/cancel_request``, plain or inside envelopes."""
    return peel_envelopes(method, params)[0] == CANCEL_REQUEST_METHOD


class SuccessorPeer(Peer):
    """The next component down a conductor's chain, reached through envelopes.

    ``send_request_to(SUCCESSOR, ...)`` sends the request wrapped; its
    :class:`~acp_runtime.SentRequest` remembers this peer, so ``cancel()`` sends the
    ``$/cancel_request`` wrapped the same way with the outer id (OUT-2). With
    ``wrap_cancel=False`` the cancel goes plain, as the v1 unstable schema asks for its
    ``proxy/successor``.
    """

    def __init__(
        self,
        envelope_method: str = SUCCESSOR_METHOD,
        *,
        wrap_cancel: bool = True,
        name: str = "successor",
    ) -> None:
        self.envelope_method = envelope_method
        self.wrap_cancel = wrap_cancel
        self.name = name

    def wrap(self, method: str, params: JsonValue) -> tuple[str, JsonValue]:
        if method == CANCEL_REQUEST_METHOD and not self.wrap_cancel:
            return method, params
        return wrap_successor(method, params, envelope_method=self.envelope_method)


SUCCESSOR = SuccessorPeer()
"""The successor as the Rust SDK's conductor addresses it (``_proxy/successor``, cancels
wrapped)."""
