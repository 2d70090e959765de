"""Typed params and results go out as JSON text written by pydantic-core
(:class:`~acp_runtime._methods.EncodedJson`), spliced into the message as they are.
The wire must say exactly what the dict path said; envelopes get the value."""

from __future__ import annotations

import json
import math

import anyio
import pytest

from acp_generated.v1 import (
    AgentHandler,
    AgentMessageChunkSessionUpdate,
    Cost,
    PromptRequest,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
    UsageUpdateSessionUpdate,
)
from acp_runtime import ConnectionBuilder, RequestId, Responder
from acp_runtime._jsonrpc import (
    encode,
    encode_notification,
    encode_request,
    encode_result,
    notification_message,
    request_message,
    result_message,
)
from acp_runtime._methods import EncodedJson
from acp_runtime._peer import on_wire
from acp_runtime.proxies import COUNTERPART, SUCCESSOR
from acp_runtime.testing import request, wire_connection

pytestmark = pytest.mark.anyio

PROMPT = PromptRequest(session_id="s1", prompt=[TextContentBlock(type="text", text="héllo")])


def _chunk(text: str) -> SessionNotification:
    return SessionNotification(
        session_id="s1",
        update=AgentMessageChunkSessionUpdate(
            session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
        ),
    )


@pytest.mark.parametrize("request_id", [7, "x\u2028é", None, "a\ud800"])
@pytest.mark.parametrize("method", ["session/update", "_x.example/é", "m\ud800"])
def test_builders_write_what_encode_writes(request_id: RequestId, method: str) -> None:
    """Field by field, with the payload spliced in as it is: the bytes ``encode`` writes.
    A lone surrogate is escaped in its own field only (``encode`` escapes the whole
    message then), so there the JSON values are compared."""
    value = {"a": [1, "é", None]}
    payload = EncodedJson(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    pairs = [
        (encode_request(request_id, method, payload), request_message(request_id, method, value)),
        (encode_notification(method, payload), notification_message(method, value)),
        (encode_result(request_id, payload), result_message(request_id, value)),
        (encode_request(request_id, method, value), request_message(request_id, method, value)),
    ]
    surrogate = "\ud800" in f"{request_id}{method}"
    for written, message in pairs:
        assert json.loads(written) == message
        if not surrogate:
            assert written == encode(message)


def test_an_envelope_nests_the_value_of_encoded_json() -> None:
    payload = EncodedJson(b'{"x":1}')
    assert on_wire(COUNTERPART, "session/prompt", payload) == ("session/prompt", payload)
    method, params = on_wire(SUCCESSOR, "session/prompt", payload)
    assert method == "_proxy/successor"
    assert params == {"method": "session/prompt", "params": {"x": 1}}


async def test_typed_request_and_notification_say_what_model_dump_says() -> None:
    async with wire_connection(ConnectionBuilder(role="client")) as (cx, peer):
        sent = cx.send_request(PROMPT)
        wire = await peer.receive()
        assert wire == request(
            wire["id"], "session/prompt", PROMPT.model_dump(mode="json", exclude_unset=True)
        )
        await peer.send({"jsonrpc": "2.0", "id": wire["id"], "result": {"stopReason": "end_turn"}})
        with anyio.fail_after(5):
            assert await sent == PromptResponse(stop_reason="end_turn")

    async with wire_connection(ConnectionBuilder(role="agent")) as (cx, peer):
        cx.send_notification(_chunk("ok"))
        assert (await peer.receive())["params"] == _chunk("ok").model_dump(
            mode="json", exclude_unset=True
        )


async def test_typed_result_says_what_model_dump_says() -> None:
    class Agent(AgentHandler):
        async def prompt(
            self, params: PromptRequest, responder: Responder[PromptResponse]
        ) -> PromptResponse:
            return PromptResponse(stop_reason="end_turn", meta={"n": 1.5})

    builder = ConnectionBuilder(role="agent")
    Agent().attach(builder)
    async with wire_connection(builder) as (_cx, peer):
        await peer.send(
            request(3, "session/prompt", PROMPT.model_dump(mode="json", exclude_unset=True))
        )
        answer = await peer.receive()
    assert answer == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"stopReason": "end_turn", "_meta": {"n": 1.5}},
    }


async def test_text_that_is_not_unicode_still_goes_out_ascii_escaped() -> None:
    """pydantic-core cannot write a lone surrogate; the dict path sends it escaped."""
    async with wire_connection(ConnectionBuilder(role="agent")) as (cx, peer):
        cx.send_notification(_chunk("a\ud800b"))
        received = await peer.receive()
    assert received["params"]["update"]["content"]["text"] == "a\ud800b"


async def test_a_non_finite_number_in_typed_params_goes_out_as_null() -> None:
    """As ``model_dump_json`` (and the TypeScript SDK's ``JSON.stringify``) write it."""
    update = UsageUpdateSessionUpdate(
        session_update="usage_update", used=1, size=2, cost=Cost(amount=math.inf, currency="USD")
    )
    async with wire_connection(ConnectionBuilder(role="agent")) as (cx, peer):
        cx.send_notification(SessionNotification(session_id="s1", update=update))
        received = await peer.receive()
    assert received["params"]["update"]["cost"] == {"amount": None, "currency": "USD"}
    assert json.dumps(received)  # valid JSON either way
