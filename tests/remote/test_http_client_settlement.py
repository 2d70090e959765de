"""Whatever the server does to each request (answers it, asks the client something first,
fails its POST with 500, 409 or 401, ends its session's stream, or never answers), every
request the connection sent settles exactly once by the time the block ends, on both
backends."""

from __future__ import annotations

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acp_runtime import ConnectionBuilder, JsonValue, RequestError, SentRequest
from acp_runtime.remote import connect_http

from .fake_http_server import FakeServer, Seen

OUTCOMES = ["answer", "ask", "500", "409", "401", "eof", "silent"]
URL = "http://agent.test/acp"


def answered(plan: list[tuple[str, str]]) -> list[bool]:
    """Which prompts must get their answer: not after a 401 (the transport fails), nor with
    a 409 in their session (which fails its requests in flight too), nor after a stream
    end there (the stream that carries the answer may be the one that ended)."""
    fatal = any(outcome == "401" for _, outcome in plan)
    must: list[bool] = []
    for i, (session, outcome) in enumerate(plan):
        everywhere = [o for s, o in plan if s == session]
        before = [o for s, o in plan[:i] if s == session]
        # an "ask" is answered only after the client's answer: a later end can beat it
        ended = "eof" in (everywhere if outcome == "ask" else before)
        must.append(outcome in ("answer", "ask") and not (fatal or "409" in everywhere or ended))
    return must


async def run(plan: list[tuple[str, str]]) -> list[object]:
    """Send one prompt per (session, outcome); what each settled with."""
    server = FakeServer()

    asked: dict[str, object] = {}  # the id of our question -> the prompt it holds

    async def script(server: FakeServer, seen: Seen) -> httpx.Response | None:
        if "method" not in seen.body:  # the client's answer to a question: the prompt ends
            assert seen.session is not None  # the answer names the question's session
            prompt_id = asked.pop(seen.body["id"])
            await server.push(seen.session, {"jsonrpc": "2.0", "id": prompt_id, "result": {}})
            return None
        if seen.body.get("method") != "session/prompt":
            return None
        session, outcome = seen.session, seen.body["params"]["prompt"]
        if outcome == "ask":  # the client has no handler for it: it answers -32601
            question = f"q{seen.body['id']}"
            asked[question] = seen.body["id"]
            params = {"sessionId": session}
            await server.push(
                session, {"jsonrpc": "2.0", "id": question, "method": "x/ask", "params": params}
            )
        elif outcome == "answer":
            await server.push(session, {"jsonrpc": "2.0", "id": seen.body["id"], "result": {}})
        elif outcome == "eof":
            server.end(session)
        elif outcome in ("500", "409", "401"):
            return httpx.Response(int(outcome), text=outcome)
        return None

    async def outcome_of(request: SentRequest[JsonValue]) -> object:
        with anyio.fail_after(5):
            try:
                return await request
            except RequestError as error:
                return error.code

    server.on_post = script
    results: dict[int, object] = {}
    async with server.client() as http, connect_http(URL, http_client=http) as transport:
        async with ConnectionBuilder(role="client").connect(transport) as cx:
            await cx.send_raw_request("initialize", {"protocolVersion": 1})
            sent = [
                cx.send_raw_request("session/prompt", {"sessionId": session, "prompt": outcome})
                for session, outcome in plan
            ]
            for i, must in enumerate(answered(plan)):
                if must:  # before the block ends, or closing would settle it first
                    results[i] = await outcome_of(sent[i])
    for i, request in enumerate(sent):  # the block has ended: the rest are settled too
        if i not in results:
            results[i] = await outcome_of(request)
    return [results[i] for i in range(len(plan))]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.sampled_from(["s1", "s2"]), st.sampled_from(OUTCOMES)), max_size=8))
@example(plan=[("s1", "500"), ("s1", "silent"), ("s1", "eof"), ("s1", "409")])  # found: a race
def test_every_request_settles_whatever_the_server_does(
    backend: str, plan: list[tuple[str, str]]
) -> None:
    results = anyio.run(run, plan, backend=backend)
    assert len(results) == len(plan)
    fatal = any(outcome == "401" for _, outcome in plan)
    for (_, outcome), result, must in zip(plan, results, answered(plan), strict=True):
        if outcome == "500" and not fatal:
            assert result == -32603
        if must:
            assert result == {}
