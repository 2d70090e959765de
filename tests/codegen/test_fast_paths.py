"""``AcpModel``'s fast paths give what pydantic's own methods give, for every option mix."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from acp_generated import v1, v2

UPDATE = {
    "sessionId": "s1",
    "update": {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "hi", "futureField": 1},
    },
}

DUMP_OPTIONS: list[dict[str, Any]] = [
    {},
    {"mode": "json"},
    {"mode": "json", "by_alias": True, "exclude_unset": True},
    {"by_alias": False},
    {"by_alias": False, "exclude_unset": True},
    {"exclude_none": True},
    {"exclude": {"session_id"}},
    {"mode": "json", "round_trip": True, "exclude_defaults": True},
]


@pytest.mark.parametrize("module", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize("options", DUMP_OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_dump_matches_pydantic(module: Any, options: dict[str, Any]) -> None:
    model = module.SessionNotification if module is v1 else module.UpdateSessionNotification
    parsed = model.model_validate(UPDATE)
    assert parsed.model_dump(**options) == BaseModel.model_dump(parsed, **options)
    json_options = {k: v for k, v in options.items() if k != "mode"}
    assert parsed.model_dump_json(**json_options) == BaseModel.model_dump_json(
        parsed, **json_options
    )


def test_snake_case_dump_when_by_alias_is_false() -> None:
    parsed = v1.SessionNotification.model_validate(UPDATE)
    assert "session_id" in parsed.model_dump(by_alias=False)
    assert "sessionId" in parsed.model_dump()


def test_validate_options_take_pydantic_path() -> None:
    raw = json.dumps(UPDATE)
    assert v1.SessionNotification.model_validate_json(raw) == v1.SessionNotification.model_validate(
        UPDATE
    )
    block = {"type": "text", "text": b"hi"}  # lax mode turns bytes into str, strict does not
    with pytest.raises(ValidationError, match="string_type"):
        v1.TextContentBlock.model_validate(block)  # the models are strict
    assert v1.TextContentBlock.model_validate(block, strict=False).text == "hi"
    with pytest.raises(ValidationError, match="extra_forbidden"):
        v1.SessionNotification.model_validate({**UPDATE, "x": 1}, extra="forbid")
    with pytest.raises(ValidationError, match="extra_forbidden"):
        v1.SessionNotification.model_validate_json(json.dumps({**UPDATE, "x": 1}), extra="forbid")
    parsed = v1.PromptRequest.model_validate({"sessionId": "s", "prompt": []}, by_alias=True)
    assert parsed.session_id == "s"


def test_union_members_dump_through_their_own_class() -> None:
    """``SerializeAsAny`` on unions: each variant keeps its own fields and unknown fields."""
    parsed = v2.UpdateSessionNotification.model_validate(
        {"sessionId": "s", "update": {"sessionUpdate": "_x.example/ping", "seq": 3}}
    )
    assert type(parsed.update).__name__ == "OtherSessionUpdate"
    wire = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert wire == {"sessionId": "s", "update": {"sessionUpdate": "_x.example/ping", "seq": 3}}
    assert json.loads(parsed.model_dump_json(by_alias=True, exclude_unset=True)) == wire


def test_complete_classes_validate_through_their_own_validator() -> None:
    """No Python wrapper between ``model_validate`` and pydantic-core, and never a base's."""
    for model in (v1.SessionNotification, v1.TextContentBlock, v2.PromptRequest):
        assert model.model_validate == model.__pydantic_validator__.validate_python
        assert model.model_validate_json == model.__pydantic_validator__.validate_json


def test_an_incomplete_subclass_validates_as_itself_once_rebuilt() -> None:
    class Later(v1.TextContentBlock):
        extra_block: Missing  # type: ignore[name-defined]  # (defined below)

    with pytest.raises(Exception, match="not fully defined"):
        Later.model_validate({"type": "text", "text": "hi", "extraBlock": {}})

    class Missing(BaseModel):
        n: int

    Later.model_rebuild(_types_namespace={"Missing": Missing})
    parsed = Later.model_validate({"type": "text", "text": "hi", "extra_block": {"n": 1}})
    assert type(parsed) is Later and parsed.extra_block.n == 1
    raw = '{"type":"text","text":"x","extra_block":{"n":2}}'
    assert type(Later.model_validate_json(raw)) is Later
    assert type(v1.TextContentBlock.model_validate({"type": "text", "text": "hi"})) is (
        v1.TextContentBlock
    )
