"""Fuzzing the HTTP server's headers, methods and bodies: every answer is one of the
documented statuses, and the server, and a connection opened before, keep working.

The server runs on the test's anyio backend in a portal thread, so hypothesis drives it
synchronously with one server for all examples."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio.from_thread
import httpx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from acp_runtime.remote import StreamableHttpApp, http_app

from .http_agent import LoadingEchoAgent
from .http_raw import INITIALIZE, new_session, prompt
from .hypercorn_server import serving

DOCUMENTED = {200, 202, 400, 404, 405, 406, 409, 413, 415, 426}


class Server:
    def __init__(self, app: StreamableHttpApp, url: str, canary: str) -> None:
        self.app = app
        self.url = url
        self.canary = canary
        self.statuses: set[int] = set()
        # a fresh TCP connection per request: an answer given before the body was read
        # (413, 415, a GET with a body) lets the server close it, as HTTP/1.1 allows
        self.http = httpx.Client(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))


@pytest.fixture
def server(anyio_backend: str) -> Iterator[Server]:
    # The canary must outlive the fuzz: with a 5 s idle timeout a loaded CI run closed it
    # ("closing ACP HTTP connection ...: idle" in the log), and no 202 was reached. The
    # idle timeout has its own tests (test_http_limits.py, test_network_safety.py).
    app = http_app(LoadingEchoAgent, max_message_bytes=2048, idle_timeout=120, keep_alive=0.05)
    with anyio.from_thread.start_blocking_portal(anyio_backend) as portal:
        with portal.wrap_async_context_manager(serving(app)) as port:
            url = f"http://127.0.0.1:{port}/acp"
            with httpx.Client(timeout=10) as http:
                canary = http.post(url, json=INITIALIZE).headers["acp-connection-id"]
            found = Server(app, url, canary)
            try:
                yield found
            finally:
                found.http.close()


def json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=8,
    )


def messages() -> st.SearchStrategy[Any]:
    ids = st.none() | st.integers() | st.text(max_size=10) | st.just("x" * 1100)
    methods = st.sampled_from(
        ["initialize", "session/new", "session/prompt", "session/load", "session/cancel", "x/y"]
    ) | st.text(max_size=10)
    params = st.fixed_dictionaries(
        {}, optional={"sessionId": st.text(max_size=6), "cwd": st.just("/")}
    )
    return st.fixed_dictionaries(
        {"jsonrpc": st.sampled_from(["2.0", "1.0"])},
        optional={
            "id": ids,
            "method": methods,
            "params": params | json_values(),
            "result": json_values(),
        },
    )


WELL_FORMED = [
    INITIALIZE,
    new_session(5),
    prompt(6, "sess-1", "hi"),
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess-1"}},
    {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}},
]


def bodies() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.sampled_from(WELL_FORMED).map(lambda v: json.dumps(v).encode()),
        messages().map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=64),
        json_values().map(lambda v: json.dumps(v).encode()),
        st.just(b"x" * 3000),
    )


HEADER_VALUES = {
    "content-type": st.sampled_from(
        ["application/json"] * 4
        + ["application/JSON; charset=utf-8", "text/plain", "", "application/jsonx"]
    ),
    "accept": st.sampled_from(
        ["text/event-stream"] * 3 + ["*/*", "application/json", "TEXT/EVENT-STREAM"]
    ),
    "acp-connection-id": st.sampled_from(["CANARY"] * 4 + ["", "nope", "x" * 2000]),
    "acp-session-id": st.sampled_from(["sess-1", "", "sess-zz", "y" * 1100]),
    "upgrade": st.sampled_from(["websocket", "foo"]),  # h2c: hypercorn answers 101 itself
}


# A fixed seed, not only derandomize: pytest-randomly hands hypothesis a seed of its own, and
# with some of them the 200 examples never reached a 200 (the canary test asserts every
# documented status was reached).
@seed(20261206)
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(["GET", "POST", "POST", "POST", "DELETE", "PUT", "OPTIONS", "HEAD"]),
    headers=st.fixed_dictionaries({}, optional=HEADER_VALUES),
    body=bodies(),
)
def test_every_answer_is_documented_and_nothing_breaks(
    server: Server, method: str, headers: dict[str, str], body: bytes
) -> None:
    if headers.get("acp-connection-id") == "CANARY":
        headers["acp-connection-id"] = server.canary
        if method == "DELETE":
            method = "PUT"  # the canary must stay
    with server.http.stream(method, server.url, headers=headers, content=body) as answer:
        status = answer.status_code
        if status != 200 or "text/event-stream" not in answer.headers.get("content-type", ""):
            answer.read()
    assert status in DOCUMENTED, (status, answer.headers)
    server.statuses.add(status)
    if answer.headers.get("acp-connection-id") and method == "POST":
        server.http.delete(
            server.url, headers={"acp-connection-id": answer.headers["acp-connection-id"]}
        )


def test_after_the_fuzz_a_fresh_and_the_canary_connection_still_work(server: Server) -> None:
    test_every_answer_is_documented_and_nothing_breaks(server)  # type: ignore[call-arg]
    assert {200, 202, 400, 404, 405, 406, 413, 415, 426} <= server.statuses  # all reached
    http = server.http
    fresh = http.post(server.url, json=INITIALIZE).headers["acp-connection-id"]
    for cid in (server.canary, fresh):
        h = {"acp-connection-id": cid}
        with http.stream("GET", server.url, headers={**h, "accept": "text/event-stream"}) as sse:
            assert sse.status_code == 200
            assert http.post(server.url, json=new_session(77), headers=h).status_code == 202
            frames = sse.iter_raw()
            buffer = b""
            while b'"id":77' not in buffer:
                buffer += next(frames)
        assert b'"result":{"sessionId":"sess-' in buffer
        sid = json.loads(buffer.split(b'"id":77,"result":')[1].split(b"}")[0] + b"}")["sessionId"]
        assert http.post(server.url, json=prompt(78, sid, "hi"), headers=h).status_code == 202
