"""Unions whose variants are created on the first use of their tag (issue 34).

``acp_runtime._lazy_union`` replaces pydantic's discriminated union at run time; these
tests hold it to that union: the same values, the same errors, the same dump and JSON
schema, and a salvage that still reaches inside a variant.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from typing import Annotated, Any, Union

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from acp_generated import v1
from acp_runtime._lazy_union import LazyTaggedUnion
from acp_runtime.codegen_support import SerializeAsAny
from codegen.lazy_unions import lazy_unions

PACKAGES = ["acp_generated.v1", "acp_generated.v1.unstable"]


def _lazy_aliases(package: str) -> dict[str, tuple[Any, LazyTaggedUnion]]:
    models = importlib.import_module(f"{package}.models")
    found: dict[str, tuple[Any, LazyTaggedUnion]] = {}
    for name in models.__all__:
        alias = getattr(models, name)
        for marker in getattr(getattr(alias, "__value__", None), "__metadata__", ()):
            if isinstance(marker, LazyTaggedUnion):
                found[name] = (alias, marker)
    return found


def _eager(marker: LazyTaggedUnion) -> TypeAdapter[Any]:
    """The union pydantic makes of the same variants (what checkers see)."""
    classes = tuple(marker.variant(tag) for tag in marker.tags)
    union = Annotated[Union[classes], Field(discriminator=marker.discriminator[0])]  # noqa: UP007
    return TypeAdapter(SerializeAsAny[union])


def _outcome(adapter: TypeAdapter[Any], value: Any) -> Any:
    try:
        parsed = adapter.validate_python(value)
    except ValidationError as error:
        return ("error", error.errors(include_url=False))
    return ("ok", type(parsed).__name__, adapter.dump_python(parsed, mode="json"))


def _inputs(marker: LazyTaggedUnion, field: str, wire: str) -> list[Any]:
    """Wrong shapes, missing and unknown tags, and each tag with nothing else (the
    variant's own errors, under the tag) or with its required text where one suffices."""
    out: list[Any] = [None, "text", [], {}, {wire: "no-such-tag"}, {wire: 3}, {field: "x"}]
    for tag in marker.tags:
        out += [{wire: tag}, {field: tag}, {wire: tag, "_meta": {"k": 1}, "extra": [1, 2]}]
        out += [{wire: tag, "text": "hi"}, {wire: tag, "content": {"type": "text", "text": "x"}}]
        out += [{wire: tag, "content": {"type": "text"}}, {wire: tag, "toolCallId": "t1"}]
    return out


SOURCE = """
from __future__ import annotations

class A(AcpModel):
    kind: Annotated[Literal["a"], Field(validation_alias="kindOf")]

class B(AcpModel):
    kind: Annotated[Literal["b"], Field(validation_alias="kindOf")]

class C(AcpModel):
    size: int

class D(AcpModel):
    kind: str

class E(AcpModel):
    kind: Literal["e"]

AB = TypeAliasType("AB", SerializeAsAny[Annotated[A | B, Field(discriminator="kind")]])

Known = TypeAliasType("Known", SerializeAsAny[Annotated[A | B, Field(discriminator="kind")]])

Open = TypeAliasType("Open", Annotated[Known | C, Field(union_mode="left_to_right")])

Plain = TypeAliasType("Plain", SerializeAsAny[A | C])

NotConstant = TypeAliasType("NotConstant", Annotated[A | D, Field(discriminator="kind")])

TwoWireNames = TypeAliasType("TwoWireNames", Annotated[A | E, Field(discriminator="kind")])
"""


def test_the_generator_makes_lazy_the_tagged_unions_of_classes_no_union_refers_to() -> None:
    found = lazy_unions(SOURCE)
    # Known: an open union's known part; Plain: no tag; the last two: shapes it leaves alone
    assert set(found) == {"AB"}
    assert found["AB"].field == "kind" and found["AB"].wire == "kindOf"
    assert found["AB"].variants == (("a", "A"), ("b", "B"))


def test_the_v1_packages_unions_of_models_are_lazy_and_the_open_ones_not() -> None:
    assert {"SessionUpdate", "ContentBlock", "ToolCallContent", "RequestPermissionOutcome"} <= set(
        _lazy_aliases("acp_generated.v1")
    )
    assert "McpServerKnown" not in _lazy_aliases("acp_generated.v1")
    assert _lazy_aliases("acp_generated.v2") == {}  # open unions: left eager (lazy_unions.py)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_lazy_union_accepts_refuses_and_dumps_as_pydantic_s(package: str) -> None:
    aliases = _lazy_aliases(package)
    assert "SessionUpdate" in aliases and "ContentBlock" in aliases
    for name, (alias, marker) in aliases.items():
        lazy, eager = TypeAdapter[Any](alias), _eager(marker)
        field, wire = marker.discriminator
        for value in _inputs(marker, field, wire):
            assert _outcome(lazy, value) == _outcome(eager, value), (name, value)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_lazy_union_has_pydantic_s_json_schema(package: str) -> None:
    for name, (alias, marker) in _lazy_aliases(package).items():
        assert TypeAdapter[Any](alias).json_schema() == _eager(marker).json_schema(), name


def test_an_instance_of_a_variant_is_kept_as_it_is() -> None:
    chunk = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text="hi"))
    notification = v1.SessionNotification(session_id="s", update=chunk)
    assert notification.update is chunk
    with pytest.raises(ValidationError) as caught:
        v1.SessionNotification(session_id="s", update=v1.TextContentBlock(text="hi"))
    assert caught.value.errors()[0]["type"] == "union_tag_not_found"


def test_the_salvage_reaches_inside_a_lazy_variant() -> None:
    """A tool call update's unknown ``kind`` is dropped (``x-deserialize-default-on-error``)
    though the variant's schema is not in ``SessionNotification``'s."""
    wire = {
        "sessionId": "s",
        "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "kind": "teleport"},
    }
    with pytest.raises(ValidationError):
        v1.SessionNotification.model_validate(wire)
    parsed = v1.SessionNotification.model_validate_lenient(wire)
    assert isinstance(parsed.update, v1.ToolCallUpdateSessionUpdate)
    assert parsed.update.kind is None
    assert [(s.path, s.action) for s in parsed.salvaged] == [(("update", "kind"), "default")]


FIRST_UPDATE = """
import json, sys
from acp_generated import v1
v1.SessionNotification.model_validate(
    {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
                                  "content": {"type": "text", "text": "hi"}}}
)
print(json.dumps(sorted(m.rsplit(".", 1)[1] for m in sys.modules if "._models." in m)))
"""


def test_an_update_creates_its_own_variant_not_the_other_thirteen() -> None:
    """Issue 34: the first ``session/update`` created all 14 kinds and what they use (38
    classes); now the notification, its kind and the text block."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_UPDATE], capture_output=True, text=True, check=True
    )
    modules = set(json.loads(out.stdout))
    assert {"session_notification", "agent_message_chunk_session_update"} <= modules
    assert "text_content_block" in modules
    for other in ("tool_call_session_update", "plan_session_update", "image_content_block"):
        assert other not in modules
