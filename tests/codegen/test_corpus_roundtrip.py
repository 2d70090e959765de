"""Round trip of the corpus: valid payloads validate and dump back to the same JSON.

Dump = ``model_dump(mode="json", by_alias=True, exclude_unset=True)``, and the JSON text
the runtime writes straight from pydantic-core (``_Codec.encode``) must say the same.
Three sources, every one checked with ``jsonschema`` before use:

* synthesized instances of every schema def (minimal, maximal, every union variant),
  which covers every request params, result and notification params of every method;
* hand-written realistic messages (``tests/corpus/handwritten``);
* transcripts of the TypeScript SDK (``tests/corpus/transcripts``) when present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, TypeAdapter

from acp_runtime._methods import EncodedJson, _Codec  # pyright: ignore[reportPrivateUsage]
from codegen.method_table import build_method_table, envelope_defs
from tests.codegen.schemas import IDS, PACKAGES, Package
from tests.corpus.messages import CORPUS, read_lines, route
from tests.corpus.synth import EXT, Synth


def _dump(adapter: TypeAdapter[Any], value: Any) -> Any:
    return adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)


def _encoded(codec: _Codec[Any], value: Any) -> Any:
    encoded = codec.encode(value)
    assert isinstance(encoded, EncodedJson)
    return json.loads(encoded.text)


def _validator(schema: dict[str, Any], def_name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{def_name}", "$defs": schema["$defs"]}
    )


def _typed_defs(pkg: Package) -> list[str]:
    """Defs that have a generated type of the same name (envelopes and Ext* are replaced
    by the method table and the raw extension path)."""
    skipped = envelope_defs(pkg.raw_schema) | {"ExtRequest", "ExtResponse", "ExtNotification"}
    return [name for name in pkg.raw_schema["$defs"] if name not in skipped]


def _extras_outside_catch_alls(value: Any, path: str = "$") -> list[str]:
    """Paths of models that kept unknown fields although the instance has none:
    a sign the payload was parsed as the wrong variant."""
    found: list[str] = []
    if isinstance(value, BaseModel):
        if value.model_extra and not type(value).__name__.startswith("Other"):
            found.append(f"{path}:{type(value).__name__}{sorted(value.model_extra)}")
        for name in type(value).model_fields:
            found += _extras_outside_catch_alls(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _extras_outside_catch_alls(item, f"{path}[{i}]")
    return found


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
def test_every_def_has_a_generated_type(pkg: Package) -> None:
    missing = [name for name in _typed_defs(pkg) if not hasattr(pkg.models, name)]
    assert missing == []


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
def test_synthesized_instances_round_trip(pkg: Package) -> None:
    schema = pkg.raw_schema
    synth = Synth(schema)
    checked = 0
    failures: list[str] = []
    for name in _typed_defs(pkg):
        validator = _validator(schema, name)
        adapter: TypeAdapter[Any] = TypeAdapter(getattr(pkg.models, name))
        codec: _Codec[Any] = _Codec(getattr(pkg.models, name))
        for label, instance in synth.instances(name):
            errors = [e.message for e in validator.iter_errors(instance)]
            assert not errors, f"synthesizer produced an invalid {name} ({label}): {errors[:2]}"
            parsed = adapter.validate_python(instance)
            if _dump(adapter, parsed) != instance:
                failures.append(f"{name} {label}: {json.dumps(instance)[:200]}")
            if _encoded(codec, parsed) != instance:
                failures.append(f"{name} {label} as JSON text: {json.dumps(instance)[:200]}")
            wrong = _extras_outside_catch_alls(parsed)
            if wrong:
                failures.append(f"{name} {label}: parsed into the wrong variant at {wrong[:3]}")
            checked += 1
    assert failures == []
    assert checked > 2 * len(_typed_defs(pkg))  # minimal + maximal at least, plus variants


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
def test_every_method_payload_is_in_the_corpus(pkg: Package) -> None:
    """Each method's params and result def has synthesized instances (tested above)."""
    methods = build_method_table(pkg.raw_schema)
    synth = Synth(pkg.raw_schema)
    defs = set(_typed_defs(pkg))
    for m in methods:
        for name in filter(None, (m.params, m.result)):
            assert name in defs, (m.name, name)
            assert len(synth.instances(name)) >= 1
    bound = {(b.name, "request") for b in pkg.methods.REQUESTS} | {
        (b.name, "notification") for b in pkg.methods.NOTIFICATIONS
    }
    assert bound == {(m.name, m.kind) for m in methods}


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
def test_known_tag_with_bad_payload_is_not_taken_as_other(pkg: Package) -> None:
    """An unknown tag lands in the catch-all; a known tag with a malformed body is an error."""
    models = pkg.models
    if not hasattr(models, "OtherSessionUpdate"):
        pytest.skip("SessionUpdate is a closed union in this schema")
    adapter: TypeAdapter[Any] = TypeAdapter(models.SessionUpdate)
    other = adapter.validate_python({"sessionUpdate": EXT, "anything": [1]})
    assert type(other).__name__ == "OtherSessionUpdate"
    assert _dump(adapter, other) == {"sessionUpdate": EXT, "anything": [1]}
    with pytest.raises(ValueError, match="agent_message_chunk"):
        adapter.validate_python({"sessionUpdate": "agent_message_chunk"})


def _message_files(version: str) -> list[Path]:
    files = sorted((CORPUS / "handwritten").glob(f"{version}*.jsonl"))
    return files + sorted((CORPUS / "transcripts").glob(f"{version}_*.jsonl"))


def _def_of(pkg: Package) -> dict[tuple[str, str], str]:
    table = {}
    for m in build_method_table(pkg.raw_schema):
        table[(m.name, "params")] = m.params  # mcp/message: request and notification share it
        if m.result is not None:
            table[(m.name, "result")] = m.result
    return table


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
def test_realistic_messages_round_trip(pkg: Package) -> None:
    version = pkg.key.split("/")[0]
    files = _message_files(version)
    assert files, f"no hand-written messages for {version}"
    schema = pkg.raw_schema
    whole = jsonschema.Draft202012Validator(schema)
    defs = _def_of(pkg)
    error_adapter: TypeAdapter[Any] = TypeAdapter(pkg.models.Error)
    seen = 0
    for path in files:
        lines = read_lines(path)
        for n, line in enumerate(lines, start=1):
            errors = [e.message for e in whole.iter_errors(line["msg"])]
            assert not errors, f"{path.name}:{n} is not a valid ACP message: {errors[:1]}"
        for item in route(lines, pkg.methods, path.name):
            if item.kind == "extension":
                continue  # untyped by design: the raw JSON is handed through unchanged
            if item.kind == "error":
                assert (
                    _dump(error_adapter, error_adapter.validate_python(item.payload))
                    == item.payload
                )
                continue
            def_name = defs[(item.method, item.kind)]
            errors = [e.message for e in _validator(schema, def_name).iter_errors(item.payload)]
            assert not errors, f"{item.where}: invalid {def_name}: {errors[:1]}"
            value = item.codec.load(item.payload)
            assert item.codec.dump(value) == item.payload, item.where
            assert _encoded(item.codec, value) == item.payload, item.where
            seen += 1
    assert seen >= 10
