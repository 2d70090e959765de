"""Which ``Origin`` and ``Host`` a remote server lets in: the defence against web pages.

A page the user visits can open a WebSocket to any address (browsers apply no CORS rule to
WebSocket) and, through DNS rebinding (its own name re-pointed at 127.0.0.1), send
same-origin HTTP requests to a local port. An agent on loopback that reads files and runs
terminals is then open to every site. Browsers always say where a request comes from
(``Origin``) and which name they think they reach (``Host``); editors and other
non-browser clients send no ``Origin``. So, by default:

- a request with no ``Origin`` passes the origin check;
- an ``Origin`` passes when it is listed in ``allowed_origins``, or when the request came
  in on a loopback address and the origin is a loopback one (``http(s)://localhost``,
  ``127.0.0.0/8``, ``[::1]``, any port); any other is refused with 403;
- on a loopback address the ``Host`` must be a loopback name (``localhost``, ``127.x``,
  ``[::1]``, any port) or listed in ``allowed_hosts``, else 403: a rebound name is not;
- on any other address every ``Host`` passes unless ``allowed_hosts`` is given, and then
  only those.

``"*"`` in either list lets every value through. Where a request came in is the server's
own address for the connection (the ASGI scope's ``server``; the listening socket's local
address on the own listener); a scope without one (a Unix socket, or a server that does
not say) is held to the loopback rules, the stricter ones.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Final, cast

LOOPBACK_NAMES: Final = frozenset({"localhost"})
ANY: Final = "*"


class OriginPolicy:
    """The origin and host checks, with their lists (None: the defaults alone)."""

    __slots__ = ("_any_host", "_any_origin", "_hosts", "_origins")

    def __init__(
        self,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
    ) -> None:
        origins = {_origin_key(origin) for origin in allowed_origins or ()}
        self._any_origin = ANY in origins
        self._origins = frozenset(origins - {ANY})
        hosts = None if allowed_hosts is None else {_host_key(host) for host in allowed_hosts}
        self._any_host = hosts is not None and ANY in hosts
        self._hosts = None if hosts is None else frozenset(hosts - {ANY})

    def allows(self, origin: str | None, host: str | None, server: Any) -> bool:
        """Whether a request with these ``Origin`` and ``Host`` values (None: absent),
        arrived at ``server`` (the ASGI ``(host, port)``, or None), may pass."""
        loopback = on_loopback(server)
        return self._origin_allowed(origin, loopback) and self._host_allowed(host, loopback)

    def _origin_allowed(self, origin: str | None, loopback: bool) -> bool:
        if origin is None or self._any_origin:
            return True
        if _origin_key(origin) in self._origins:
            return True
        return loopback and is_loopback_origin(origin)

    def _host_allowed(self, host: str | None, loopback: bool) -> bool:
        if host is None or self._any_host:  # no browser leaves Host out
            return True
        name = _host_key(host)
        if self._hosts is not None and name in self._hosts:
            return True
        if loopback:
            return is_loopback_name(name)
        return self._hosts is None


def on_loopback(server: Any) -> bool:
    """Whether the connection came in on a loopback address; True when the address is
    unknown or not an IP address (a Unix socket): the stricter rules then."""
    if not isinstance(server, Sequence) or not server:
        return True
    address: object = cast("Sequence[object]", server)[0]
    if not isinstance(address, str):
        return True
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return True
    return _is_loopback_ip(ip)


@lru_cache(maxsize=256)
def is_loopback_name(name: str) -> bool:
    """``localhost``, or an address in 127.0.0.0/8 or ``::1`` (lower-case, no port)."""
    if name in LOOPBACK_NAMES:
        return True
    try:
        return _is_loopback_ip(ipaddress.ip_address(name))
    except ValueError:
        return False


@lru_cache(maxsize=256)
def is_loopback_origin(origin: str) -> bool:
    """An ``http`` or ``https`` origin on a loopback name, any port."""
    try:
        parts = urllib.parse.urlsplit(origin.strip())
        name = parts.hostname
    except ValueError:
        return False
    return (
        parts.scheme.lower() in ("http", "https")
        and name is not None
        and (is_loopback_name(name.rstrip(".")))
    )


def _is_loopback_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def _origin_key(origin: str) -> str:
    """An origin as compared: lower-case, no trailing slash."""
    return origin.strip().lower().rstrip("/")


@lru_cache(maxsize=256)
def _host_key(host: str) -> str:
    """A ``Host`` value (or a listed host) as compared: the name, lower-case, without
    port, brackets or a trailing dot."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else host
    if host.count(":") > 1:  # a bare IPv6 address (a listed host, not a Host header)
        return host
    return host.partition(":")[0].rstrip(".")
