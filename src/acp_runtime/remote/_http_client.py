"""The Streamable HTTP client transport: POSTs out, long-lived SSE GETs in, over httpx.

It speaks the wire of the TypeScript SDK 2.4.0 (``createHttpStream``), so one
:class:`HttpTransport` is one ACP connection:

* The first message must be ``initialize``; its POST answers ``200`` with the JSON
  response and the ``Acp-Connection-Id`` header. Then the connection's SSE GET starts.
* Before a message whose ``params.sessionId`` is a string goes out, that session's SSE GET
  is open (its response headers arrived), so nothing the agent sends for it is missed;
  a ``session/new`` or ``session/fork`` result opens the new session's stream at once.
* ``Acp-Session-Id`` goes on every request and notification with a string
  ``params.sessionId`` (never on ``$/`` methods such as ``$/cancel_request``) and on the
  answer to a server request that named a session (recorded when it arrives, keyed by the
  id's JSON type and value, so ``1`` is not ``"1"``).
* Requests and notifications are POSTed in order, one at a time; answers to the agent's
  requests go on a lane of their own, so a permission answer never waits behind a POST
  the server holds.

Failures the runtime sees as answers, so the whole connection machinery (settlement,
cancellation, proxies) is unchanged: a request that can no longer be answered gets a
JSON-RPC error answer (-32603) made here and read like any other, and a failure of the
whole transport ends :meth:`HttpTransport.receive` (the connection then settles every
pending request):

* the session's stream ends: that session's requests in flight fail ("ACP session SSE
  stream closed"); its next message reopens the stream;
* 409 on a session's GET or POST: the session is failed (its requests in flight and
  later ones get the error, its notifications and answers are dropped) until a
  ``session/load`` or ``session/resume`` for it goes out;
* any other non-2xx on a request's POST fails that request only, with ``ACP POST failed:
  <status> <reason>: <body>`` and ``data`` ``{"status", "body"}`` (at most 8 KiB);
* 401, 403, 404 or 410 on any POST, a failed GET, a network error, or a failed POST of
  a notification or an answer: the transport fails (``BrokenResourceError``); the end of
  the connection's stream ends it too (``EndOfStream``, the server closed it).

No error message repeats a configured header value (tokens): it is replaced by
``[redacted]``, also where a server echoes it in an error body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import anyio
import anyio.abc
import httpx

from .._framing import EagerReceiver
from .._transport import MessageTooLarge
from ._cookies import CookieStore
from ._inbox import Inbox
from ._message_route import is_plain_notification, quick_route
from ._sse import DEFAULT_MAX_EVENT_BYTES, OversizedEvent, SseItem, SseParser

log = logging.getLogger(__name__)

CONNECTION_ID_HEADER = "Acp-Connection-Id"
SESSION_ID_HEADER = "Acp-Session-Id"
FATAL_POST_STATUSES = frozenset({401, 403, 404, 410})
"""A POST status that means the connection is unusable (credentials refused, or the
server no longer knows the connection)."""
SESSION_REATTACH_METHODS = frozenset({"session/load", "session/resume"})
MAX_ERROR_BODY_BYTES = 8 * 1024
LANE_BUFFER = 256
"""Messages each send lane queues before :meth:`HttpTransport.send` waits."""
INBOUND_BUFFER = 256
"""Messages read from the SSE streams before the readers wait for the connection."""
CLOSE_TIMEOUT = 5.0
"""How long closing waits for queued messages to be POSTed, and for the DELETE."""
CONNECT_TIMEOUT = 30.0

IdKey = tuple[str, object]
Json = Any


class HttpTransportError(anyio.BrokenResourceError):
    """The transport failed as a whole; the message says why (never a header value)."""


class HttpStatusError(Exception):
    """A non-2xx answer: ``"<what>: <status> <reason>: <body>"``, the body cut to 8 KiB."""

    def __init__(self, what: str, status: int, reason: str, body: str) -> None:
        text = f"{what}: {status} {reason}".rstrip()
        super().__init__(f"{text}: {body}" if body else text)
        self.status = status
        self.body = body

    def error_data(self) -> Json:
        try:
            body: Json = json.loads(self.body)
        except ValueError:
            body = self.body
        return {"status": self.status, "body": body}


@dataclass(eq=False)
class _SessionStream:
    ready: anyio.Event = field(default_factory=anyio.Event)
    error: Exception | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class HttpTransport:
    """A :class:`~acp_runtime._transport.Transport` over one Streamable HTTP connection.

    Made by :func:`connect_http`, which runs its background tasks (the SSE readers and
    the two send lanes) and closes it when its block ends.
    """

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        tg: anyio.abc.TaskGroup,
        *,
        headers: Mapping[str, str],
        cookies: CookieStore | None,
        owns_cookies: bool,
        max_message_bytes: int,
    ) -> None:
        self.url = url
        self._http = http
        self._tg = tg
        self._headers = httpx.Headers(headers)
        self._secrets = _secrets(headers)
        self._cookies = cookies
        self._owns_cookies = owns_cookies
        self._max_message_bytes = max_message_bytes
        self.connection_id: str | None = None
        """The server's ``Acp-Connection-Id``, once ``initialize`` was answered."""
        self._inbox: Inbox[SseItem] = Inbox(INBOUND_BUFFER)
        self._calls_tx, calls = anyio.create_memory_object_stream[tuple[bytes, Json]](LANE_BUFFER)
        self._answers_tx, answers = anyio.create_memory_object_stream[tuple[bytes, Json]](
            LANE_BUFFER
        )
        self._lane_scopes = (anyio.CancelScope(), anyio.CancelScope())
        self._lanes_left = 2
        self._lanes_done = anyio.Event()
        self._connection_scope = anyio.CancelScope()
        self._sessions: dict[str, _SessionStream] = {}
        self._failed_sessions: dict[str, HttpStatusError] = {}
        self._in_flight: dict[IdKey, tuple[str | None, Json]] = {}
        self._answer_sessions: dict[IdKey, str] = {}
        self._ended = False
        self._failure: HttpTransportError | None = None
        self._closing = False
        tg.start_soon(self._run_lane, calls, self._lane_scopes[0])
        tg.start_soon(self._run_lane, answers, self._lane_scopes[1])

    # -- the Transport protocol -------------------------------------------------------------

    async def receive(self) -> bytes:
        try:
            item = await self._inbox.get()
        except anyio.EndOfStream:
            if self._failure is not None:
                raise self._failure from None
            raise
        if isinstance(item, OversizedEvent):
            raise MessageTooLarge(item.limit, item.prefix)
        return item

    def set_eager_receiver(self, receiver: EagerReceiver | None) -> bool:
        """Offer what the SSE readers read while :meth:`receive` waits on an empty inbox
        to ``receiver`` first (a response is settled without waking the connection's
        reader); see :mod:`.inbox`."""
        self._inbox.eager = receiver
        return True

    async def send(self, message: bytes) -> None:
        if self._failure is not None:
            raise self._failure
        if self._ended or self._closing:
            raise anyio.ClosedResourceError
        try:
            parsed: Json = json.loads(message)
        except ValueError:
            parsed = None
        lane = self._answers_tx if _is_response(parsed) else self._calls_tx
        try:
            await lane.send((message, parsed))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise self._failure or anyio.ClosedResourceError() from None

    async def aclose(self) -> None:
        """POST what is queued (for up to 5 s), stop the SSE readers, DELETE the
        connection (any 2xx is fine), and end :meth:`receive`."""
        if self._closing:
            return
        self._closing = True
        with anyio.CancelScope(shield=True):
            self._calls_tx.close()
            self._answers_tx.close()
            if not self._ended:
                with anyio.move_on_after(CLOSE_TIMEOUT):
                    await self._lanes_done.wait()
            self._ended = True
            self._stop_lanes()
            self._stop_streams()
            if self.connection_id is not None:
                await self._delete()
            if self._owns_cookies and self._cookies is not None:
                self._cookies.clear()
            self._inbox.close()

    # -- sending ---------------------------------------------------------------------------

    async def _run_lane(
        self, lane: anyio.abc.ObjectReceiveStream[tuple[bytes, Json]], scope: anyio.CancelScope
    ) -> None:
        with scope:
            async with lane:
                async for message, parsed in lane:
                    try:
                        await self._deliver(message, parsed)
                    except HttpTransportError as exc:
                        self._end(exc)
                    except Exception as exc:  # a bad URL, a stream error: not fatal to the app
                        self._end(HttpTransportError(self._redact(f"ACP HTTP failed: {exc!r}")))
        self._lanes_left -= 1
        if not self._lanes_left:
            self._lanes_done.set()

    async def _deliver(self, message: bytes, parsed: Json) -> None:
        if self.connection_id is None:
            await self._initialize(message, parsed)
            return
        session_id = self._session_of(parsed)
        if session_id is not None:
            if _method(parsed) in SESSION_REATTACH_METHODS:
                self._failed_sessions.pop(session_id, None)
            try:
                await self._open_session(session_id)
            except HttpStatusError as exc:  # the session is failed (409)
                await self._refuse(parsed, exc)
                return
        request_key = _id_key(parsed["id"]) if _is_request(parsed) else None
        if request_key is not None:
            self._in_flight[request_key] = (session_id, parsed["id"])
        headers = {CONNECTION_ID_HEADER: self.connection_id}
        if session_id is not None:
            headers[SESSION_ID_HEADER] = session_id
        answer = await self._post(message, headers)
        status = answer.status
        if answer.ok:
            return
        pending = self._in_flight.pop(request_key, None) if request_key is not None else None
        error = HttpStatusError("ACP POST failed", status, answer.reason, self._redact(answer.body))
        if session_id is not None and status == 409:
            await self._fail_session(session_id, error)
            if pending is not None:
                await self._answer_error(pending[1], error)
        elif status in FATAL_POST_STATUSES or request_key is None:
            raise HttpTransportError(str(error))
        elif pending is not None:
            await self._answer_error(pending[1], error)

    async def _initialize(self, message: bytes, parsed: Json) -> None:
        if not (_is_request(parsed) and parsed["method"] == "initialize"):
            what = "ACP HTTP stream first message must be initialize"
            if _is_request(parsed):
                await self._answer_error(parsed["id"], what)
            else:
                log.warning("%s: a message sent before it was dropped", what)
            return
        request_id = parsed["id"]
        try:
            answer = await self._post(message, {}, answer_limit=self._max_message_bytes)
        except _BodyTooLarge:
            what = f"ACP initialize response larger than {self._max_message_bytes} bytes"
            await self._answer_error(request_id, what)
            raise HttpTransportError(what) from None
        if not answer.ok:
            body = self._redact(answer.body)
            error = HttpStatusError("ACP initialize failed", answer.status, answer.reason, body)
            await self._answer_error(request_id, error)
            raise HttpTransportError(str(error))
        try:
            reply: Json = json.loads(answer.body)
        except ValueError:
            reply = None
        if not _is_response(reply) or _id_key(reply["id"]) != _id_key(request_id):
            what = "ACP initialize response was not the JSON-RPC answer to initialize"
            await self._answer_error(request_id, what)
            raise HttpTransportError(what)
        connection_id = answer.headers.get(CONNECTION_ID_HEADER)
        if connection_id is None:
            if "error" in reply:  # refused, by a server that keeps no connection for it
                await self._put(answer.body)
                return
            what = "ACP initialize response missing Acp-Connection-Id"
            await self._answer_error(request_id, what)
            raise HttpTransportError(what)
        self.connection_id = connection_id
        await self._put(answer.body)  # first: a stream failing at once comes after it
        self._tg.start_soon(self._read_stream, None, None)

    async def _post(
        self, message: bytes, headers: dict[str, str], *, answer_limit: int | None = None
    ) -> _Answer:
        """POST one message. A 2xx body is read up to ``answer_limit`` (beyond it:
        :class:`_BodyTooLarge`) or discarded (None); an error body is cut to 8 KiB."""
        request_headers = self._request_headers({"Content-Type": "application/json", **headers})
        try:
            async with self._http.stream(
                "POST", self.url, content=message, headers=request_headers
            ) as response:
                self._keep_cookies(response)
                ok = 200 <= response.status_code < 300
                if ok and answer_limit is not None:
                    body = await _read_body(response, answer_limit, truncate=False)
                else:
                    body = await _read_body(response, MAX_ERROR_BODY_BYTES, truncate=True)
                return _Answer(response.status_code, response.reason_phrase, body, response.headers)
        except httpx.HTTPError as exc:
            raise HttpTransportError(self._redact(f"ACP POST failed: {exc!r}")) from None

    def _session_of(self, parsed: Json) -> str | None:
        """The session an outgoing message belongs to (its ``Acp-Session-Id``)."""
        method = _get(parsed, "method")
        if isinstance(method, str):
            if method.startswith("$/"):
                return None
            session_id = _get(_get(parsed, "params"), "sessionId")
            return session_id if isinstance(session_id, str) else None
        key = _id_key(_get(parsed, "id"))
        return None if key is None else self._answer_sessions.pop(key, None)

    async def _refuse(self, parsed: Json, error: HttpStatusError) -> None:
        """A message for a failed session: a request is answered with the failure;
        notifications and answers have nowhere to go and are dropped."""
        if _is_request(parsed):
            await self._answer_error(parsed["id"], error)
        else:
            log.warning("dropped a message for a failed session: %s", error)

    # -- receiving -------------------------------------------------------------------------

    def _ensure_stream(self, session_id: str) -> _SessionStream | None:
        """The session's stream, its GET started if it was not open (None: failed)."""
        if session_id in self._failed_sessions or self._ended:
            return None
        stream = self._sessions.get(session_id)
        if stream is None:
            stream = self._sessions[session_id] = _SessionStream()
            self._tg.start_soon(self._read_stream, session_id, stream)
        return stream

    async def _open_session(self, session_id: str) -> None:
        """Return once the session's SSE GET has its response headers."""
        failed = self._failed_sessions.get(session_id)
        if failed is not None:
            raise failed
        stream = self._ensure_stream(session_id)
        if stream is None:
            raise self._failure or HttpTransportError("ACP HTTP stream is closed")
        await stream.ready.wait()
        if stream.error is not None:
            raise stream.error

    async def _read_stream(self, session_id: str | None, stream: _SessionStream | None) -> None:
        """Read one SSE stream to its end; then act on how it ended (outside its cancel
        scope, which failing the session cancels)."""
        scope = self._connection_scope if stream is None else stream.scope
        headers = {"Accept": "text/event-stream", CONNECTION_ID_HEADER: str(self.connection_id)}
        if session_id is not None:
            headers[SESSION_ID_HEADER] = session_id
        outcome: Exception | None = None  # None: the server ended the stream
        aborted = True
        with scope:
            try:
                await self._read_events(session_id, stream, headers)
            except (HttpStatusError, HttpTransportError) as exc:
                outcome = exc
            except Exception as exc:  # network errors, and any other: the stream is gone
                outcome = HttpTransportError(self._redact(f"ACP SSE stream failed: {exc!r}"))
            aborted = False
        if stream is not None:
            if session_id is not None and self._sessions.get(session_id) is stream:
                del self._sessions[session_id]
            if not stream.ready.is_set():
                closed = HttpTransportError("ACP session SSE stream closed before opening")
                stream.error = outcome or closed
                stream.ready.set()
        if aborted or self._ended:
            return
        if isinstance(outcome, HttpStatusError) and session_id is not None:  # 409
            await self._fail_session(session_id, outcome)
        elif isinstance(outcome, HttpTransportError):
            self._end(outcome)
        elif outcome is not None:
            self._end(HttpTransportError(str(outcome)))
        elif session_id is None:
            log.debug("the connection's SSE stream ended")
            self._end(None)
        else:
            await self._fail_requests(session_id, "ACP session SSE stream closed")

    async def _read_events(
        self, session_id: str | None, stream: _SessionStream | None, headers: dict[str, str]
    ) -> None:
        timeout = self._http.timeout
        no_read_timeout = httpx.Timeout(
            connect=timeout.connect, read=None, write=timeout.write, pool=timeout.pool
        )
        async with self._http.stream(
            "GET", self.url, headers=self._request_headers(headers), timeout=no_read_timeout
        ) as response:
            self._keep_cookies(response)
            if not 200 <= response.status_code < 300:
                body = await _read_body(response, MAX_ERROR_BODY_BYTES, truncate=True)
                error = HttpStatusError(
                    "ACP SSE connection failed",
                    response.status_code,
                    response.reason_phrase,
                    self._redact(body),
                )
                if session_id is not None and response.status_code == 409:
                    raise error
                raise HttpTransportError(str(error))
            if stream is not None:
                stream.ready.set()
            parser = SseParser(self._max_message_bytes)
            async for chunk in response.aiter_bytes():
                for item in parser.feed(chunk):
                    await self._on_event(item, session_id)
            for item in parser.finish():
                await self._on_event(item, session_id)

    async def _on_event(self, item: SseItem, stream_session: str | None) -> None:
        if isinstance(item, OversizedEvent):
            await self._put(item)
            return
        if is_plain_notification(item):
            await self._put(item)
            return
        quick = quick_route(item)
        if quick is not None:  # the usual layouts: routed without a parse
            if quick.id is not None:
                number: IdKey = ("number", quick.id)
                if quick.is_response:
                    self._in_flight.pop(number, None)
                elif quick.session_id is not None:
                    self._answer_sessions[number] = quick.session_id
            await self._put(item)
            return
        if not item.strip():
            return
        try:
            message: Json = json.loads(item)
        except ValueError:
            log.warning("skipping an SSE payload that is not JSON (%d bytes)", len(item))
            return
        if not _is_object(message):
            log.warning("skipping an SSE payload that is not a JSON object")
            return
        if _is_response(message):
            new_session = _get(_get(message, "result"), "sessionId")
            if isinstance(new_session, str):
                self._ensure_stream(new_session)
            key = _id_key(_get(message, "id"))
            if key is not None:
                self._in_flight.pop(key, None)
        elif _is_request(message):
            named = _get(_get(message, "params"), "sessionId")
            route = named if isinstance(named, str) else stream_session
            key = _id_key(_get(message, "id"))
            if route is not None and key is not None:
                self._answer_sessions[key] = route
        await self._put(item)

    # -- failures --------------------------------------------------------------------------

    async def _fail_session(self, session_id: str, error: HttpStatusError) -> None:
        self._failed_sessions[session_id] = error
        stream = self._sessions.pop(session_id, None)
        if stream is not None:
            if not stream.ready.is_set():  # a message waiting for it is refused, not fatal
                stream.error = error
                stream.ready.set()
            stream.scope.cancel()
        await self._fail_requests(session_id, error)

    async def _fail_requests(self, session_id: str, error: HttpStatusError | str) -> None:
        """Answer the session's requests in flight with ``error``: their answers were
        to come on a stream that is gone."""
        mine = [key for key, (session, _) in self._in_flight.items() if session == session_id]
        for key in mine:
            # another failure (a 409, a POST error) may have answered it meanwhile
            pending = self._in_flight.pop(key, None)
            if pending is not None:
                await self._answer_error(pending[1], error)

    async def _answer_error(self, request_id: Json, error: HttpStatusError | str) -> None:
        body: dict[str, Json] = {"code": -32603, "message": str(error)}
        if isinstance(error, HttpStatusError):
            body["data"] = error.error_data()
        answer = {"jsonrpc": "2.0", "id": request_id, "error": body}
        await self._put(json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode())

    async def _put(self, item: SseItem) -> None:
        await self._inbox.put(item)  # dropped once the transport ended

    def _end(self, failure: HttpTransportError | None) -> None:
        """The transport is done: stop sending and reading; :meth:`receive` returns what
        is queued, then raises ``failure`` (or ``EndOfStream``)."""
        if self._ended:
            return
        self._ended = True
        if failure is not None:
            log.warning("%s", failure)
        self._failure = failure
        self._stop_lanes()
        self._stop_streams()
        self._inbox.close()

    def _stop_lanes(self) -> None:
        for scope in self._lane_scopes:
            scope.cancel()

    def _stop_streams(self) -> None:
        self._connection_scope.cancel()
        for stream in self._sessions.values():
            stream.scope.cancel()

    async def _delete(self) -> None:
        headers = self._request_headers({CONNECTION_ID_HEADER: str(self.connection_id)})
        with anyio.move_on_after(CLOSE_TIMEOUT):
            try:
                response = await self._http.delete(self.url, headers=headers)
            except httpx.HTTPError as exc:
                log.debug("DELETE of the connection failed: %r", exc)
                return
            self._keep_cookies(response)
            if not 200 <= response.status_code < 300:
                log.debug("DELETE of the connection answered %d", response.status_code)

    # -- headers ---------------------------------------------------------------------------

    def _request_headers(self, transport_headers: Mapping[str, str]) -> httpx.Headers:
        """The caller's headers, the transport's over them, and the cookies."""
        headers = self._headers.copy()
        headers.update(transport_headers)
        if self._cookies is not None:
            cookie = self._cookies.cookie_header(headers.get("Cookie"))
            if cookie is not None:
                headers["Cookie"] = cookie
        return headers

    def _keep_cookies(self, response: httpx.Response) -> None:
        if self._cookies is not None:
            self._cookies.store(response.headers.get_list("set-cookie"))

    def _redact(self, text: str | bytes) -> str:
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text


class _BodyTooLarge(Exception):
    pass


@dataclass(frozen=True)
class _Answer:
    """What a POST got back."""

    status: int
    reason: str
    body: bytes
    headers: httpx.Headers

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


async def _read_body(response: httpx.Response, limit: int, *, truncate: bool) -> bytes:
    """At most ``limit`` bytes of the body; past it, cut (``truncate``) or refused."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        if len(body) + len(chunk) > limit:
            if not truncate:
                raise _BodyTooLarge
            body += chunk[: limit - len(body)]
            break
        body += chunk
    return bytes(body)


def _secrets(headers: Mapping[str, str]) -> list[str]:
    """The configured header values to keep out of messages (and their long words, the
    token of ``Bearer <token>``), longest first."""
    found = {value for value in headers.values() if len(value) >= 4}
    found |= {word for value in headers.values() for word in value.split() if len(word) >= 8}
    return sorted(found, key=len, reverse=True)


def _is_object(value: object) -> bool:
    return isinstance(value, dict)


def _get(value: object, key: str) -> object:
    """``value[key]`` when ``value`` is a JSON object, else None."""
    if isinstance(value, dict):
        return cast("dict[str, object]", value).get(key)
    return None


def _method(parsed: Json) -> object:
    return _get(parsed, "method")


def _is_request(parsed: Json) -> bool:
    return isinstance(_get(parsed, "method"), str) and "id" in parsed


def _is_response(parsed: Json) -> bool:
    return isinstance(parsed, dict) and "id" in parsed and "method" not in parsed


def _id_key(value: object) -> IdKey | None:
    """A JSON-RPC id as a key that keeps ``1`` and ``"1"`` apart (and ``1.0`` with ``1``,
    the same JSON number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if value is None:
        return ("null", None)
    return None


@asynccontextmanager
async def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: CookieStore | Literal["omit"] | None = None,
    max_message_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    http_client: httpx.AsyncClient | None = None,
) -> AsyncGenerator[HttpTransport, None]:
    """Yield a transport to the ACP agent at ``url`` over Streamable HTTP; leaving the
    block POSTs what is queued, stops the streams and DELETEs the connection.

    Nothing goes on the wire until the connection sends ``initialize``.

    * ``headers`` go on every request (``Authorization`` and the like); none of their
      values appears in an error message.
    * ``cookies``: by default the cookies the server sets are kept for this connection
      and dropped with it; pass a :class:`CookieStore` you keep to carry them (and the
      load balancer's affinity) to a reconnect, or ``"omit"`` to send none.
    * ``max_message_bytes`` bounds each incoming message (default 32 MiB, as TS).
    * ``http_client`` lends its TLS, proxy and timeout settings (its own cookie jar
      should be empty: this transport manages cookies). Without one, a client is made
      with no read timeout and no limit on connections: each open session holds one
      long-lived GET.
    """
    store: CookieStore | None = None
    if cookies is None:
        store = CookieStore()
    elif isinstance(cookies, CookieStore):
        store = cookies
    async with _client(http_client) as http, anyio.create_task_group() as tg:
        transport = HttpTransport(
            url,
            http,
            tg,
            headers=headers or {},
            cookies=store,
            owns_cookies=cookies is None,
            max_message_bytes=max_message_bytes,
        )
        try:
            yield transport
        finally:
            await transport.aclose()
            tg.cancel_scope.cancel()


@asynccontextmanager
async def _client(client: httpx.AsyncClient | None) -> AsyncGenerator[httpx.AsyncClient, None]:
    if client is not None:
        yield client
        return
    from http.cookiejar import CookieJar, DefaultCookiePolicy

    refuse_all = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    async with httpx.AsyncClient(
        timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=20),
        cookies=refuse_all,  # the transport's own store handles cookies (see CookieStore)
    ) as own:
        yield own
