"""Issue #15 traps 3 and 4: building a model in code is short and typo-proof.

Trap 3: a union variant's constant tag had to be typed by hand
(``TextContentBlock(type="text", ...)``). Trap 4: a misspelt keyword
(``PromptResponse(stop_reasn=...)``) was kept as an unknown field and sent on the wire.
Parsing from the wire must stay as it was: the tag required, unknown fields kept.
"""

from __future__ import annotations

import anyio
import pytest
from pydantic import ValidationError

from acp_generated import v1, v2
from acp_generated.v1 import (
    AgentMessageChunkSessionUpdate,
    PromptResponse,
    SessionNotification,
    TextContentBlock,
    ToolCallSessionUpdate,
)
from acp_runtime import ConnectionBuilder
from acp_runtime.testing import wire_connection


def wire(model: v1.AcpModel) -> object:
    """What the runtime puts on the wire (it dumps with ``exclude_unset``)."""
    return model.model_dump(mode="json", exclude_unset=True)


def test_constant_tag_is_filled_in_and_sent() -> None:
    """Trap 3: the tag defaults to its constant and counts as set, so it reaches the wire."""
    assert wire(TextContentBlock(text="hi")) == {"type": "text", "text": "hi"}
    chunk = AgentMessageChunkSessionUpdate(content=TextContentBlock(text="hi"))
    assert wire(chunk) == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi"},
    }
    call = ToolCallSessionUpdate(tool_call_id="t1", title="Read")
    assert wire(call)["sessionUpdate"] == "tool_call"  # type: ignore[index]


def test_constant_tag_given_by_name_or_alias_is_kept_and_checked() -> None:
    """Trap 3: an explicit tag still works (by name or wire name); a wrong one is refused."""
    assert TextContentBlock(type="text", text="a").type == "text"
    by_alias = AgentMessageChunkSessionUpdate(
        sessionUpdate="agent_message_chunk", content=TextContentBlock(text="a")
    )
    assert by_alias.session_update == "agent_message_chunk"
    with pytest.raises(ValidationError):
        TextContentBlock(type="image", text="a")  # type: ignore[arg-type]


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
def test_every_generated_tag_is_filled_in(models: object) -> None:
    """Trap 3, all packages: every model with a one-value ``Literal`` field builds without it."""
    from typing import Literal, get_args, get_origin

    checked = 0
    for name in dir(models):
        cls = getattr(models, name)
        if not (isinstance(cls, type) and issubclass(cls, v1.AcpModel)) or cls is v1.AcpModel:
            continue
        tags = {
            field_name: get_args(field.annotation)[0]
            for field_name, field in cls.model_fields.items()
            if field.is_required()
            and get_origin(field.annotation) is Literal
            and len(get_args(field.annotation)) == 1
        }
        if not tags:
            continue
        required = [n for n, f in cls.model_fields.items() if f.is_required() and n not in tags]
        if required:
            continue  # needs real values; the hand-picked cases above cover those shapes
        built = cls()
        for field_name, value in tags.items():
            assert getattr(built, field_name) == value
            assert field_name in built.model_fields_set
        checked += 1
    assert checked > 0


def test_parsing_still_requires_the_tag() -> None:
    """Trap 3 leaves the wire strict: a variant without its tag is not accepted."""
    with pytest.raises(ValidationError):
        TextContentBlock.model_validate({"text": "hi"})
    with pytest.raises(ValidationError):
        SessionNotification.model_validate(
            {"sessionId": "s", "update": {"content": {"type": "text", "text": "hi"}}}
        )


def test_unknown_keyword_is_refused_with_the_closest_name() -> None:
    """Trap 4: a typo is a ``TypeError`` that names the field meant, not an extra field."""
    with pytest.raises(TypeError, match=r"'stop_reasn' \(did you mean 'stop_reason'\?\)"):
        PromptResponse(stop_reasn="end_turn")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'nonsense'"):
        TextContentBlock(text="a", nonsense=1)  # type: ignore[call-arg]


def test_wire_names_are_accepted_keywords() -> None:
    """Trap 4: camelCase wire names are fields too (the config validates by alias)."""
    assert PromptResponse(stopReason="end_turn").stop_reason == "end_turn"  # type: ignore[call-arg]


def test_parsing_keeps_unknown_fields_for_relaying() -> None:
    """Trap 4 leaves the wire lossless: unknown fields survive ``model_validate`` and dump."""
    data = {"stopReason": "end_turn", "fromTheFuture": {"x": 1}}
    parsed = PromptResponse.model_validate(data)
    assert parsed.model_dump(mode="json", exclude_unset=True) == data
    nested = SessionNotification.model_validate(
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "a", "newField": 2},
            },
        }
    )
    assert wire(nested)["update"]["content"]["newField"] == 2  # type: ignore[index]


@pytest.mark.anyio
async def test_built_notification_crosses_a_connection() -> None:
    """Traps 3/4 end to end, both backends: a notification built without tags is parsed
    by the peer as the variant it names."""
    notification = SessionNotification(
        session_id="s1", update=AgentMessageChunkSessionUpdate(content=TextContentBlock(text="hi"))
    )
    async with wire_connection(ConnectionBuilder()) as (cx, peer):
        await cx.send_notification(notification)
        with anyio.fail_after(5):
            message = await peer.receive()
    parsed = SessionNotification.model_validate(message["params"])
    assert isinstance(parsed.update, AgentMessageChunkSessionUpdate)
    assert isinstance(parsed.update.content, TextContentBlock)
    assert parsed.update.content.text == "hi"


def test_a_variant_fills_its_tag_even_after_its_untagged_base_was_built() -> None:
    """The tags are worked out per class: the base's (none) are not inherited."""
    from acp_generated.v1 import ContentChunk

    ContentChunk(content=TextContentBlock(text="base first"))
    chunk = AgentMessageChunkSessionUpdate(content=TextContentBlock(text="then the variant"))
    assert wire(chunk)["sessionUpdate"] == "agent_message_chunk"  # type: ignore[index]


def test_a_typo_is_reported_before_the_missing_field_it_caused() -> None:
    """``stop_reasn`` leaves ``stop_reason`` missing: the TypeError names the typo."""
    with pytest.raises(TypeError, match="stop_reasn"):
        PromptResponse(stop_reasn="end_turn")  # type: ignore[call-arg]
