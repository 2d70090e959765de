"""What routing needs of a JSON-RPC message, read without a JSON parse where the layout
allows.

The runtime's encoders, and the TypeScript SDK's ``JSON.stringify`` of its envelopes,
write ``{"jsonrpc":"2.0","id":<int>,"method":"<m>","params":{"sessionId":"<s>",...`` and
``{"jsonrpc":"2.0","id":<int>,"result":...``: the head says what the message is, whose
answer it is and which session it names. Both Streamable HTTP ends route every message
(the server each agent message, the client each event it reads), so reading that head
instead of parsing saves a parse per notification. Anything else gets ``None`` and is
parsed by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

_HEAD: Final = b'{"jsonrpc":"2.0",'
_NOTIFICATION_HEAD: Final = b'{"jsonrpc":"2.0","method":"'
_SESSION_PARAMS: Final = b',"params":{"sessionId":"'
_BACKSLASH: Final = 0x5C
"""A byte value: on Python 3.11 a bytes needle in ``in`` first fails as an integer (a
TypeError built and dropped), so multi-byte tests here use ``find``."""


@dataclass(slots=True)  # not frozen: a frozen dataclass costs three times as much to make
class QuickRoute:
    is_response: bool
    id: int | None
    """The message's id (a non-negative integer), None when it has none."""
    session_id: str | None
    """A call's ``params.sessionId``."""


def is_plain_notification(message: bytes) -> bool:
    """A notification in the usual layout, with no ``"id"`` key anywhere: a client has
    nothing to route for it (no answer to find, none to send)."""
    return message.startswith(_NOTIFICATION_HEAD) and message.find(b'"id"') < 0


def quick_route(message: bytes) -> QuickRoute | None:
    """The route of a message in one of the usual layouts; None for anything else (a
    string or negative id, params without a leading ``sessionId``, a result naming a
    session, an ``"id"`` key anywhere in a message without one at its head)."""
    if not message.startswith(_HEAD):
        return None
    rest = len(_HEAD)
    request_id: int | None = None
    if message.startswith(b'"id":', rest):
        comma = message.find(b",", rest + 5)
        digits = message[rest + 5 : comma]
        if comma < 0 or not digits.isdigit():
            return None  # a string or negative id: parsed
        request_id = int(digits)
        rest = comma + 1
        if message.startswith(b'"result":', rest) or message.startswith(b'"error":', rest):
            if message.find(b'"sessionId"') >= 0:
                return None  # a session/new result: its session is read by a parse
            return QuickRoute(True, request_id, None)
    elif message.find(b'"id"') >= 0:
        return None  # an id after the params would make it a request: parsed
    if not message.startswith(b'"method":"', rest):
        return None
    end = message.find(b'"', rest + 10)
    if end < 0 or _BACKSLASH in message[rest + 10 : end]:
        return None
    if not message.startswith(_SESSION_PARAMS, end + 1):
        return None  # params without a leading sessionId may still hold one: parsed
    start = end + 1 + len(_SESSION_PARAMS)
    close = message.find(b'"', start)
    session = message[start:close]
    if close < 0 or _BACKSLASH in session or not session:
        return None
    return QuickRoute(False, request_id, session.decode())
