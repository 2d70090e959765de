"""Schema-driven invalid payloads: whatever the JSON Schema rejects, the models reject too,
and the error names the field.

For every def's minimal instance (from the synthesizer), each required field is in turn
removed, then given a value of the wrong JSON type. ``jsonschema`` is the oracle: only
mutations it rejects are used.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from tests.codegen.schemas import IDS, PACKAGES, Package
from tests.codegen.test_corpus_roundtrip import _typed_defs, _validator
from tests.corpus.synth import Synth


def _wrong_type(value: Any) -> Any:
    return "not-a-list" if isinstance(value, list) else [["wrong", "type"]]


def _mutations(
    instance: dict[str, Any], required: list[str]
) -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for field in required:
        if field not in instance:
            continue
        out.append(("missing", field, {k: v for k, v in instance.items() if k != field}))
        out.append(("wrong type", field, {**instance, field: _wrong_type(instance[field])}))
    return out


def _names_field(error: ValidationError, field: str) -> bool:
    for e in error.errors():
        if field in [str(part) for part in e["loc"]] or repr(field) in e["msg"]:
            return True
    return False


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
def test_schema_invalid_payloads_are_rejected_naming_the_field(pkg: Package) -> None:
    schema = pkg.raw_schema
    synth = Synth(schema)
    accepted: list[str] = []
    unnamed: list[str] = []
    tried = 0
    for name in _typed_defs(pkg):
        validator: jsonschema.Draft202012Validator = _validator(schema, name)
        adapter: TypeAdapter[Any] = TypeAdapter(getattr(pkg.models, name))
        for label, instance in synth.instances(name):
            if not isinstance(instance, dict):
                continue
            required = list(instance)  # every key of a minimal instance is required somewhere
            if not label.endswith("min") and label != "minimal":
                continue
            for kind, field, bad in _mutations(instance, required):
                if validator.is_valid(bad):
                    continue  # e.g. an untagged default variant still matches: not invalid
                tried += 1
                try:
                    adapter.validate_python(bad)
                except ValidationError as error:
                    if not _names_field(error, field):
                        unnamed.append(f"{name} {label} {kind} {field}: {error.errors()[0]}")
                else:
                    accepted.append(f"{name} {label}: {kind} {field!r} accepted")
    assert accepted == []
    assert unnamed == []
    assert tried > 100
