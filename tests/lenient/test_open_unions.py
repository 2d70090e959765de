"""Open unions under lenient parsing: a custom (``_``-prefixed) variant keeps its payload
and relays byte for byte; a known tag with a malformed payload still fails its variant,
and is never taken for a custom one (the catch-all's ``unknown_tag`` guard)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from acp_generated import v2
from acp_runtime import Connection, ConnectionBuilder
from acp_runtime._lenient import Salvage
from acp_runtime._methods import EncodedJson
from acp_runtime.testing import notification, wire_connection

CUSTOM_UPDATE = (
    b'{"sessionId":"sess_1","update":{"sessionUpdate":"_acme.dev/progress",'
    b'"percent":40,"stages":[{"name":"fetch","done":true}],"_meta":{"trace":"t1"}}}'
)
CUSTOM_BLOCK = b'{"type":"_acme.dev/sketch","strokes":[[0,1],[2,3]],"caption":null}'


def test_a_custom_session_update_relays_byte_for_byte_through_the_codec() -> None:
    codec = v2.SESSION_UPDATE.params
    parsed = codec.load(json.loads(CUSTOM_UPDATE))
    assert type(parsed.update).__name__ == "OtherSessionUpdate"
    assert parsed.salvaged == ()
    encoded = codec.encode(parsed)
    assert isinstance(encoded, EncodedJson) and encoded.text == CUSTOM_UPDATE


def test_a_custom_content_block_inside_a_known_update_keeps_its_payload() -> None:
    raw = (
        b'{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk",'
        b'"messageId":"m1","content":' + CUSTOM_BLOCK + b"}}"
    )
    parsed = v2.UpdateSessionNotification.model_validate_json_lenient(raw)
    assert type(parsed.update.content).__name__ == "OtherContentBlock"  # type: ignore[union-attr]
    assert CUSTOM_BLOCK in parsed.model_dump_json(exclude_unset=True).encode()


def test_a_known_tag_with_a_malformed_payload_fails_its_variant_even_leniently() -> None:
    params = {"sessionId": "s", "prompt": [{"type": "text", "text": 5}]}
    with pytest.raises(ValidationError) as caught:
        v2.PromptRequest.model_validate_lenient(params)
    locs = [e["loc"] for e in caught.value.errors()]
    assert ("prompt", 0, "OtherContentBlock", "type") in locs  # the guard refused it
    assert any(loc[-2:] == ("text", "text") for loc in locs)  # and the variant says why


def test_a_salvage_inside_a_known_variant_keeps_the_known_variant() -> None:
    """The known variant's errors are all caught inside it, so it wins over the guarded
    catch-all, whose only error is the guard's."""
    params = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi", "annotations": 3}]}
    parsed = v2.PromptRequest.model_validate_lenient(params)
    assert type(parsed.prompt[0]).__name__ == "TextContentBlock"
    assert parsed.salvaged == (Salvage(("prompt", 0, "annotations"), "model_type", "default"),)


def test_a_malformed_known_item_in_a_skip_list_is_dropped_not_kept_as_custom() -> None:
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "content": [
            {"type": "content", "content": {"type": "text", "text": 5}},
            {"type": "_acme.dev/chart", "points": [1, 2]},
        ],
    }
    parsed = v2.UpdateSessionNotification.model_validate_lenient(
        {"sessionId": "s", "update": update}
    )
    content = parsed.model_dump(mode="json", exclude_unset=True)["update"]["content"]
    assert content == [{"type": "_acme.dev/chart", "points": [1, 2]}]
    assert [s.action for s in parsed.salvaged] == ["dropped"]
    assert parsed.salvaged[0].path == ("update", "content", 0)


@pytest.mark.anyio
async def test_a_custom_update_is_delivered_and_relayed_unchanged_over_a_connection() -> None:
    got: list[Any] = []
    arrived = anyio.Event()

    async def on_update(params: v2.UpdateSessionNotification, cx: Connection) -> None:
        got.append(params)
        cx.send_notification(params)  # relay it back, as a proxy would
        arrived.set()

    builder = ConnectionBuilder().on_notification(v2.SESSION_UPDATE, on_update)
    async with wire_connection(builder) as (_cx, peer):
        envelope = b'{"jsonrpc":"2.0","method":"session/update","params":' + CUSTOM_UPDATE + b"}"
        await peer.send(envelope)
        with anyio.fail_after(5):
            await arrived.wait()
        relayed = await peer.receive()
    assert relayed == notification("session/update", json.loads(CUSTOM_UPDATE))
    assert got[0].salvaged == ()
