"""A model-typed field's schema default, as generated, is the model validation makes of it.

The generated defaults are ``model_construct`` calls (``codegen/postprocess.py``), so
filling in a left-out capability builds no validator (issue 34). These tests hold each one
to its schema: the same values, of the same types, with the same fields set, as
``model_validate`` of the schema's JSON default."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from codegen.postprocess import postprocess
from tests.codegen.schemas import IDS, PACKAGES, Package


def _model_defaults(package: Package) -> list[tuple[str, str, Any, Any]]:
    """``(class, wire name, what the default factory makes, the schema's default)`` for each
    field of a generated model whose default is a model."""
    definitions = package.raw_schema["$defs"]
    found = []
    for name in package.models.__all__:
        cls = getattr(package.models, name)
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            continue
        for field_name, field in cls.model_fields.items():
            if field.default_factory is None:
                continue
            made = field.default_factory()  # type: ignore[call-arg]
            if not isinstance(made, BaseModel):
                continue
            alias = field.validation_alias
            wire = alias if isinstance(alias, str) else field_name
            schema_default = _property(definitions, definitions[name], wire)["default"]
            found.append((name, wire, made, schema_default))
    return found


def _property(definitions: dict[str, Any], definition: Any, wire: str) -> Any:
    """The schema of property ``wire`` of ``definition``, also where it comes from an
    ``allOf`` part or a ``$ref`` (``InitializeProxyRequest`` is ``InitializeRequest``)."""
    if "$ref" in definition:
        return _property(definitions, definitions[definition["$ref"].rsplit("/", 1)[1]], wire)
    if wire in definition.get("properties", {}):
        return definition["properties"][wire]
    for part in definition.get("allOf", []):
        found = _property(definitions, part, wire)
        if found is not None:
            return found
    return None


def _fields_set(model: BaseModel) -> Any:
    """Which fields are set, at every level."""
    return {
        name: _fields_set(value) if isinstance(value, BaseModel) else None
        for name, value in model
        if name in model.model_fields_set
    }


@pytest.mark.parametrize("package", PACKAGES, ids=IDS)
def test_every_model_default_is_what_validating_the_schema_default_makes(
    package: Package,
) -> None:
    defaults = _model_defaults(package)
    assert defaults  # the capabilities of initialize, at least
    for name, wire, made, schema_default in defaults:
        validated = type(made).model_validate(schema_default)
        where = f"{name}.{wire}"
        assert made == validated, where
        assert _fields_set(made) == _fields_set(validated), where
        assert made.model_dump(by_alias=True, exclude_unset=True) == schema_default, where


def test_an_unrecognised_default_is_still_validated() -> None:
    """``_constructed`` takes only what validation keeps unchanged; anything else (a number,
    which the lenient rules may widen; an extra key) keeps ``model_validate``."""
    source = """from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Caps(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
    )
    load_session: Annotated[bool, Field(alias="loadSession")] = False
    label: str = "x"
    amount: int | None = None


class Holder(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
    )
    plain: Caps = {"loadSession": True, "label": "y"}
    number: Caps = {"amount": 2}
    extra: Caps = {"other": True}
"""
    out = postprocess(source, "", [], [])
    assert "plain: Caps = Field(default_factory=lambda: Caps.model_construct(" in out
    assert "load_session=True, label='y')" in out or 'load_session=True, label="y")' in out
    assert 'number: Caps = Field(default_factory=lambda: Caps.model_validate({"amount": 2}))' in out
    assert 'Caps.model_validate({"other": True})' in out
