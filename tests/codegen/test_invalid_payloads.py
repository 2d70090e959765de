"""Invalid payloads raise a ValidationError whose location names the offending field."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acp_generated import v1, v2
from acp_generated.v1 import unstable as v1u
from acp_generated.v2 import unstable as v2u


def _locations(tp: Any, payload: Any) -> list[tuple[str | int, ...]]:
    with pytest.raises(ValidationError) as info:
        TypeAdapter(tp).validate_python(payload)
    return [tuple(e["loc"]) for e in info.value.errors()]


def _names(locations: list[tuple[str | int, ...]]) -> set[str | int]:
    return {part for loc in locations for part in loc}


@pytest.mark.parametrize("pkg", [v1, v1u, v2, v2u], ids=["v1", "v1u", "v2", "v2u"])
def test_missing_required_field_is_named(pkg: Any) -> None:
    locs = _locations(pkg.PromptRequest, {"prompt": [{"type": "text", "text": "hi"}]})
    assert ("sessionId",) in locs


@pytest.mark.parametrize("pkg", [v1, v1u, v2, v2u], ids=["v1", "v1u", "v2", "v2u"])
def test_wrong_type_is_named(pkg: Any) -> None:
    locs = _locations(pkg.PromptRequest, {"sessionId": 7, "prompt": []})
    assert ("sessionId",) in locs


@pytest.mark.parametrize("pkg", [v1, v1u], ids=["v1", "v1u"])
def test_wrong_tag_in_closed_union_is_named(pkg: Any) -> None:
    payload = {"sessionId": "s", "update": {"sessionUpdate": "no_such_update"}}
    locs = _locations(pkg.SessionNotification, payload)
    assert any(loc[:1] == ("update",) for loc in locs)
    with pytest.raises(ValidationError, match="no_such_update"):
        pkg.SessionNotification.model_validate(payload)


def test_wrong_tag_value_for_content_block_is_named() -> None:
    payload = {"sessionId": "s", "prompt": [{"type": "video", "text": "x"}]}
    locs = _locations(v1.PromptRequest, payload)
    assert all(loc[:2] == ("prompt", 0) for loc in locs)
    with pytest.raises(ValidationError, match="'video'"):
        v1.PromptRequest.model_validate(payload)


@pytest.mark.parametrize("pkg", [v2, v2u], ids=["v2", "v2u"])
def test_known_tag_with_missing_field_names_that_field(pkg: Any) -> None:
    """Open union: the known variant's error names the missing field; the catch-all refuses."""
    payload = {
        "sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "messageId": "m"},
    }
    with pytest.raises(ValidationError) as info:
        pkg.UpdateSessionNotification.model_validate(payload)
    names = _names([tuple(e["loc"]) for e in info.value.errors()])
    assert "content" in names
    assert "did not match" in str(info.value)


def test_wrong_type_inside_nested_model_is_named() -> None:
    payload = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": "maybe"}}}
    locs = _locations(v1.InitializeRequest, payload)
    assert ("clientCapabilities", "fs", "readTextFile") in locs


def test_closed_enum_rejects_unknown_value_by_field() -> None:
    locs = _locations(v1.PromptResponse, {"stopReason": "bored"})
    assert ("stopReason",) in locs


def test_open_enum_accepts_extension_value() -> None:
    assert v2.PromptResponse.model_validate({"messageId": "m"}).message_id == "m"
    outcome = TypeAdapter(v2.RequestPermissionResponse).validate_python(
        {"outcome": {"outcome": "_vendor.example/deferred"}}
    )
    assert type(outcome.outcome).__name__.startswith("Other")


def test_request_id_types() -> None:
    adapter = TypeAdapter(v1.RequestId)
    assert adapter.validate_python(5) == 5
    assert adapter.validate_python("5") == "5"
    with pytest.raises(ValidationError):
        adapter.validate_python(5.5)
    assert v1.CancelRequestNotification(request_id=5).model_dump(
        by_alias=True, exclude_unset=True
    ) == {"requestId": 5}
