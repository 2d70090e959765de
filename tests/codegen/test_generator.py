"""The generator's pieces on small inputs, and the whole pipeline against the committed output."""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import types
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import codegen.lock as lock_module
from codegen import pipeline
from codegen.__main__ import main as cli_main
from codegen.fetch import fetch, unpack_verified
from codegen.lock import LockedFile, LockedRelease, LockError, read_verified
from codegen.method_names import METHOD_NAMES, MethodNameError, python_name
from codegen.method_table import build_method_table
from codegen.postprocess import postprocess
from codegen.preprocess import OpenUnion, preprocess
from codegen.render import docstring
from tests.codegen.schemas import require_schemas

# -- method table ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "py_name"),
    [
        ("session/prompt", "prompt"),
        ("session/new", "new_session"),
        ("session/cancel", "cancel"),
        ("session/update", "session_update"),
        ("fs/read_text_file", "read_text_file"),
        ("$/cancel_request", "cancel_request"),
        ("document/didOpen", "document_did_open"),  # not in the table: its wire name, snake_case
    ],
)
def test_python_name(method: str, py_name: str) -> None:
    assert python_name(method) == py_name


def _envelope_schema(defs: dict[str, Any]) -> dict[str, Any]:
    """A miniature ACP schema: a request, its result, and mcp/message as request + notification."""
    ref = lambda name: {"allOf": [{"$ref": f"#/$defs/{name}"}]}  # noqa: E731
    defs = {
        "AgentRequest": {
            "properties": {
                "id": {},
                "method": {"type": "string"},
                "params": {"anyOf": [ref("PingRequest"), ref("MsgRequest")]},
            }
        },
        "AgentResponse": {
            "anyOf": [
                {
                    "properties": {
                        "id": {},
                        "result": {"anyOf": [ref("PingResponse"), ref("MsgResponse")]},
                    }
                }
            ]
        },
        "AgentNotification": {
            "properties": {
                "method": {"type": "string"},
                "params": {"anyOf": [ref("MsgNotification")]},
            }
        },
        **defs,
    }
    return {
        "anyOf": [
            {
                "title": "Client",
                "anyOf": [ref("AgentRequest"), ref("AgentResponse"), ref("AgentNotification")],
            }
        ],
        "$defs": defs,
    }


def _method_defs() -> dict[str, Any]:
    obj = lambda method, side: {"type": "object", "x-method": method, "x-side": side}  # noqa: E731
    return {
        "PingRequest": obj("ping", "agent"),
        "PingResponse": obj("ping", "agent"),
        "MsgRequest": obj("mcp/message", "agent"),
        "MsgResponse": obj("mcp/message", "agent"),
        "MsgNotification": obj("mcp/message", "agent"),
    }


def test_method_table_links_by_envelope_role_and_disambiguates() -> None:
    table = build_method_table(_envelope_schema(_method_defs()))
    by_py = {m.py_name: m for m in table}
    assert set(by_py) == {"ping", "mcp_message", "mcp_message_notification"}
    assert by_py["ping"].result == "PingResponse"
    assert by_py["mcp_message"].kind == "request"
    assert by_py["mcp_message_notification"].params == "MsgNotification"
    assert by_py["mcp_message_notification"].result is None
    assert {m.const_name for m in table} == {"PING", "MCP_MESSAGE", "MCP_MESSAGE_NOTIFICATION"}


def test_a_request_and_a_notification_of_different_sides_share_the_python_name() -> None:
    """``mcp/message``: a request the client handles, a notification the agent handles."""
    defs = _method_defs()
    defs["MsgRequest"]["x-side"] = defs["MsgResponse"]["x-side"] = "client"
    table = build_method_table(_envelope_schema(defs))
    names = {(m.side, m.kind): (m.py_name, m.const_name) for m in table if m.name == "mcp/message"}
    assert names == {
        ("client", "request"): ("mcp_message", "MCP_MESSAGE"),
        ("agent", "notification"): ("mcp_message", "MCP_MESSAGE_NOTIFICATION"),
    }


def test_two_methods_of_one_side_with_one_python_name_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(METHOD_NAMES, "ping", "mcp_message")  # type: ignore[index]
    with pytest.raises(
        MethodNameError, match=r"agent side collide: mcp/message and ping both map to 'mcp_message'"
    ):
        build_method_table(_envelope_schema(_method_defs()))


@pytest.mark.parametrize("taken", ["attach", "ext_method", "ext_notification", "peer"])
def test_a_method_named_as_a_class_attribute_is_refused(
    monkeypatch: pytest.MonkeyPatch, taken: str
) -> None:
    monkeypatch.setitem(METHOD_NAMES, "ping", taken)  # type: ignore[index]
    with pytest.raises(MethodNameError, match=rf"ping -> '{taken}' is a handler-class or facade"):
        build_method_table(_envelope_schema(_method_defs()))


def test_a_method_named_cancel_request_collides_with_the_runtime_s() -> None:
    defs = _method_defs()
    defs["CancelRequestNotification"] = {
        "type": "object",
        "x-method": "$/cancel_request",
        "x-side": "protocol",
    }
    defs["PingRequest"]["x-method"] = defs["PingResponse"]["x-method"] = "cancel_request"
    schema = _envelope_schema(defs)
    params = schema["$defs"]["AgentNotification"]["properties"]["params"]["anyOf"]
    params.append({"allOf": [{"$ref": "#/$defs/CancelRequestNotification"}]})
    with pytest.raises(MethodNameError, match="both map to 'cancel_request'"):
        build_method_table(schema)


def test_the_committed_table_has_no_collision_in_any_package() -> None:
    """Every locked schema builds (build_method_table checks each side) with the table's names."""
    for variant in pipeline.variants():
        table = build_method_table(json.loads(lock_module.read_verified(variant.locked)))
        unknown = sorted({m.name for m in table} - set(METHOD_NAMES))
        assert unknown == [], f"{variant.key}: methods the name table does not know: {unknown}"


def test_method_table_refuses_a_request_without_result() -> None:
    defs = _method_defs()
    del defs["PingResponse"]["x-method"]
    with pytest.raises(ValueError, match="no result def for request ping"):
        build_method_table(_envelope_schema(defs))


# -- preprocess -----------------------------------------------------------------------


def _tagged(tag: str, value: str, target: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {tag: {"type": "string", "const": value}},
        "required": [tag],
        "allOf": [{"$ref": f"#/$defs/{target}"}],
    }


def test_preprocess_names_variants_and_splits_open_unions() -> None:
    other = {
        "title": "other",
        "type": "object",
        "properties": {"type": {"type": "string"}},
        "required": ["type"],
        "not": {"anyOf": []},
    }
    schema = {
        "$defs": {
            "Text": {"type": "object", "properties": {"text": {"type": "string"}}},
            "Image": {"type": "object", "properties": {"data": {"type": "string"}}},
            "Closed": {
                "oneOf": [_tagged("type", "text", "Text"), _tagged("type", "image", "Image")]
            },
            "Open": {
                "anyOf": [_tagged("type", "text", "Text"), _tagged("type", "image", "Image"), other]
            },
            "WithDefault": {
                "anyOf": [
                    _tagged("type", "image", "Image"),
                    {"title": "plain", "allOf": [{"$ref": "#/$defs/Text"}]},
                ]
            },
        }
    }
    prepared = preprocess(schema)
    defs = prepared.schema["$defs"]
    assert [v["title"] for v in defs["Closed"]["oneOf"]] == ["TextClosed", "ImageClosed"]
    assert defs["Closed"]["discriminator"] == {"propertyName": "type"}
    assert defs["Open"]["anyOf"] == [{"$ref": "#/$defs/OpenKnown"}, {"$ref": "#/$defs/OtherOpen"}]
    assert defs["OpenKnown"]["discriminator"] == {"propertyName": "type"}
    assert "not" not in defs["OtherOpen"]
    assert defs["WithDefault"]["anyOf"][1] == {"$ref": "#/$defs/Text"}
    assert prepared.open_unions == [OpenUnion("Open", "type", ("image", "text"), "OtherOpen")]
    assert prepared.ordered_unions == ["Open", "WithDefault"]
    assert "title" not in json.dumps(defs["Text"])
    assert schema["$defs"]["Closed"]["oneOf"][0].get("title") is None  # input untouched


def test_preprocess_hoists_a_tagged_union_nested_in_a_variant() -> None:
    schema = {
        "$defs": {
            "Run": {"type": "object", "properties": {"pid": {"type": "integer"}}},
            "Idle": {"type": "object", "properties": {"why": {"type": "string"}}},
            "State": {
                "anyOf": [_tagged("state", "running", "Run"), _tagged("state", "idle", "Idle")]
            },
            "Update": {
                "oneOf": [_tagged("kind", "state", "State"), _tagged("kind", "text", "Run")]
            },
        }
    }
    defs = preprocess(schema).schema["$defs"]
    assert {"$ref": "#/$defs/StateUpdate"} in defs["Update"]["oneOf"]
    hoisted = defs["StateUpdate"]["oneOf"]
    assert [v["title"] for v in hoisted] == ["RunningStateUpdate", "IdleStateUpdate"]
    assert all(v["properties"]["kind"]["const"] == "state" for v in hoisted)
    assert defs["StateUpdate"]["discriminator"] == {"propertyName": "state"}


@pytest.mark.parametrize("inner_first", [True, False])
def test_preprocess_hoisted_variants_carry_every_outer_tag_in_any_def_order(
    inner_first: bool,
) -> None:
    """v2/unstable lists ``StateUpdate`` before ``SessionUpdate``: the idle variants inside
    ``state_update`` must still get the ``sessionUpdate`` tag, or it is not discriminated."""
    run = {"type": "object", "properties": {"pid": {"type": "integer"}}}
    inner = {
        "Run": run,
        "Why": {"oneOf": [_tagged("reason", "done", "Run"), _tagged("reason", "stop", "Run")]},
        "State": {"anyOf": [_tagged("state", "running", "Run"), _tagged("state", "idle", "Why")]},
    }
    outer = {
        "Update": {"oneOf": [_tagged("kind", "state", "State"), _tagged("kind", "text", "Run")]}
    }
    defs_in = {**inner, **outer} if inner_first else {**outer, **inner}
    defs = preprocess({"$defs": defs_in}).schema["$defs"]
    assert {"$ref": "#/$defs/StateUpdate"} in defs["Update"]["oneOf"]
    assert {"$ref": "#/$defs/IdleStateUpdate"} in defs["StateUpdate"]["oneOf"]
    idle = defs["IdleStateUpdate"]
    assert idle["discriminator"] == {"propertyName": "reason"}
    assert [v["title"] for v in idle["oneOf"]] == ["DoneIdleStateUpdate", "StopIdleStateUpdate"]
    for variant in idle["oneOf"]:
        consts = {k: p["const"] for k, p in variant["properties"].items() if "const" in p}
        assert consts == {"kind": "state", "state": "idle", "reason": variant["title"][:4].lower()}


def test_preprocess_marks_uri_and_not_null_properties_and_splits_nullable_maps() -> None:
    """The property passes: ``format: uri`` strings and optional arrays and maps are
    marked (not a required one, nothing in a ``default`` value that looks like a schema), and a
    nullable map of typed values becomes ``anyOf`` of the map and ``null``."""
    link = {
        "type": "object",
        "required": ["uri"],
        "properties": {
            "uri": {"type": "string", "format": "uri"},
            "alt": {"type": ["string", "null"], "format": "uri"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
            "shape": {"type": "object", "default": {"properties": {"x": {"format": "uri"}}}},
        },
    }
    defs = preprocess({"$defs": {"Link": link}}).schema["$defs"]
    props = defs["Link"]["properties"]
    assert props["uri"]["x-acp-uri"] and props["alt"]["x-acp-uri"]
    assert props["tags"]["x-acp-not-null"] and "x-acp-not-null" not in props["uri"]
    assert props["shape"]["default"] == {"properties": {"x": {"format": "uri"}}}  # a value
    assert props["meta"]["anyOf"] == [
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "null"},
    ]


@pytest.mark.parametrize(
    "misplaced",
    [
        {"type": "array", "items": {"type": "string", "format": "uri"}},
        {"anyOf": [{"type": "string", "format": "uri"}, {"type": "integer"}]},
        {"type": "integer", "format": "uri"},
    ],
)
def test_preprocess_refuses_format_uri_where_no_model_could_check_it(
    misplaced: dict[str, object],
) -> None:
    schema = {"$defs": {"Link": {"type": "object", "properties": {"uri": misplaced}}}}
    with pytest.raises(ValueError, match="format: uri outside a string property"):
        preprocess(schema)


# -- postprocess ----------------------------------------------------------------------

DCG_LIKE = """# generated by datamodel-codegen:
#   filename:  schema.json

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeAliasType


class Caps(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
    )
    load_session: Annotated[bool, Field(alias="loadSession")] = False
    amount: float
    ratio: int | float | None = None
    items: Annotated[list[str], Field(validate_default=True)] = []


class Holder(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
    )
    caps: Annotated[Caps, Field(alias="capsField", validate_default=True)] = {
        "loadSession": True,
        "amount": 2,
    }


class OtherThing(BaseModel):
    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
    )
    kind_tag: Annotated[str, Field(alias="kindTag")]


Thing = TypeAliasType("Thing", Holder | OtherThing)
"""


def test_postprocess_rewrites_aliases_numbers_defaults_and_guards() -> None:
    out = postprocess(
        DCG_LIKE, "# header\n", [OpenUnion("Thing", "kindTag", ("a", "b"), "OtherThing")], ["Thing"]
    )
    ast.parse(out)
    assert out.startswith("# header\n")
    assert not re.search(r"[(, ]alias=", out)
    assert 'validation_alias="loadSession", serialization_alias="loadSession"' in out
    assert "amount: int | float\n" in out
    assert "ratio: int | float | None" in out  # already int-capable: unchanged
    assert "Field(default_factory=lambda: list[str]())" in out
    assert "Field(default_factory=lambda: Caps.model_validate({" in out
    assert 'AfterValidator(unknown_tag(frozenset({"a", "b"})))' in out
    assert 'serialization_alias="kindTag"' in out  # the guard keeps the alias
    assert 'Field(union_mode="left_to_right")' in out
    assert "model_config" not in out  # the runtime's AcpModel base carries the config
    assert "from acp_runtime.codegen_support import AcpModel as AcpModel, unknown_tag\n" in out
    assert "class Caps(AcpModel):" in out


def test_postprocessed_module_behaves() -> None:
    out = postprocess(
        DCG_LIKE, "", [OpenUnion("Thing", "kindTag", ("a", "b"), "OtherThing")], ["Thing"]
    )
    module = types.ModuleType("generated_under_test")
    sys.modules[module.__name__] = module  # pydantic resolves annotations through sys.modules
    try:
        exec(compile(out, "<generated>", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    namespace = module.__dict__
    caps = namespace["Caps"](load_session=True, amount=1)
    assert caps.model_dump(by_alias=True, exclude_unset=True) == {"loadSession": True, "amount": 1}
    assert namespace["Holder"]().caps.load_session is True
    other = namespace["OtherThing"].model_validate({"kindTag": "_x", "extra": 1})
    assert other.model_dump(by_alias=True, exclude_unset=True) == {"kindTag": "_x", "extra": 1}
    with pytest.raises(ValueError, match="known tag 'a'"):
        namespace["OtherThing"].model_validate({"kindTag": "a"})


@pytest.mark.parametrize(
    "text", ["one line", 'has """ quotes', "back\\slash", "two\n\nparagraphs", ""]
)
def test_docstring_is_valid_python(text: str) -> None:
    source = f"def f():\n    {docstring(text, 4)}\n"
    assert ast.get_docstring(ast.parse(source).body[0]) == text.strip()  # type: ignore[arg-type]


# -- lock and fetch -------------------------------------------------------------------


def _tarball(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fake_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[LockedRelease, Path]:
    monkeypatch.setattr(lock_module, "CACHE_DIR", tmp_path / "cache")
    schema = b'{"$defs": {}}'
    blob = _tarball({"package/schema/v1/schema.json": schema})
    tarball = tmp_path / "sdk.tgz"
    tarball.write_bytes(blob)
    locked = LockedFile("9.9.9", "v1", "package/schema/v1/schema.json", _sha(schema))
    return LockedRelease("9.9.9", "@example/sdk", _sha(blob), {"v1": locked}), tarball


def test_fetch_unpacks_verified_files(fake_release: tuple[LockedRelease, Path]) -> None:
    release, tarball = fake_release
    [path] = fetch(release, tarball)
    assert path.read_bytes() == b'{"$defs": {}}'
    assert read_verified(release.files["v1"]) == b'{"$defs": {}}'


def test_fetch_refuses_a_tarball_with_another_hash(
    fake_release: tuple[LockedRelease, Path],
) -> None:
    release, tarball = fake_release
    tarball.write_bytes(_tarball({"package/schema/v1/schema.json": b"{}"}))
    with pytest.raises(LockError, match=f"lock says {release.tarball_sha256}, downloaded"):
        unpack_verified(release, tarball)
    assert not release.files["v1"].cache_path.exists()


def test_fetch_refuses_a_schema_file_with_another_hash(
    fake_release: tuple[LockedRelease, Path],
) -> None:
    release, tarball = fake_release
    bad = LockedFile("9.9.9", "v1", "package/schema/v1/schema.json", "0" * 64)
    release = LockedRelease(release.version, release.package, release.tarball_sha256, {"v1": bad})
    with pytest.raises(LockError, match="sha256 mismatch for v1"):
        unpack_verified(release, tarball)
    assert not bad.cache_path.exists()


def test_cached_file_tampering_is_refused(fake_release: tuple[LockedRelease, Path]) -> None:
    release, tarball = fake_release
    [path] = fetch(release, tarball)
    path.write_bytes(b'{"$defs": {"Evil": {}}}')
    with pytest.raises(LockError, match="sha256 mismatch"):
        read_verified(release.files["v1"])


def test_the_lock_names_four_files_per_release_with_sources() -> None:
    raw = json.loads(lock_module.LOCK_PATH.read_text())
    assert raw["current"] in raw["releases"] and len(raw["releases"]) >= 2
    for release in raw["releases"].values():
        assert release["npm"]["package"] == "@agentclientprotocol/sdk"
        assert set(release["files"]) == {"v1", "v1/unstable", "v2", "v2/unstable"}
        for entry in release["files"].values():
            assert len(entry["sha256"]) == 64
            assert (
                "agentclientprotocol/agent-client-protocol" in entry["github_asset"]["url_template"]
            )


# -- the whole pipeline ---------------------------------------------------------------


def _generate_v1() -> dict[str, str]:
    """v1 and v1.unstable (generated together: they share definitions)."""
    by_key = {v.key: v for v in pipeline.variants()}
    require_schemas()
    return pipeline.generate_version(by_key["v1"], by_key["v1/unstable"])


@cache
def _fresh_v1() -> dict[str, str]:
    return _generate_v1()


def test_generation_is_deterministic_and_matches_the_committed_v1() -> None:
    first = _fresh_v1()
    assert _generate_v1() == first  # same input, same bytes
    committed = pipeline.existing_files()
    assert {p: committed.get(p) for p in first} == first, "run `python -m codegen generate`"


def test_every_generated_file_has_the_header() -> None:
    for path, text in _fresh_v1().items():
        if path.endswith(".py"):
            assert text.startswith("# Generated by `python -m codegen generate` from "), path
            assert "sha256 " in text.splitlines()[1], path


def test_check_reports_changed_missing_and_stale_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = _fresh_v1()
    root = tmp_path / "src"
    pipeline.write(fresh, root)
    assert pipeline.differences(fresh, root) == []
    models = root / "acp_generated/v1/models.py"
    models.write_text(models.read_text() + "# hand edit\n")
    (root / "acp_generated/v1/py.typed").unlink()
    (root / "acp_generated/v1/stale.py").write_text("")
    assert pipeline.differences(fresh, root) == [
        "acp_generated/v1/models.py",
        "acp_generated/v1/py.typed",
        "acp_generated/v1/stale.py",
    ]
    monkeypatch.setattr(pipeline, "OUTPUT_ROOT", root)
    monkeypatch.setattr(pipeline, "generate_all", lambda release=None: fresh)
    assert cli_main(["check"]) == 1
    assert cli_main(["generate"]) == 0
    assert cli_main(["check"]) == 0
    assert not (root / "acp_generated/v1/stale.py").exists()


@pytest.mark.slow
def test_full_generation_twice_is_byte_identical_and_committed(tmp_path: Path) -> None:
    first = pipeline.generate_all()
    assert pipeline.generate_all() == first
    assert pipeline.differences(first) == []


def test_cli_diff_defaults_to_older_locked_release_against_current(
    capsys: pytest.CaptureFixture[str],
) -> None:
    require_schemas("all")
    current, releases = lock_module.load_lock()
    assert cli_main(["diff", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    older = next(v for v in releases if v != current)
    assert report["schemas"][0]["old_path"].endswith(f"{older}/v1/schema.json")
    assert report["schemas"][0]["new_path"].endswith(f"{current}/v1/schema.json")


@pytest.mark.slow
def test_older_locked_release_generates_and_round_trips(tmp_path: Path) -> None:
    """The pipeline is not tuned to one release: 2.0.0's schemas generate, import, round-trip."""
    current, releases = lock_module.load_lock()
    older = next(v for v in releases if v != current)
    require_schemas(older)
    pipeline.write(pipeline.generate_all(older), tmp_path)
    repo = Path(__file__).resolve().parents[2]
    script = f"""
import json, sys
sys.path[:0] = [{str(tmp_path)!r}, {str(repo)!r}]
import importlib
from pydantic import TypeAdapter
from tests.corpus.synth import Synth
from codegen.lock import load_lock
_, releases = load_lock()
checked = 0
for key in ("v1", "v1/unstable", "v2", "v2/unstable"):
    models = importlib.import_module("acp_generated." + key.replace("/", ".") + ".models")
    assert models.__file__.startswith({str(tmp_path)!r}), models.__file__
    for helper in ("builders", "remote"):  # derived from the models: they follow the release
        importlib.import_module("acp_generated." + key.replace("/", ".") + "." + helper)
    schema = json.loads(releases[{older!r}].files[key].cache_path.read_text())
    synth = Synth(schema)
    for name in schema["$defs"]:
        if not hasattr(models, name):
            continue
        adapter = TypeAdapter(getattr(models, name))
        for label, instance in synth.instances(name):
            parsed = adapter.validate_python(instance)
            dumped = adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True)
            assert dumped == instance, (key, name, label)
            checked += 1
print(checked)
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout) > 1000
