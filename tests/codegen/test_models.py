"""Constructed (not parsed) models: what the runtime's encoder puts on the wire."""

from __future__ import annotations

from typing import Any

from acp_generated import v1, v2


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def test_tags_survive_exclude_unset_when_constructed() -> None:
    update = v1.SessionNotification(
        session_id="s",
        update=v1.AgentMessageChunkSessionUpdate(
            session_update="agent_message_chunk", content=v1.TextContentBlock(type="text", text="x")
        ),
    )
    assert _wire(update) == {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "x"},
        },
    }


def test_unset_optional_fields_and_defaults_stay_off_the_wire() -> None:
    init = v1.InitializeRequest(protocol_version=1)
    assert init.client_capabilities.fs.read_text_file is False  # schema default, usable in Python
    assert _wire(init) == {"protocolVersion": 1}


def test_explicit_null_is_kept_apart_from_absent() -> None:
    patch = v2.ToolCallUpdateSessionUpdate(
        session_update="tool_call_update", tool_call_id="t", title=None
    )
    assert _wire(patch) == {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": None}


def test_meta_field_is_underscore_meta_on_the_wire() -> None:
    cancel = v1.CancelNotification(session_id="s", meta={"vendor/trace": "1"})
    assert _wire(cancel) == {"sessionId": "s", "_meta": {"vendor/trace": "1"}}


def test_input_accepts_wire_and_python_names() -> None:
    by_alias = v1.PromptRequest.model_validate({"sessionId": "s", "prompt": []})
    by_name = v1.PromptRequest.model_validate({"session_id": "s", "prompt": []})
    assert by_alias == by_name


def test_integral_numbers_stay_integers() -> None:
    usage = v2.Cost.model_validate({"amount": 1, "currency": "USD"})
    assert _wire(usage) == {"amount": 1, "currency": "USD"}
    assert _wire(v2.Cost.model_validate({"amount": 1.25, "currency": "USD"}))["amount"] == 1.25
