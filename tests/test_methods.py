"""The binding layer converts between typed params and JSON values."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from acp_runtime import RequestMethod
from acp_runtime._methods import request_method_of
from acp_runtime.codegen_support import TypedRequest


class _Answer(BaseModel):
    value: int


class _Ask(BaseModel, TypedRequest[_Answer]):
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)
    session_id: str = Field(validation_alias="sessionId", serialization_alias="sessionId")
    __acp_method__: ClassVar[RequestMethod[_Ask, _Answer]]


_Ask.__acp_method__ = RequestMethod("test/ask", _Ask, _Answer, side="agent")


def test_params_dump_to_wire_names_and_back() -> None:
    method = request_method_of(_Ask(session_id="s1"))
    assert method.name == "test/ask"
    wire = method.params.dump(_Ask(session_id="s1"))
    assert wire == {"sessionId": "s1"}
    assert method.params.load(wire) == _Ask(session_id="s1")
    assert method.result.load({"value": 3}) == _Answer(value=3)
