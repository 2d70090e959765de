"""``AcpModel``'s fast paths give what pydantic's own methods give, for every option mix."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, ValidationError
from typing_extensions import TypeAliasType

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


def test_the_runtime_s_serialize_as_any_is_pydantic_s() -> None:
    """Generated models take ``SerializeAsAny`` from the runtime (``acp_runtime._model``), so
    an agent never imports ``pydantic.functional_serializers`` (issue 34); it must make the
    core schema pydantic's does, for a union of models and for a union of unions."""
    import pydantic
    from pydantic import TypeAdapter

    from acp_runtime.codegen_support import SerializeAsAny

    for union in (
        v1.TextContentBlock | v1.ImageContentBlock,
        # smart unions of simple classes (a lazy union's choices are functions per build)
        Annotated[
            v1.EmbeddedResourceResource | TypeAliasType("Pair", v1.HttpHeader | v1.EnvVariable),
            Field(union_mode="left_to_right"),
        ],
    ):
        ours = TypeAdapter(SerializeAsAny[union]).core_schema
        assert ours == TypeAdapter(pydantic.SerializeAsAny[union]).core_schema
        while ours["type"] == "definitions":
            ours = ours["schema"]
        assert ours["serialization"] == {"type": "any"}  # not a test of equal no-ops


def test_complete_classes_validate_through_their_own_validator() -> None:
    """No Python wrapper between ``model_validate`` and pydantic-core, and never a base's."""
    for model in (v1.SessionNotification, v1.TextContentBlock, v2.PromptRequest):
        model.model_rebuild()  # built here, whatever ran before (``defer_build``)
        assert model.__pydantic_complete__
        assert model.model_validate == model.__pydantic_validator__.validate_python
        assert model.model_validate_json == model.__pydantic_validator__.validate_json


FIRST_USES: dict[str, Any] = {
    "model_validate": lambda c: c.model_validate({"type": "text", "text": "hi"}),
    "model_validate_json": lambda c: c.model_validate_json('{"type":"text","text":"hi"}'),
    "constructor": lambda c: c(text="hi"),
    "validator": lambda c: c.__pydantic_validator__.validate_python({"type": "text", "text": ""}),
    "serializer": lambda c: c.__pydantic_serializer__.to_python,
    "core_schema": lambda c: c.__pydantic_core_schema__["type"],
    "json_schema": lambda c: c.model_json_schema(),
    "model_rebuild": lambda c: c.model_rebuild(),
    "lenient": lambda c: c.model_validate_lenient({"type": "text", "text": "hi"}),
}


@pytest.mark.parametrize("first_use", FIRST_USES.values(), ids=FIRST_USES.keys())
def test_a_class_gets_its_fast_path_whatever_builds_it_first(first_use: Any) -> None:
    """``defer_build``: a new class holds pydantic's placeholders (``MockValSer``), so
    until it is built it validates through pydantic's own classmethod, never a
    placeholder's method nor its base's validator; once built, through its own."""

    class Fresh(v1.TextContentBlock):
        pass

    assert not Fresh.__pydantic_complete__
    assert Fresh.model_validate.__func__ is BaseModel.model_validate.__func__  # type: ignore[attr-defined]
    assert Fresh.model_validate_json.__func__ is BaseModel.model_validate_json.__func__  # type: ignore[attr-defined]
    first_use(Fresh)
    assert Fresh.__pydantic_complete__
    assert Fresh.model_validate == Fresh.__pydantic_validator__.validate_python
    assert Fresh.model_validate_json == Fresh.__pydantic_validator__.validate_json
    assert type(Fresh.model_validate({"type": "text", "text": "hi"})) is Fresh
    assert v1.TextContentBlock.model_validate != Fresh.model_validate


def test_a_forced_rebuild_binds_the_new_validator() -> None:
    class Fresh(v1.TextContentBlock):
        pass

    Fresh.model_rebuild()
    old = Fresh.__pydantic_validator__
    assert Fresh.model_rebuild(force=True)
    assert Fresh.__pydantic_validator__ is not old
    assert Fresh.model_validate == Fresh.__pydantic_validator__.validate_python
    assert Fresh.model_validate_json == Fresh.__pydantic_validator__.validate_json


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


def test_a_built_model_is_the_parsed_one() -> None:
    """The constructor's own validator (unknown keywords refused) leaves what parsing
    leaves: equal models, no kept extras, the same fields set."""
    built = v1.TextContentBlock(text="hi")
    parsed = v1.TextContentBlock.model_validate({"type": "text", "text": "hi"})
    assert built == parsed
    assert built.__pydantic_extra__ == {} == parsed.__pydantic_extra__
    assert built.model_fields_set == parsed.model_fields_set == {"type", "text"}


def test_nested_values_given_as_dicts_validate_as_when_parsing() -> None:
    """Only the constructor's own keywords are checked: a nested dict is wire data."""
    chunk = v1.AgentMessageChunkSessionUpdate(
        content={"type": "text", "text": "a", "newField": 2}  # type: ignore[arg-type]
    )
    assert isinstance(chunk.content, v1.TextContentBlock)
    assert chunk.content.model_dump(mode="json", exclude_unset=True)["newField"] == 2


def test_a_subclass_with_a_model_validator_is_built_and_checked() -> None:
    """A schema the constructor does not rewrite still validates, and still refuses typos."""
    from pydantic import model_validator

    class Shouting(v1.TextContentBlock):
        @model_validator(mode="after")
        def shout(self) -> Shouting:
            self.text = self.text.upper()
            return self

    assert Shouting(text="hi").text == "HI"
    assert Shouting(text="hi").type == "text"
    with pytest.raises(TypeError, match=r"'txt' \(did you mean 'text'\?\)"):
        Shouting(txt="hi")  # type: ignore[call-arg]


def test_a_forced_rebuild_rebinds_validation_and_construction() -> None:
    """pydantic calls ``__pydantic_on_complete__`` only when a class first completes; a
    forced rebuild (here after a config change) must not leave the old validator bound."""

    class Note(v1.AcpModel):
        count: int

    assert Note(count=1).count == 1
    with pytest.raises(ValidationError):
        Note.model_validate({"count": "2"})  # strict
    Note.model_config["strict"] = False
    assert Note.model_rebuild(force=True)
    assert Note.model_validate({"count": "2"}).count == 2
    assert Note(count="3").count == 3  # type: ignore[arg-type]
    assert Note.model_validate == Note.__pydantic_validator__.validate_python
    with pytest.raises(TypeError, match="'cuont'"):
        Note(cuont=4)  # type: ignore[call-arg]
