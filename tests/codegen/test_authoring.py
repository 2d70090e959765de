"""codegen.authoring: how builders and remote methods are named and shaped from the models."""

from __future__ import annotations

import textwrap

import pytest

from codegen.authoring import AuthoringError, ModelIndex, builders, remotes
from codegen.method_names import python_name
from codegen.method_table import Method

HEAD = "from typing import Annotated, Any, Literal\n"


def index(body: str) -> ModelIndex:
    return ModelIndex(HEAD + textwrap.dedent(body))


def method(name: str, params: str, side: str = "agent", kind: str = "request") -> Method:
    result = "R" if kind == "request" else None
    const = name.replace("/", "_").upper()
    return Method(name, kind, side, params, result, "", python_name(name), const)  # type: ignore[arg-type]


def test_a_remote_method_has_the_handler_method_s_name() -> None:
    methods = [method("session/prompt", "PromptRequest"), method("x/odd", "OddParams")]
    [agent] = remotes(index("class PromptRequest(AcpModel):\n    x: int\n"), methods, ["agent"])
    assert [r.name for r in agent.methods] == ["prompt", "x_odd"]


SOURCE = """
class TextContent(AcpModel):
    text: str
    meta: Annotated[dict[str, Any] | None, Field(validation_alias="_meta")] = None

class TextContentBlock(TextContent):
    type: Literal["text"]

class Entry(AcpModel):
    name: str

class Listing(AcpModel):
    entries: list[Entry]
    tags: list[str] | None = None

class ListingContentBlock(Listing):
    type: Literal["listing"]

class OtherContentBlock(AcpModel):
    type: Annotated[str, AfterValidator(unknown_tag(frozenset({"text"})))]

ContentBlockKnown = TypeAliasType(
    "ContentBlockKnown",
    SerializeAsAny[Annotated[TextContentBlock | ListingContentBlock, Field(discriminator="type")]],
)
ContentBlock = TypeAliasType(
    "ContentBlock",
    SerializeAsAny[
        Annotated[ContentBlockKnown | OtherContentBlock, Field(union_mode="left_to_right")]
    ],
)
"""


def test_variants_of_open_unions_and_the_models_they_hold() -> None:
    built = {b.name: b for b in builders(index(SOURCE))}
    assert list(built) == ["text", "listing", "entry"]  # no builder for the catch-all
    text = built["text"].construction
    assert text.tags == (("type", "text"),)
    assert [p.signature() for p in text.params] == [
        "text: str",
        "meta: dict[str, Any] | None = None",
    ]
    listing = built["listing"].construction
    assert [p.signature() for p in listing.params] == [
        "entries: Sequence[Entry]",
        "tags: list[str] | None = None",  # a str list stays a list: a str is a sequence too
    ]
    assert [p.value() for p in listing.params] == ["list(entries)", "tags"]


def test_colliding_builder_names_are_an_error() -> None:
    clash = SOURCE.replace('Literal["listing"]', 'Literal["text"]')
    with pytest.raises(AuthoringError, match="collide"):
        builders(index(clash))


def test_a_field_that_would_shadow_a_helper_name_is_an_error() -> None:
    with pytest.raises(AuthoringError, match="shadow"):
        index("class P(AcpModel):\n    given: str\n").construction("P")


def test_remote_facades_skip_protocol_methods_and_take_union_params_as_they_are() -> None:
    source = SOURCE + "class PromptRequest(AcpModel):\n    session_id: str\n"
    methods = [
        method("session/prompt", "PromptRequest"),
        method("blocks/put", "ContentBlock"),
        method("$/cancel_request", "PromptRequest", side="protocol", kind="notification"),
    ]
    [agent] = remotes(index(source), methods, ["agent"])
    assert agent.name == "RemoteAgent"
    assert [(m.name, m.construction is None) for m in agent.methods] == [
        ("prompt", False),
        ("blocks_put", True),
    ]


def test_a_tag_with_a_default_is_still_filled_in_not_a_parameter() -> None:
    """Generated models may default their tag to its constant; the builder still sets it."""
    defaulted = SOURCE.replace('type: Literal["text"]', 'type: Literal["text"] = "text"')
    [text] = [b for b in builders(index(defaulted)) if b.name == "text"]
    assert text.construction.tags == (("type", "text"),)
    assert "type" not in [p.name for p in text.construction.params]
