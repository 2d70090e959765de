"""``codegen.annotations.evaluated_annotations``: plain annotations, forward references quoted."""

from __future__ import annotations

import pytest

from acp_generated.v1 import models
from codegen.annotations import evaluated_annotations

SOURCE = '''"""Doc."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal


class B(Base):
    a: A | None = None
    me: list[B] = []
    note: Annotated[str, Field(description="é")] = ""
    if TYPE_CHECKING:
        type: Literal["b"] = "b"
    else:
        type: Literal["b"]


class A(Base):
    b: B
    s: Annotated[
        Literal["x"], Field(alias="S")
    ]
'''


def test_only_forward_references_are_quoted() -> None:
    out = evaluated_annotations(SOURCE)
    assert "__future__" not in out
    assert "    a: 'A | None' = None\n" in out  # A is defined later
    assert "    me: 'list[B]' = []\n" in out  # the class itself is not defined yet
    assert '    note: Annotated[str, Field(description="é")] = ""\n' in out
    assert '        type: Literal["b"] = "b"\n' in out
    assert "    b: B\n" in out
    assert '    s: Annotated[\n        Literal["x"], Field(alias="S")\n    ]\n' in out
    compile(out, "<out>", "exec")


def test_a_module_without_the_future_import_is_refused() -> None:
    with pytest.raises(ValueError, match="__future__"):
        evaluated_annotations("class A:\n    x: int\n")


def test_generated_models_carry_evaluated_annotations() -> None:
    """pydantic gets objects, not strings to compile and evaluate (cold start, bench/)."""
    annotations = models.ContentChunk.__annotations__
    assert annotations and not any(isinstance(a, str) for a in annotations.values())
