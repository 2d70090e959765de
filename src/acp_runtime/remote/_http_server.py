"""The Streamable HTTP server: an ASGI application serving ACP connections on one URL.

It speaks the wire of the TypeScript SDK 2.4.0 server (``AcpServer`` with its Node
adapter), with the lenient choices that let the Rust and PyPI clients in too: ``POST`` of
``initialize`` answers ``200`` with the JSON answer and ``Acp-Connection-Id`` (even when
the answer is a JSON-RPC error), every other ``POST`` ``202``; the agent's messages flow
on long-lived SSE ``GET`` streams, one for the connection and one per session (created on
demand, one reader each); ``DELETE`` ends the connection. ``Acp-Session-Id`` may be left
out where ``params.sessionId`` says the same, and is not needed on responses.

Every request passes :mod:`.admission` first (403 for a foreign ``Origin`` or, on
loopback, ``Host``; 431 for an oversized head; 503 for an ``initialize`` past
``max_connections``; 408 for an opening POST slower than ``initialize_timeout``).

Each connection runs the whole runtime over an :class:`HttpConnection` transport, hosted
by the ``initialize`` request's own ASGI call (which carries on after its 200, as ASGI
allows), so no lifespan support is needed from the server.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Final, TypeVar, cast

import anyio

from .._jsonrpc import Request, classify, id_key, is_request_id
from .._methods import JsonValue
from ._admission import (
    DEFAULT_INITIALIZE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_HEADERS,
    INITIALIZE_TOO_SLOW,
    SERVER_FULL,
    Admission,
)
from ._asgi import (
    STATUS_TEXT,
    Headers,
    Receive,
    Scope,
    Send,
    challenge_headers,
    plain_response,
    scope_headers,
    serve_lifespan,
)
from ._http_connection import ConnectionClosed, HttpConnection, HttpLimits, Route
from ._serving import Authenticate, HandlerFactory, refusal, servable
from ._sse_writer import write_sse

log = logging.getLogger(__name__)

DEFAULT_MAX_HTTP_MESSAGE_BYTES: Final = 16 * 1024 * 1024
"""The largest POST body (TS's node adapter and Rust agree on 16 MiB)."""

CONNECTION_ID_HEADER: Final = "acp-connection-id"
SESSION_ID_HEADER: Final = "acp-session-id"

SESSION_SCOPED_METHODS: Final = frozenset(
    {
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/load",
        "session/prompt",
        "session/resume",
        "session/set_config_option",
        "session/set_mode",
        "session/set_model",
    }
)
"""Methods that must name their session (header or ``params.sessionId``), as in TS."""

JSON: Final = b"application/json"
TEXT: Final = b"text/plain"
BATCH_ERROR: Final = (
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,'
    '"message":"Invalid request: JSON-RPC batches are not supported"}}'
)


class HttpAnswer(Exception):
    """A request refused with a status and a short fixed text (never a header's value)."""

    def __init__(self, status: int, text: str, headers: Headers = ()) -> None:
        super().__init__(text)
        self.status = status
        self.text = text
        self.headers = headers


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _is_json(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == "application/json"


async def _read_body(receive: Receive, headers: Mapping[str, str], limit: int) -> bytes:
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HttpAnswer(413, f"Request body exceeds {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionClosed
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise HttpAnswer(413, f"Request body exceeds {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parse(body: bytes) -> dict[str, object]:
    try:
        value: object = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise HttpAnswer(400, "Invalid JSON") from None
    if isinstance(value, list):
        raise _Batch
    if not isinstance(value, dict):
        raise HttpAnswer(400, "Invalid JSON-RPC message")
    return cast("dict[str, object]", value)


class _Batch(Exception):
    """A JSON array: answered with TS's -32600 body."""


def _session_of(params: object) -> str | None:
    if not isinstance(params, dict):
        return None
    value = cast("dict[str, object]", params).get("sessionId")
    return value if isinstance(value, str) else None


def _is_response(message: dict[str, object]) -> bool:
    return (
        message.get("jsonrpc") == "2.0"
        and "method" not in message
        and "id" in message
        and is_request_id(message["id"])
        and ("result" in message or "error" in message)
    )


def _request_of(message: dict[str, object]) -> Request | None:
    """The message as the runtime reads it, when it is a request it answers with its own
    id (anything else it answers with ``id: null``, so no route waits for that answer)."""
    call = classify(cast(JsonValue, message))
    return call if isinstance(call, Request) else None


class StreamableHttpApp:
    """ASGI 3 application: ``http`` scopes on ``path`` speak ACP's Streamable HTTP.

    Any other path gets 404; a ``websocket`` scope is refused (mount
    :func:`~acp_runtime.remote._acp_app` to serve both on one path).
    """

    def __init__(
        self,
        handler_factory: HandlerFactory,
        *,
        path: str | None = "/acp",
        max_message_bytes: int = DEFAULT_MAX_HTTP_MESSAGE_BYTES,
        limits: HttpLimits | None = None,
        authenticate: Authenticate | None = None,
        admission: Admission | None = None,
    ) -> None:
        self._factory = handler_factory
        self._path = path
        self._max_message_bytes = max_message_bytes
        self.limits = limits or HttpLimits()
        self._authenticate = authenticate
        self.admission = admission or Admission()
        """The header limits, the Origin and Host checks, the connection cap and the
        ``initialize`` deadline (shared with the WebSocket app under ``acp_app``)."""
        self._connections: dict[str, HttpConnection] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await serve_lifespan(receive, send, self.aclose)
        elif kind == "http":
            await self.handle_http(scope, receive, send)
        elif kind == "websocket":
            await receive()
            await send({"type": "websocket.close", "code": 1008})

    def connection(self, connection_id: str) -> HttpConnection | None:
        """The open connection with that id (for metrics: ``buffered_bytes``)."""
        return self._connections.get(connection_id)

    async def aclose(self) -> None:
        """End every connection: its SSE streams end, its runtime is cancelled."""
        for connection in list(self._connections.values()):
            connection.close()

    async def handle_http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request on any path (404 off ``path``)."""
        head = self.admission.refusal(scope.get("headers") or (), scope.get("server"))
        if head is not None:
            await plain_response(send, head.status, head.text, headers=head.headers)
            return
        if self._path is not None and scope.get("path") != self._path:
            await plain_response(send, 404, "Not found\n")
            return
        headers = scope_headers(scope)
        refused = await refusal(self._authenticate, headers)
        if refused is not None:
            text = STATUS_TEXT[refused.status]
            await plain_response(send, refused.status, text, headers=challenge_headers(refused))
            return
        method = scope.get("method")
        try:
            if method == "POST":
                await self._post(receive, send, headers)
            elif method == "GET":
                await self._get(scope, receive, send, headers)
            elif method == "DELETE":
                self._delete(headers)
                await _empty(send, 202)
            else:
                await _text(send, 405, "Method Not Allowed")
        except HttpAnswer as answer:
            await plain_response(
                send, answer.status, answer.text, content_type=TEXT, headers=answer.headers
            )
        except _Batch:
            await plain_response(send, 400, BATCH_ERROR, content_type=JSON)
        except ConnectionClosed:
            await _text(send, 404, "Unknown Acp-Connection-Id")

    # -- POST ------------------------------------------------------------------------------

    async def _post(self, receive: Receive, send: Send, headers: Mapping[str, str]) -> None:
        if not _is_json(headers.get("content-type")):
            raise HttpAnswer(415, "Unsupported Media Type")
        connection_id = headers.get(CONNECTION_ID_HEADER)
        if connection_id:
            body = await _read_body(receive, headers, self._max_message_bytes)
        else:  # may open a connection: its body has the initialize deadline
            body = await self._read_opening_body(receive, headers)
        message = _parse(body)
        if (
            message.get("jsonrpc") == "2.0"
            and "id" in message
            and message.get("method") == "initialize"
        ):
            if connection_id:
                raise HttpAnswer(400, "Initialize not allowed on existing connection")
            await self._initialize(receive, send, message, body)
            return
        if not connection_id:
            raise HttpAnswer(400, "Missing Acp-Connection-Id")
        connection = self._connection(connection_id)
        connection.busy(+1)
        try:
            if _is_response(message):
                self._check_response_route(connection, message, headers.get(SESSION_ID_HEADER))
            else:
                self._note_request(connection, message, headers.get(SESSION_ID_HEADER))
            await connection.deliver(body)
        finally:
            connection.busy(-1)
        await _empty(send, 202)

    async def _read_opening_body(self, receive: Receive, headers: Mapping[str, str]) -> bytes:
        """The body of a POST naming no connection, within ``initialize_timeout`` (408
        after it), so a client that never finishes its ``initialize`` holds nothing."""
        with anyio.move_on_after(self.admission.initialize_timeout):  # None: no deadline
            return await _read_body(receive, headers, self._max_message_bytes)
        raise HttpAnswer(INITIALIZE_TOO_SLOW.status, INITIALIZE_TOO_SLOW.text)

    def _check_response_route(
        self, connection: HttpConnection, message: dict[str, object], header: str | None
    ) -> None:
        request_id = message["id"]
        key = id_key(request_id) if is_request_id(request_id) else None
        route = connection.client_response_route(key)
        if header and route is not None and header != route:
            raise HttpAnswer(400, "Mismatched Acp-Session-Id")
        connection.answered(key)

    def _note_request(
        self, connection: HttpConnection, message: dict[str, object], header: str | None
    ) -> None:
        method = message.get("method")
        in_params = _session_of(message.get("params"))
        if header and in_params is not None and header != in_params:
            raise HttpAnswer(400, "Mismatched Acp-Session-Id")
        route: Route = header or in_params or None
        if route is None and isinstance(method, str) and method in SESSION_SCOPED_METHODS:
            raise HttpAnswer(400, "Missing Acp-Session-Id")
        limit = connection.limits.max_id_length
        if route is not None and len(route) > limit:
            raise HttpAnswer(400, f"Session ID exceeds maxIdLength ({limit})")
        if "id" not in message:
            return
        request_id = message["id"]
        if isinstance(request_id, str) and len(request_id) > limit:
            raise HttpAnswer(400, f"Request ID exceeds maxIdLength ({limit})")
        call = _request_of(message)
        if call is not None:
            connection.expect_response(id_key(call.id), call.method, route)

    async def _initialize(
        self, receive: Receive, send: Send, message: dict[str, object], body: bytes
    ) -> None:
        request_id = message["id"]
        if not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
            raise HttpAnswer(400, "Initialize request must include an ID")
        if _request_of(message) is None:  # the runtime would answer it with id null
            raise HttpAnswer(400, "Invalid initialize request")
        if not self.admission.take_slot():
            raise HttpAnswer(SERVER_FULL.status, SERVER_FULL.text, SERVER_FULL.headers)
        connection = HttpConnection(str(uuid.uuid4()), self.limits)
        self._connections[connection.connection_id] = connection
        connection.on_close = self._forget
        connection.busy(+1)
        try:
            async with anyio.create_task_group() as host:
                connection.host_scope = host.cancel_scope
                host.start_soon(self._run, connection)
                host.start_soon(connection.watch_idle)
                answer = await self._initial_answer(receive, connection, request_id, body)
                if isinstance(answer, HttpAnswer):
                    await plain_response(send, answer.status, answer.text, content_type=JSON)
                if answer is None or isinstance(answer, HttpAnswer):  # no 200: no connection
                    host.cancel_scope.cancel()  # (the task group would wait for the runtime)
                    return
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [
                            (b"content-type", JSON),
                            (b"content-length", str(len(answer)).encode()),
                            (CONNECTION_ID_HEADER.encode(), connection.connection_id.encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": answer})
                connection.busy(-1)  # after the answer: an ended agent closes at 0
                await connection.closed_event.wait()
        finally:
            connection.close()

    async def _initial_answer(
        self, receive: Receive, connection: HttpConnection, request_id: int | str, body: bytes
    ) -> bytes | HttpAnswer | None:
        """The agent's answer to ``initialize``; None when the client gave up first. A
        runtime that ends without answering gets TS's 500 ``Initialize failed``."""
        answer: bytes | HttpAnswer | None = None
        async with anyio.create_task_group() as waiting:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                waiting.cancel_scope.cancel()

            waiting.start_soon(watch_disconnect)
            try:
                answer = await connection.initialize(id_key(request_id), body)
            except ConnectionClosed:
                error = {"code": -32603, "message": "Initialize failed"}
                failed = {"jsonrpc": "2.0", "id": request_id, "error": error}
                answer = HttpAnswer(500, json.dumps(failed, separators=(",", ":")))
            waiting.cancel_scope.cancel()
        return answer

    async def _run(self, connection: HttpConnection) -> None:
        try:
            await servable(self._factory()).serve(connection)
        except Exception:  # ends like a runtime that stopped: initialize gets its 500
            log.exception("ACP HTTP connection %s failed", connection.connection_id)
        finally:
            connection.agent_ended()

    # -- GET and DELETE --------------------------------------------------------------------

    async def _get(
        self, scope: Scope, receive: Receive, send: Send, headers: Mapping[str, str]
    ) -> None:
        if headers.get("upgrade", "").lower() == "websocket":
            raise HttpAnswer(426, "WebSocket upgrade is not implemented")
        if "text/event-stream" not in headers.get("accept", "").lower():
            raise HttpAnswer(406, "Not Acceptable")
        connection_id = headers.get(CONNECTION_ID_HEADER)
        if not connection_id:
            raise HttpAnswer(400, "Missing Acp-Connection-Id")
        connection = self._connection(connection_id)
        session_id = headers.get(SESSION_ID_HEADER) or None
        limit = connection.limits.max_id_length
        if session_id is not None and len(session_id) > limit:
            raise HttpAnswer(400, f"Session ID exceeds maxIdLength ({limit})")
        lease = connection.acquire(session_id)
        if lease is None:
            raise HttpAnswer(409, "Outbound stream already has an active receiver")
        await write_sse(scope, receive, send, connection, *lease)

    def _delete(self, headers: Mapping[str, str]) -> None:
        connection_id = headers.get(CONNECTION_ID_HEADER)
        if not connection_id:
            raise HttpAnswer(400, "Missing Acp-Connection-Id")
        connection = self._connections.pop(connection_id, None)
        if connection is None:
            raise HttpAnswer(404, "Unknown Acp-Connection-Id")
        connection.close()

    def _connection(self, connection_id: str) -> HttpConnection:
        connection = self._connections.get(connection_id)
        if connection is None or connection.closed:
            raise HttpAnswer(404, "Unknown Acp-Connection-Id")
        return connection

    def _forget(self, connection: HttpConnection) -> None:
        """The connection closed (once): forget it, free its slot."""
        self.admission.release_slot()
        if self._connections.get(connection.connection_id) is connection:
            del self._connections[connection.connection_id]


async def _text(send: Send, status: int, text: str) -> None:
    await plain_response(send, status, text, content_type=TEXT)


async def _empty(send: Send, status: int) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]}
    )
    await send({"type": "http.response.body", "body": b""})


def http_app(
    handler_factory: HandlerFactory,
    *,
    path: str | None = "/acp",
    max_message_bytes: int = DEFAULT_MAX_HTTP_MESSAGE_BYTES,
    max_buffered_bytes: int | None = None,
    stall_timeout: float | None = None,
    max_unread_session_streams: int | None = None,
    idle_timeout: float | None = None,
    client_gone_timeout: float | None = None,
    keep_alive: float | None = None,
    authenticate: Authenticate | None = None,
    allowed_origins: Iterable[str] | None = None,
    allowed_hosts: Iterable[str] | None = None,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    max_headers: int = DEFAULT_MAX_HEADERS,
) -> StreamableHttpApp:
    """An ASGI application serving ACP over Streamable HTTP at ``path`` (None: every path).

    ``handler_factory`` is called once per connection (per ``initialize``). Bounds, per
    connection (None: the default of :class:`HttpLimits`): ``max_message_bytes`` per POST
    body (413 past it), ``max_buffered_bytes`` of SSE output queued for readers (past it
    the agent's sends wait), ``stall_timeout`` seconds at that bound with nothing read
    (then the connection closes), ``max_unread_session_streams`` holding output with no
    reader, ``idle_timeout`` seconds with no request and no reader (``math.inf``: never),
    ``client_gone_timeout`` seconds with a request in progress but no reader and no POST
    (the client is gone: the connection closes and its turns are cancelled),
    ``keep_alive`` seconds between ``:`` comments. ``authenticate(headers)`` sees every
    request's headers: False refuses with 403, a :class:`~acp_runtime.remote.Refusal`
    with its status; no answer echoes a header.

    Safe by default on the network (docs/remote-agents.md, "Origin, Host and caps"): a
    request with a foreign ``Origin``, or on a loopback address a foreign ``Host``, is
    refused with 403 (``allowed_origins`` and ``allowed_hosts`` add to what passes, ``"*"``
    lets all); a head over ``max_header_bytes`` or ``max_headers`` lines with 431; an
    ``initialize`` past ``max_connections`` open connections (None: no cap) with 503; a
    POST that opens a connection must send its body within ``initialize_timeout`` seconds
    (408 after it).
    """
    defaults = HttpLimits()
    limits = HttpLimits(
        max_buffered_bytes=_pick(max_buffered_bytes, defaults.max_buffered_bytes),
        stall_timeout=_pick(stall_timeout, defaults.stall_timeout),
        max_unread_session_streams=_pick(
            max_unread_session_streams, defaults.max_unread_session_streams
        ),
        idle_timeout=_pick(idle_timeout, defaults.idle_timeout),
        client_gone_timeout=_pick(client_gone_timeout, defaults.client_gone_timeout),
        keep_alive=_pick(keep_alive, defaults.keep_alive),
    )
    admission = Admission(
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        max_connections=max_connections,
        initialize_timeout=initialize_timeout,
        max_header_bytes=max_header_bytes,
        max_headers=max_headers,
    )
    return StreamableHttpApp(
        handler_factory,
        path=path,
        max_message_bytes=max_message_bytes,
        limits=limits,
        authenticate=authenticate,
        admission=admission,
    )


_T = TypeVar("_T")


def _pick(value: _T | None, default: _T) -> _T:
    return default if value is None else value
