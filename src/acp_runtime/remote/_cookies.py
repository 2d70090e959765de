"""The Streamable HTTP client's cookie store: every ``Set-Cookie`` name=value kept, sent back.

ACP servers use cookies for load-balancer affinity, not for browser sessions, so this
matches the TypeScript SDK's ``MemoryAcpCookieStore`` rather than RFC 6265: every
attribute (Path, Domain, Expires, Max-Age) is ignored, and a cookie set on any response
is sent on every later request. A store the caller owns outlives a connection, which is
how a reconnect keeps its affinity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SPLIT_SET_COOKIE = re.compile(r",(?=\s*[^;,\s]+=)")
"""Where a folded ``Set-Cookie`` line holds several cookies (a comma before ``name=``)."""


class CookieStore:
    """Cookie name -> value, in the order first set."""

    def __init__(self) -> None:
        self._cookies: dict[str, str] = {}

    def store(self, set_cookie_values: Iterable[str]) -> None:
        """Keep the name=value of each ``Set-Cookie`` header value."""
        for header in set_cookie_values:
            for one in _SPLIT_SET_COOKIE.split(header):
                pair = _pair(one.split(";", 1)[0])
                if pair is not None:
                    self._cookies[pair[0]] = pair[1]

    def cookie_header(self, caller: str | None = None) -> str | None:
        """The ``Cookie`` header to send: the stored cookies merged with the caller's own
        ``Cookie`` header (the caller's value wins for a name in both); None when empty."""
        merged = dict(self._cookies)
        for part in (caller or "").split(";"):
            pair = _pair(part)
            if pair is not None:
                merged[pair[0]] = pair[1]
        return "; ".join(f"{name}={value}" for name, value in merged.items()) or None

    def clear(self) -> None:
        self._cookies.clear()

    def __len__(self) -> int:
        return len(self._cookies)


def _pair(text: str) -> tuple[str, str] | None:
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name:
        return None
    return name, value.strip()
