"""Unions whose variants are created on their first use (issue 34).

``acp_runtime._lazy_union`` replaces pydantic's tagged and left-to-right unions at run
time; these tests hold it to the unions written out: the same values, the same errors,
the same dump and JSON schema, and a salvage that still reaches inside a variant.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from typing import Annotated, Any, Union

import pytest
from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypeAliasType

from acp_generated import v1
from acp_runtime._lazy_union import LazyUnion, LeftToRight, Node, Tagged
from acp_runtime.codegen_support import SerializeAsAny
from codegen.lazy_unions import LeftToRight as CodegenLeftToRight
from codegen.lazy_unions import Tagged as CodegenTagged
from codegen.lazy_unions import lazy_unions

PACKAGES = [f"acp_generated.{v}" for v in ("v1", "v1.unstable", "v2", "v2.unstable")]


def _lazy_aliases(package: str) -> dict[str, tuple[Any, LazyUnion]]:
    models = importlib.import_module(f"{package}.models")
    found: dict[str, tuple[Any, LazyUnion]] = {}
    for name in models.__all__:
        alias = getattr(models, name)
        for marker in getattr(getattr(alias, "__value__", None), "__metadata__", ()):
            if isinstance(marker, LazyUnion):
                found[name] = (alias, marker)
    return found


def _written_out(marker: LazyUnion, node: Node) -> Any:
    """The union as pydantic builds it from the classes (what checkers see): a member union
    is an alias of its own, as generated."""
    if isinstance(node, Tagged):
        members = tuple(_written_out(marker, c) for c in node.choices.values())
        value: Any = Annotated[Union[members], Field(discriminator=node.discriminator[0])]  # noqa: UP007
    elif isinstance(node, LeftToRight):
        members = tuple(_written_out(marker, c) for c in node.choices)
        value = Annotated[Union[members], Field(union_mode="left_to_right")]  # noqa: UP007
    else:
        return marker.variant(node)
    return value if node.name is None else TypeAliasType(node.name, value)


def _eager(marker: LazyUnion) -> TypeAdapter[Any]:
    return TypeAdapter(SerializeAsAny[_written_out(marker, marker.node)])


def _outcome(adapter: TypeAdapter[Any], value: Any) -> Any:
    try:
        parsed = adapter.validate_python(value)
    except ValidationError as error:
        return ("error", json.dumps(error.errors(include_url=False), default=repr))
    return ("ok", type(parsed).__name__, adapter.dump_python(parsed, mode="json"))


def _tag_paths(node: Node, path: dict[str, str]) -> list[dict[str, str]]:
    """The tags (wire name: value) leading to each variant, nested unions included."""
    if isinstance(node, Tagged):
        wire = node.discriminator[1]
        return [p for tag, c in node.choices.items() for p in _tag_paths(c, {**path, wire: tag})]
    if isinstance(node, LeftToRight):
        return [p for c in node.choices for p in _tag_paths(c, path)]
    return [path]


def _inputs(marker: LazyUnion) -> list[Any]:
    """Wrong shapes, missing and unknown tags, and each variant's tags with nothing else
    (its own errors, under the tags) or with what a few variants need."""
    out: list[Any] = [None, "text", [], {}]
    for tags in _tag_paths(marker.node, {}):
        out += [{k: "no-such-tag" for k in tags}, {k: 3 for k in tags}, dict(tags)]
        out += [{**tags, "_meta": {"k": 1}, "extra": [1, 2]}, {**tags, "text": "hi"}]
        out += [{**tags, "content": {"type": "text", "text": "x"}, "messageId": "m"}]
        out += [{**tags, "content": {"type": "text"}}, {**tags, "toolCallId": "t1"}]
        out += [dict(list(tags.items())[:-1])]  # the last tag missing
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


def test_the_generator_makes_lazy_the_unions_of_classes_it_can_write_out() -> None:
    found = lazy_unions(SOURCE)
    # Plain: a smart union; the last two: shapes it leaves to pydantic
    assert set(found) == {"AB", "Known", "Open"}
    ab = found["AB"].node
    assert isinstance(ab, CodegenTagged)
    assert (ab.field, ab.wire, ab.choices) == ("kind", "kindOf", (("a", "A"), ("b", "B")))
    open_union = found["Open"].node
    assert isinstance(open_union, CodegenLeftToRight)
    assert open_union.choices == (found["Known"].node, "C")


def test_a_union_a_smart_union_refers_to_stays_pydantic_s() -> None:
    held = SOURCE + 'Mixed = TypeAliasType("Mixed", AB | C)\n'
    assert "AB" not in lazy_unions(held)


def test_the_packages_unions_of_models_are_lazy() -> None:
    assert {"SessionUpdate", "ContentBlock", "ToolCallContent", "McpServer"} <= set(
        _lazy_aliases("acp_generated.v1")
    )
    assert {"SessionUpdate", "SessionUpdateKnown", "ContentBlock"} <= set(
        _lazy_aliases("acp_generated.v2")
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_a_lazy_union_accepts_refuses_and_dumps_as_pydantic_s(package: str) -> None:
    aliases = _lazy_aliases(package)
    assert "SessionUpdate" in aliases and "ContentBlock" in aliases
    for name, (alias, marker) in aliases.items():
        lazy, eager = TypeAdapter[Any](alias), _eager(marker)
        for value in _inputs(marker):
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


FIRST_V2_UPDATE = """
import json, sys
from acp_generated import v2
v2.UpdateSessionNotification.model_validate(
    {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "messageId": "m",
                                  "content": {"type": "text", "text": "hi"}}}
)
print(json.dumps(sorted(m.rsplit(".", 1)[1] for m in sys.modules if "._models." in m)))
"""


def test_a_v2_update_creates_neither_the_other_kinds_nor_the_nested_states() -> None:
    """v2's update union is open and nested (a state update is a union of states, an idle
    one of stop reasons): the first update created 115 classes, now 6."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_V2_UPDATE], capture_output=True, text=True, check=True
    )
    modules = set(json.loads(out.stdout))
    assert "agent_message_chunk_session_update" in modules
    for other in ("running_state_update_session_update", "other_session_update"):
        assert other not in modules

