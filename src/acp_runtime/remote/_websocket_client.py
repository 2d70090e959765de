"""The WebSocket client: the upgrade to an ACP agent's URL, then the socket as a transport.

The socket itself (frames, the asyncio and byte-stream paths) is :mod:`.websocket_socket`,
shared with the server; this module opens it: a TCP (or TLS) connection of its own on
asyncio or on any anyio backend, or the upgrade as a request of a lent
``httpx.AsyncClient`` (for its proxy, TLS and cookie settings).
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import urllib.parse
import urllib.request
from collections.abc import AsyncGenerator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc
from wsproto.utilities import generate_accept_token, generate_nonce

from .._framing import DEFAULT_MAX_MESSAGE_BYTES
from .._loop import in_asyncio_task
from ._websocket_handshake import (
    MAX_REFUSAL_BODY_BYTES,
    Accepted,
    WebSocketUpgradeError,
    read_answer,
    upgrade_request,
)
from ._websocket_socket import (
    READ_BYTES,
    HandshakeProtocol,
    LoopWebSocket,
    StreamWebSocket,
    WebSocketTransport,
    stream_reader,
)

if TYPE_CHECKING:  # imported where used: a plain ws:// socket needs neither (nor trio)
    import httpx

__all__ = ["WebSocketTransport", "WebSocketUpgradeError", "connect_websocket"]

OPEN_TIMEOUT: Final = 10.0
"""Default seconds for the TCP connect, the TLS handshake and the 101 together."""


@asynccontextmanager
async def connect_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    client: httpx.AsyncClient | None = None,
    ssl_context: ssl.SSLContext | None = None,
    keepalive_ping_interval: float | None = 20.0,
    keepalive_ping_timeout: float | None = 20.0,
    open_timeout: float | None = OPEN_TIMEOUT,
) -> AsyncGenerator[WebSocketTransport, None]:
    """Open a WebSocket to an ACP agent at ``url`` (``ws://``, ``wss://``, or ``http(s)://``)
    and yield its transport; leaving the block closes the socket (1000).

    ``headers`` go on the upgrade request (``Authorization`` and the like);
    ``ssl_context`` verifies a ``wss://`` server (default: httpx's, with certifi's roots).
    ``client`` (an ``httpx.AsyncClient``) makes the upgrade through it, for its proxy, TLS
    and cookie settings; the frames then run over its connection. Without one, a proxy set
    in the environment (``HTTPS_PROXY`` and the like) is used the same way, and otherwise
    the socket is the client's own. A ping goes out every ``keepalive_ping_interval``
    seconds; with nothing received within ``keepalive_ping_timeout`` of it the socket is
    closed with 1011 and ``receive`` fails.

    Raises :class:`WebSocketUpgradeError` when the server refuses the upgrade (its
    ``status_code`` says why: 401/403 for auth, 404 for a wrong path), ``TimeoutError``
    when it does not answer within ``open_timeout`` seconds, ``OSError`` when it cannot be
    reached.
    """
    target = _Target(url, dict(headers or {}))
    if client is None and target.proxied():
        import httpx

        async with httpx.AsyncClient(verify=ssl_context or True) as own:
            async with connect_websocket(
                url,
                headers=headers,
                max_message_bytes=max_message_bytes,
                client=own,
                keepalive_ping_interval=keepalive_ping_interval,
                keepalive_ping_timeout=keepalive_ping_timeout,
                open_timeout=open_timeout,
            ) as transport:
                yield transport
        return
    async with _open(target, max_message_bytes, client, ssl_context, open_timeout) as transport:
        if keepalive_ping_interval is None:
            yield transport
            return
        failure: BaseException | None = None
        async with anyio.create_task_group() as keepers:
            keepers.start_soon(
                transport.keep_alive, keepalive_ping_interval, keepalive_ping_timeout
            )
            try:
                yield transport
            except BaseException as exc:  # raised below, outside the group: not wrapped
                failure = exc
            finally:
                await transport.aclose()
                keepers.cancel_scope.cancel()
        if failure is not None:
            raise failure


class _Target:
    """Where ``url`` points, and the request that upgrades there."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("ws", "wss", "http", "https") or not parts.hostname:
            raise ValueError(f"not a ws(s):// or http(s):// URL: {url!r}")
        self.secure = scheme in ("wss", "https")
        self.http_url = urllib.parse.urlunsplit(("https" if self.secure else "http", *parts[1:]))
        self.hostname = parts.hostname
        self.port = parts.port or (443 if self.secure else 80)
        self.host_header = parts.netloc.rpartition("@")[2]
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.username is not None and not any(k.lower() == "authorization" for k in headers):
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        self.headers = headers

    def proxied(self) -> bool:
        """Whether the environment names a proxy for this URL (as httpx's ``trust_env``)."""
        proxies = urllib.request.getproxies_environment()
        wanted = ("https", "all") if self.secure else ("http", "all")
        if not any(proxies.get(kind) for kind in wanted):
            return False
        return not urllib.request.proxy_bypass(self.hostname)


@asynccontextmanager
async def _open(
    target: _Target,
    max_message_bytes: int,
    client: httpx.AsyncClient | None,
    ssl_context: ssl.SSLContext | None,
    open_timeout: float | None,
) -> AsyncGenerator[WebSocketTransport, None]:
    if client is not None:
        async with _through_httpx(target, max_message_bytes, client, open_timeout) as transport:
            yield transport
        return
    context = (ssl_context or _default_ssl_context()) if target.secure else None
    if in_asyncio_task():
        transport = await _open_on_loop(target, max_message_bytes, context, open_timeout)
    else:
        transport = await _open_stream(target, max_message_bytes, context, open_timeout)
    try:
        yield transport
    finally:
        await transport.aclose()


async def _open_on_loop(
    target: _Target,
    max_message_bytes: int,
    context: ssl.SSLContext | None,
    open_timeout: float | None,
) -> LoopWebSocket:
    loop = asyncio.get_running_loop()
    socket = HandshakeProtocol()
    with anyio.fail_after(open_timeout):
        transport, _ = await loop.create_connection(
            lambda: socket,
            target.hostname,
            target.port,
            ssl=context,
            server_hostname=target.hostname if context is not None else None,
        )
        try:
            handshake, request = upgrade_request(target.host_header, target.target, target.headers)
            transport.write(request)
            accepted = await read_answer(handshake, socket.read)
        except BaseException:
            transport.abort()
            raise
    return LoopWebSocket(max_message_bytes, accepted, transport, socket)


async def _open_stream(
    target: _Target,
    max_message_bytes: int,
    context: ssl.SSLContext | None,
    open_timeout: float | None,
) -> StreamWebSocket:
    with anyio.fail_after(open_timeout):
        if context is None:
            stream: anyio.abc.ByteStream = await anyio.connect_tcp(target.hostname, target.port)
        else:
            stream = await anyio.connect_tcp(
                target.hostname,
                target.port,
                tls=True,
                ssl_context=context,
                tls_hostname=target.hostname,
            )
        try:
            handshake, request = upgrade_request(target.host_header, target.target, target.headers)
            await stream.send(request)
            read = stream_reader(stream)
            accepted = await read_answer(handshake, read)
        except BaseException:
            await anyio.aclose_forcefully(stream)
            raise
    return StreamWebSocket(max_message_bytes, accepted, read, stream.send, stream.aclose)


@asynccontextmanager
async def _through_httpx(
    target: _Target, max_message_bytes: int, client: httpx.AsyncClient, open_timeout: float | None
) -> AsyncGenerator[WebSocketTransport, None]:
    """The upgrade as a request of ``client`` (its proxy, TLS, cookies and auth apply),
    then the frames over the connection it hands over."""
    import httpcore
    import httpx

    nonce = generate_nonce()
    upgrade = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": nonce.decode(),
        "Sec-WebSocket-Version": "13",
    }
    async with AsyncExitStack() as stack:
        with anyio.fail_after(open_timeout):
            try:
                response = await stack.enter_async_context(
                    client.stream("GET", target.http_url, headers={**target.headers, **upgrade})
                )
            except httpx.RemoteProtocolError as exc:  # not an HTTP answer at all
                raise WebSocketUpgradeError(f"invalid WebSocket handshake: {exc}") from None
            headers = {name.lower(): value for name, value in response.headers.items()}
            if response.status_code != 101:
                raise WebSocketUpgradeError(
                    f"the server refused the WebSocket upgrade with {response.status_code}",
                    status_code=response.status_code,
                    headers=headers,
                    body=await _start_of_body(response),
                )
        _check_switch(headers, nonce)
        stream = response.extensions["network_stream"]

        async def read() -> bytes:
            try:
                data: bytes = await stream.read(READ_BYTES)
            except httpcore.NetworkError as exc:
                raise anyio.BrokenResourceError from exc
            return data

        async def write(data: bytes) -> None:
            try:
                await stream.write(data)
            except httpcore.NetworkError as exc:
                raise anyio.BrokenResourceError from exc

        transport = StreamWebSocket(
            max_message_bytes, Accepted(headers, b""), read, write, stream.aclose
        )
        try:
            yield transport
        finally:
            await transport.aclose()


async def _start_of_body(response: httpx.Response) -> bytes:
    """The first :data:`MAX_REFUSAL_BODY_BYTES` of a refusal's body: no more is read
    (a body may never end)."""
    body = b""
    async for chunk in response.aiter_bytes():  # decoded, as ``aread`` gave it
        body += chunk
        if len(body) >= MAX_REFUSAL_BODY_BYTES:
            break
    return body[:MAX_REFUSAL_BODY_BYTES]


def _check_switch(headers: Mapping[str, str], nonce: bytes) -> None:
    """RFC 6455 4.1: what a client checks in a 101 (wsproto does it on the other path):
    the upgrade to websocket, the accept token, and no extension or subprotocol that was
    not asked for."""
    connection = {token.strip().lower() for token in headers.get("connection", "").split(",")}
    if headers.get("upgrade", "").lower() != "websocket" or "upgrade" not in connection:
        raise WebSocketUpgradeError("invalid WebSocket handshake: no 'Upgrade: websocket'")
    if headers.get("sec-websocket-accept", "").encode() != generate_accept_token(nonce):
        raise WebSocketUpgradeError("invalid WebSocket handshake: bad accept token")
    for name in ("sec-websocket-extensions", "sec-websocket-protocol"):
        if name in headers:
            raise WebSocketUpgradeError(f"invalid WebSocket handshake: {name} not asked for")


def _default_ssl_context() -> ssl.SSLContext:
    """httpx's default context (certifi's roots), as when httpx made the upgrade."""
    import httpx

    return httpx.create_ssl_context()
