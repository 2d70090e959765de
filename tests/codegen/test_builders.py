"""The generated builders: every tagged variant has one, and each puts on the wire what the
hand-built model would (tag filled in, unset options left out, any sequence taken)."""

from __future__ import annotations

import importlib
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from acp_generated.v1 import builders as b
from acp_generated.v1 import models as v1
from codegen.authoring import BUILT_UNIONS, ModelIndex, builders, snake

PACKAGES = [
    "acp_generated.v1",
    "acp_generated.v1.unstable",
    "acp_generated.v2",
    "acp_generated.v2.unstable",
]


def wire(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def variant_classes(tp: Any) -> set[type[BaseModel]]:
    """Every model class a union alias (nested, open or not) can validate to, at run time."""
    tp = getattr(tp, "__value__", tp)
    args = typing.get_args(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return {tp}
    out: set[type[BaseModel]] = set()
    for arg in args:
        out |= variant_classes(arg)
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_every_tagged_variant_of_the_built_unions_has_a_builder(package: str) -> None:
    """Checked against the pydantic unions at run time, not the generator's own reading."""
    models = importlib.import_module(f"{package}.models")
    module = importlib.import_module(f"{package}.builders")
    returned = {typing.get_type_hints(getattr(module, n))["return"] for n in module.__all__}
    for union, _ in BUILT_UNIONS:
        for cls in variant_classes(getattr(models, union)):
            is_catch_all = cls.__name__.startswith("Other")
            assert (cls in returned) != is_catch_all, (package, union, cls.__name__)


def test_text_fills_the_tag_and_leaves_options_unset() -> None:
    assert wire(b.text(text="hi")) == {"type": "text", "text": "hi"}
    assert b.text(text="hi") == v1.TextContentBlock(type="text", text="hi")
    assert wire(b.text(text="hi", meta={"k": 1})) == {
        "type": "text",
        "text": "hi",
        "_meta": {"k": 1},
    }


def test_session_updates_match_the_hand_built_models() -> None:
    chunk = b.agent_message_chunk(content=b.text(text="hi"), message_id="m1")
    assert chunk == v1.AgentMessageChunkSessionUpdate(
        session_update="agent_message_chunk",
        content=v1.TextContentBlock(type="text", text="hi"),
        message_id="m1",
    )
    assert wire(b.agent_thought_chunk(content=b.text(text="t")))["sessionUpdate"] == (
        "agent_thought_chunk"
    )
    assert wire(b.user_message_chunk(content=b.text(text="u")))["sessionUpdate"] == (
        "user_message_chunk"
    )


def test_sequences_become_lists_and_nested_builders_compose() -> None:
    update = b.tool_call(
        tool_call_id="t1",
        title="Edit a",
        kind="edit",
        status="pending",
        content=(
            b.tool_diff(path="/a", old_text="x", new_text="y"),
            b.tool_content(content=b.text(text="done")),
            b.tool_terminal(terminal_id="term1"),
        ),
        locations=(b.tool_call_location(path="/a", line=2),),
    )
    assert isinstance(update.content, list)
    assert wire(update) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Edit a",
        "kind": "edit",
        "status": "pending",
        "content": [
            {"type": "diff", "path": "/a", "oldText": "x", "newText": "y"},
            {"type": "content", "content": {"type": "text", "text": "done"}},
            {"type": "terminal", "terminalId": "term1"},
        ],
        "locations": [{"path": "/a", "line": 2}],
    }
    steps = b.plan(entries=(b.plan_entry(content="read", priority="high", status="pending"),))
    assert wire(steps) == {
        "sessionUpdate": "plan",
        "entries": [{"content": "read", "priority": "high", "status": "pending"}],
    }


def test_update_sends_only_what_changed() -> None:
    assert wire(b.tool_call_update(tool_call_id="t1", status="completed")) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "completed",
    }


def test_other_content_blocks() -> None:
    assert wire(b.image(data="AA==", mime_type="image/png")) == {
        "type": "image",
        "data": "AA==",
        "mimeType": "image/png",
    }
    assert wire(b.audio(data="AA==", mime_type="audio/wav"))["type"] == "audio"
    assert wire(b.resource_link(name="a", uri="file:///a")) == {
        "type": "resource_link",
        "name": "a",
        "uri": "file:///a",
    }
    embedded = b.resource(resource=b.text_resource_contents(uri="file:///a", text="body"))
    assert wire(embedded) == {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}}
    blob = b.resource(resource=b.blob_resource_contents(uri="file:///b", blob="AA=="))
    assert isinstance(blob.resource, v1.BlobResourceContents)


def test_builder_names_come_from_the_tags() -> None:
    # The package's models: its own and those it shares with v1.unstable, in the modules
    # under v1/_models (codegen/lazy_models.py).
    parts = sorted((Path(v1.__file__).parent / "_models").glob("*.py"))
    index = ModelIndex("".join(p.read_text("utf-8") for p in parts))
    names = {x.name: x.construction.model for x in builders(index)}
    assert names["resource_link"] == "ResourceLinkContentBlock"
    assert names["tool_diff"] == "DiffToolCallContent"
    assert names[snake("PlanEntry")] == "PlanEntry"
    assert set(names) == set(b.__all__)
