"""The three ``x-deserialize-*`` rules, where they stop, and what a salvage leaves behind."""

from __future__ import annotations

import importlib
import json
import logging
from typing import Any

import pytest
from pydantic import ValidationError

from acp_generated import v1, v2
from acp_generated.v1 import unstable as v1u
from acp_generated.v2 import unstable as v2u
from acp_runtime._lenient import Lenient, Salvage, salvaged
from acp_runtime.codegen_support import DefaultOnError, SkipInvalidItems

SESSION = "sess_1"


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": SESSION, "update": update}


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", exclude_unset=True)


# -- default-on-error -------------------------------------------------------------------


def test_an_invalid_optional_value_leaves_the_field_absent_not_null() -> None:
    """In a patch type ``null`` means "clear": a salvaged field must not be dumped as one."""
    parsed = v1.SessionNotification.model_validate_lenient(
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": 7})
    )
    assert _wire(parsed)["update"] == {"sessionUpdate": "tool_call_update", "toolCallId": "c"}
    assert parsed.salvaged == (Salvage(("update", "status"), "literal_error", "default"),)


def test_an_invalid_required_list_takes_the_empty_list_but_a_missing_one_stays_an_error() -> None:
    parsed = v1.SessionNotification.model_validate_lenient(
        _update({"sessionUpdate": "plan", "entries": "not a list"})
    )
    assert _wire(parsed)["update"] == {"sessionUpdate": "plan", "entries": []}
    assert parsed.salvaged == (Salvage(("update", "entries"), "list_type", "default"),)
    with pytest.raises(ValidationError, match="entries"):
        v1.SessionNotification.model_validate_lenient(_update({"sessionUpdate": "plan"}))


def test_the_innermost_marked_point_catches() -> None:
    """A bad ``_meta`` inside a plan entry costs the ``_meta``, not the entry."""
    entry = {"content": "a", "priority": "high", "status": "pending", "_meta": "not an object"}
    parsed = v1.SessionNotification.model_validate_lenient(
        _update({"sessionUpdate": "plan", "entries": [entry]})
    )
    assert _wire(parsed)["update"]["entries"] == [
        {"content": "a", "priority": "high", "status": "pending"}
    ]
    assert parsed.salvaged == (Salvage(("update", "entries", 0, "_meta"), "dict_type", "default"),)


# -- skip-invalid-items -----------------------------------------------------------------


def test_every_invalid_item_is_dropped_and_the_order_of_the_rest_kept() -> None:
    entries = [
        {"content": "a", "priority": "high", "status": "pending"},
        {"content": "b", "priority": "?", "status": "pending"},
        {"content": "c", "priority": "low", "status": "done?"},
        {"content": "d", "priority": "low", "status": "pending"},
    ]
    parsed = v1.SessionNotification.model_validate_lenient(
        _update({"sessionUpdate": "plan", "entries": entries})
    )
    assert [e["content"] for e in _wire(parsed)["update"]["entries"]] == ["a", "d"]
    assert [s.path for s in parsed.salvaged] == [
        ("update", "entries", 1),
        ("update", "entries", 2),
    ]
    assert {s.action for s in parsed.salvaged} == {"dropped"}


def test_an_item_missing_a_required_field_is_dropped() -> None:
    entries = [
        {"content": "a", "priority": "high"},
        {"content": "b", "priority": "low", "status": "pending"},
    ]
    parsed = v1.SessionNotification.model_validate_lenient(
        _update({"sessionUpdate": "plan", "entries": entries})
    )
    assert parsed.salvaged == (Salvage(("update", "entries", 0), "missing", "dropped"),)


# -- default-on-null --------------------------------------------------------------------


@pytest.mark.parametrize("pkg", [v1, v1u, v2, v2u], ids=["v1", "v1u", "v2", "v2u"])
def test_null_mcp_servers_become_an_empty_list(pkg: Any) -> None:
    parsed = pkg.NewSessionRequest.model_validate_lenient({"cwd": "/", "mcpServers": None})
    assert parsed.mcp_servers == []
    assert _wire(parsed) == {"cwd": "/", "mcpServers": []}


def test_default_on_null_is_only_for_null() -> None:
    with pytest.raises(ValidationError, match="mcpServers"):
        v1.NewSessionRequest.model_validate_lenient({"cwd": "/", "mcpServers": "none"})
    with pytest.raises(ValidationError, match="mcpServers"):
        v1.NewSessionRequest.model_validate_lenient({"cwd": "/"})


# -- what stays strict ------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"sessionId": 7, "update": {"sessionUpdate": "plan", "entries": []}},
        {"sessionId": SESSION, "update": {"sessionUpdate": "no_such_update"}},
        {"sessionId": SESSION, "update": {"sessionUpdate": "tool_call_update"}},
        {"sessionId": SESSION, "update": {"sessionUpdate": "tool_call_update", "toolCallId": 3}},
    ],
    ids=["session id", "unknown tag of a closed union", "missing id", "id of the wrong type"],
)
def test_unmarked_fields_stay_strict_and_the_error_is_the_strict_one(params: Any) -> None:
    with pytest.raises(ValidationError) as strict:
        v1.SessionNotification.model_validate(params)
    with pytest.raises(ValidationError) as lenient:
        v1.SessionNotification.model_validate_lenient(params)
    assert lenient.value.errors() == strict.value.errors()


def test_protocol_version_stays_strict() -> None:
    with pytest.raises(ValidationError, match="protocolVersion"):
        v1.InitializeResponse.model_validate_lenient({"protocolVersion": "one"})


def test_model_validate_itself_stays_strict_like_the_json_schema() -> None:
    params = _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": "teleport"})
    with pytest.raises(ValidationError, match="kind"):
        v1.SessionNotification.model_validate(params)
    assert v1.SessionNotification.model_validate_lenient(params).salvaged


def test_a_salvage_does_not_touch_the_callers_input() -> None:
    params = _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": "teleport"})
    before = json.dumps(params)
    v1.SessionNotification.model_validate_lenient(params)
    assert json.dumps(params) == before


# -- the report -------------------------------------------------------------------------


def test_valid_input_reports_nothing_and_is_the_strict_result() -> None:
    params = _update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    )
    lenient = v1.SessionNotification.model_validate_lenient(params)
    assert lenient.salvaged == () == salvaged(lenient)
    assert lenient == v1.SessionNotification.model_validate(params)


def test_the_json_entry_salvages_as_the_python_one() -> None:
    params = _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": "teleport"})
    from_json = v1.SessionNotification.model_validate_json_lenient(json.dumps(params))
    assert from_json == v1.SessionNotification.model_validate_lenient(params)
    assert from_json.salvaged == (Salvage(("update", "kind"), "literal_error", "default"),)


def test_the_salvage_record_is_neither_dumped_nor_compared() -> None:
    params = _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": "teleport"})
    parsed = v1.SessionNotification.model_validate_lenient(params)
    clean = v1.SessionNotification.model_validate(
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c"})
    )
    assert parsed == clean and clean.salvaged == ()
    assert "acp" not in parsed.model_dump_json() and "acp" not in repr(parsed)


def test_each_salvage_is_logged_with_method_path_and_type_never_the_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="acp_runtime._salvage")
    secret = "sk-live-do-not-log"
    v1.SessionNotification.model_validate_lenient(
        _update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": secret})
    )
    (record,) = caplog.records
    assert record.getMessage() == "session/update: salvaged update.kind (literal_error): default"
    assert secret not in record.getMessage() and secret not in repr(record.__dict__)
    assert (record.acp_method, record.acp_path) == ("session/update", "update.kind")  # type: ignore[attr-defined]


def test_where_formats_the_json_path() -> None:
    assert Salvage(("update", "entries", 1), "missing", "dropped").where == "update.entries[1]"
    assert Salvage((), "missing", "dropped").where == "$"


# -- the generated markers --------------------------------------------------------------


def test_markers_carry_the_annotation_into_the_json_schema() -> None:
    props = v1.ToolCallUpdate.model_json_schema()["properties"]
    assert props["kind"]["x-deserialize-default-on-error"] is True
    assert props["content"]["x-deserialize-skip-invalid-items"] is True
    assert "x-deserialize-default-on-error" not in props["toolCallId"]
    assert DefaultOnError == DefaultOnError and isinstance(SkipInvalidItems, Lenient)


PACKAGES = [("v1", v1), ("v1/unstable", v1u), ("v2", v2), ("v2/unstable", v2u)]


@pytest.mark.parametrize(("key", "pkg"), PACKAGES, ids=[k for k, _ in PACKAGES])
def test_every_annotated_property_of_a_generated_class_carries_its_markers(
    key: str, pkg: Any
) -> None:
    """For each def generated under its own name, each ``x-deserialize-*`` property has the
    marker and no other field has one (the schema is the only source of leniency)."""
    from tests.codegen.schemas import PACKAGES as LOCKED

    schema = next(p for p in LOCKED if p.key == key).raw_schema
    # imported by name: the package loads its submodules lazily, so `pkg.models` exists only
    # once something has imported it (an earlier test, in some orders)
    models = importlib.import_module(f"{pkg.__name__}.models")
    checked = 0
    for name, definition in schema["$defs"].items():
        cls = getattr(models, name, None)
        if not isinstance(cls, type) or "properties" not in definition:
            continue
        by_wire = {
            (info.validation_alias if isinstance(info.validation_alias, str) else field): info
            for field, info in cls.model_fields.items()
        }
        for prop, spec in definition["properties"].items():
            info = by_wire.get(prop)
            if info is None:
                continue
            expected = {
                k.removeprefix("x-deserialize-") for k in spec if k.startswith("x-deserialize-")
            }
            found = {m.rule for m in info.metadata if isinstance(m, Lenient)}
            assert found == expected, f"{name}.{prop}"
            checked += 1
    assert checked > 100


def test_null_where_python_allows_none_but_the_schema_does_not_is_refused_then_salvaged() -> None:
    """v2 ``mcpServers`` is optional, so ``list | None`` in Python; the schema allows no null.
    Strict parsing refuses it like the schema; lenient parsing reports taking ``[]``."""
    with pytest.raises(ValidationError, match="valid list"):
        v2.NewSessionRequest.model_validate({"cwd": "/", "mcpServers": None})
    parsed = v2.NewSessionRequest.model_validate_lenient({"cwd": "/", "mcpServers": None})
    assert parsed.salvaged == (Salvage(("mcpServers",), "list_type", "null"),)
    assert v2.NewSessionRequest.model_validate({"cwd": "/"}).mcp_servers is None


def test_an_optional_array_the_schema_keeps_from_null_falls_back_to_empty() -> None:
    """``ToolCall.content`` is ``type: array`` (no null) and optional: as in the Rust and
    TypeScript SDKs, an invalid value becomes ``[]``, and ``null`` is refused strictly."""
    call = {"toolCallId": "c", "title": "t"}
    with pytest.raises(ValidationError, match="content"):
        v1.ToolCall.model_validate({**call, "content": None})
    for bad in (None, "not a list"):
        parsed = v1.ToolCall.model_validate_lenient({**call, "content": bad})
        assert _wire(parsed) == {**call, "content": []}
        assert [s.action for s in parsed.salvaged] == ["default"]
    assert v1.ToolCall.model_validate(call).content is None  # absent stays absent


def test_params_typed_as_a_union_salvage_through_their_codec() -> None:
    """``session/set_config_option`` params are a union (no model of their own): the codec
    salvages through its type adapter's schema and names the method."""
    (binding,) = [m for m in v1.REQUESTS if m.name == "session/set_config_option"]
    params = {"sessionId": SESSION, "configId": "c", "value": "v", "_meta": "not an object"}
    parsed = binding.params.load(params)
    assert binding.params.dump(parsed) == {"sessionId": SESSION, "configId": "c", "value": "v"}
    assert salvaged(parsed) == (Salvage(("_meta",), "dict_type", "default"),)


def test_a_default_on_error_list_with_min_items_falls_back_to_empty_as_the_ts_sdk() -> None:
    """``SessionConfigSelectGroup.options`` (v2): required, default-on-error, ``minItems: 1``.
    The generator drops ``minItems`` there, so the fallback ``[]`` is a value the model
    takes (the TS SDK and serde fall back the same way) instead of refusing the message."""
    from acp_generated.v2 import models as v2

    group = v2.SessionConfigSelectGroup.model_validate_lenient(
        {"groupId": "g", "name": "Group", "options": "not a list"}
    )
    assert group.options == []
    assert [(s.path, s.error_type, s.action) for s in group.salvaged] == [
        (("options",), "list_type", "default")
    ]
    empty = v2.SessionConfigSelectGroup.model_validate({"groupId": "g", "name": "G", "options": []})
    assert empty.options == []


# -- no lax coercions: the models are strict like the JSON Schema and zod ----------------


@pytest.mark.parametrize("models", [v1, v2], ids=["v1", "v2"])
@pytest.mark.parametrize("version", [True, "1", 1.5])
def test_a_protocol_version_that_is_not_an_integer_is_refused(models: Any, version: Any) -> None:
    def errors_at_the_version(value: Any) -> list[str]:
        try:
            models.InitializeRequest.model_validate_lenient({"protocolVersion": value})
        except ValidationError as error:
            return [e["type"] for e in error.errors() if e["loc"] == ("protocolVersion",)]
        return []

    assert errors_at_the_version(version) == ["int_type"]
    assert errors_at_the_version(1) == []


@pytest.mark.parametrize("line", [True, "3"])
def test_a_line_number_that_is_a_bool_or_a_numeric_string_is_refused(line: Any) -> None:
    with pytest.raises(ValidationError, match="int_type"):
        v1.ReadTextFileRequest.model_validate_lenient(
            {"sessionId": SESSION, "path": "/a", "line": line}
        )


def test_an_integral_float_is_an_integer_as_json_schema_says() -> None:
    """``1.0`` is a JSON Schema integer (a Python peer's ``json.dumps(1.0)``): strictness
    takes it, kept as ``1``, with nothing salvaged."""
    parsed = v1.InitializeRequest.model_validate({"protocolVersion": 1.0})
    assert parsed.protocol_version == 1 and type(parsed.protocol_version) is int
    read = v1.ReadTextFileRequest.model_validate_lenient(
        {"sessionId": SESSION, "path": "/a", "line": 3.0, "limit": 2.0}
    )
    assert (read.line, read.limit, read.salvaged) == (3, 2, ())
    assert read.model_dump(mode="json", by_alias=True)["line"] == 3


def test_a_bool_given_as_a_string_is_not_coerced_but_salvaged_where_the_schema_says() -> None:
    raw = {"readTextFile": "yes", "writeTextFile": True}
    with pytest.raises(ValidationError, match="bool_type"):
        v1.FileSystemCapabilities.model_validate(raw)
    parsed = v1.FileSystemCapabilities.model_validate_lenient(raw)  # default-on-error
    assert (parsed.read_text_file, parsed.write_text_file) == (False, True)
    assert [s.path for s in parsed.salvaged] == [("readTextFile",)]


def test_a_number_given_as_a_string_is_refused() -> None:
    with pytest.raises(ValidationError, match="minimum"):
        v1.NumberPropertySchema.model_validate({"type": "number", "minimum": "1.5"})
