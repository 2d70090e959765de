"""The schema API diff (``python -m codegen diff``): one test per kind of change.

Each test edits a copy of the small hand-written ACP-shaped schema in
``apidiff_fixtures/base.json`` the way a release would, and checks the change is
found, classified (wire-breaking / python-api / wire-additive / annotation-only /
description-only) and turned into the right semver bump.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.apidiff import Bump, Category, Change, SchemaDiff, diff_paths, diff_schemas, main
from tests.codegen.schemas import require_schemas

FIXTURES = Path(__file__).parent / "apidiff_fixtures"
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / "schema" / "cache"

Schema = dict[str, Any]


def base() -> Schema:
    data: Schema = json.loads((FIXTURES / "base.json").read_text())
    return data


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def diff_after(edit: Callable[[Schema], None]) -> SchemaDiff:
    old = base()
    new = copy.deepcopy(old)
    edit(new)
    return diff_schemas(old, new)


def only(diff: SchemaDiff, category: Category | None = None) -> list[tuple[str, str, str]]:
    """(subject, action, path) of the changes, optionally of one category."""
    return [
        (c.subject, c.action, c.path)
        for c in diff.changes
        if category is None or c.category is category
    ]


def defs(schema: Schema) -> Schema:
    found: Schema = schema["$defs"]
    return found


def params_union(schema: Schema, envelope: str) -> list[Any]:
    members: list[Any] = defs(schema)[envelope]["properties"]["params"]["anyOf"][0]["anyOf"]
    return members


def result_union(schema: Schema, envelope: str) -> list[Any]:
    members: list[Any] = defs(schema)[envelope]["anyOf"][0]["properties"]["result"]["anyOf"]
    return members


# -- no change, method table ----------------------------------------------------


def test_identical_schemas_have_no_changes() -> None:
    diff = diff_after(lambda s: None)
    assert diff.changes == []
    assert diff.bump is Bump.NONE
    assert (diff.methods_old, diff.defs_old) == (5, 25)


def test_method_table_keys_on_envelope_membership_not_names() -> None:
    """A method's kind comes from the envelope that references its def (requests have an id)."""

    def add_load(s: Schema) -> None:
        defs(s)["LoadSessionRequest"] = {
            "type": "object",
            "properties": {"sessionId": ref("SessionId")},
            "required": ["sessionId"],
            "x-side": "agent",
            "x-method": "session/load",
        }
        defs(s)["LoadSessionResponse"] = {
            "type": "object",
            "properties": {},
            "x-side": "agent",
            "x-method": "session/load",
        }
        params_union(s, "ClientRequest").append(
            {"title": "LoadSessionRequest", "allOf": [ref("LoadSessionRequest")]}
        )
        result_union(s, "AgentResponse").append(
            {"title": "LoadSessionResponse", "allOf": [ref("LoadSessionResponse")]}
        )

    diff = diff_after(add_load)
    assert only(diff) == [
        ("method", "added", "session/load (request, handled by agent)"),
        ("def", "added", "LoadSessionRequest"),
        ("def", "added", "LoadSessionResponse"),
    ]
    assert diff.changes[0].detail == "LoadSessionRequest -> LoadSessionResponse"
    assert {c.category for c in diff.changes} == {Category.WIRE_ADDITIVE}
    assert diff.bump is Bump.MINOR
    assert diff.methods_new == 6


def test_method_removed_is_wire_breaking() -> None:
    def drop_cancel(s: Schema) -> None:
        params_union(s, "ClientNotification").clear()
        del defs(s)["CancelNotification"]

    diff = diff_after(drop_cancel)
    assert only(diff, Category.WIRE_BREAKING) == [
        ("method", "removed", "session/cancel (notification, handled by agent)")
    ]
    assert only(diff, Category.PYTHON_API) == [("def", "removed", "CancelNotification")]
    assert diff.bump is Bump.MAJOR


def test_root_branch_added_is_additive() -> None:
    def add_proxy(s: Schema) -> None:
        s["anyOf"].append({"title": "Proxy", "type": "object", "properties": {}})

    diff = diff_after(add_proxy)
    assert only(diff, Category.WIRE_ADDITIVE) == [("envelope", "added", "Proxy")]


def test_params_type_renamed_for_same_method_is_python_api_only() -> None:
    """x-method identity pairs the old and the new def, so the rename is not remove + add."""

    def rename(s: Schema) -> None:
        defs(s)["CancelSessionNotification"] = defs(s).pop("CancelNotification")
        params_union(s, "ClientNotification")[0] = {
            "title": "CancelSessionNotification",
            "allOf": [ref("CancelSessionNotification")],
        }

    diff = diff_after(rename)
    assert only(diff) == [
        ("method", "changed", "session/cancel (notification, handled by agent)"),
        ("def", "renamed", "CancelNotification"),
    ]
    assert {c.category for c in diff.changes} == {Category.PYTHON_API}
    assert diff.bump is Bump.MAJOR


def test_def_renamed_when_every_reference_moves_to_one_new_def() -> None:
    """v2 renamed ``AuthCapabilities`` -> ``ClientAuthCapabilities``: no method links them."""

    def rename(s: Schema) -> None:
        defs(s)["ClientImplementation"] = defs(s).pop("Implementation")
        defs(s)["InitializeRequest"]["properties"]["clientInfo"]["anyOf"][0] = ref(
            "ClientImplementation"
        )

    diff = diff_after(rename)
    assert only(diff) == [("def", "renamed", "Implementation")]
    assert diff.changes[0].detail == "-> ClientImplementation (same wire shape)"


def test_removed_def_is_not_a_rename_when_its_references_split() -> None:
    old, new = base(), base()
    for schema in (old, new):
        defs(schema)["ImageContent"]["properties"]["source"] = ref("Implementation")
    defs(new)["Author"] = defs(new)["Implementation"]
    defs(new)["Origin"] = defs(new).pop("Implementation")
    defs(new)["InitializeRequest"]["properties"]["clientInfo"]["anyOf"][0] = ref("Author")
    defs(new)["ImageContent"]["properties"]["source"] = ref("Origin")
    diff = diff_schemas(old, new)
    assert ("def", "removed", "Implementation") in only(diff, Category.PYTHON_API)
    assert ("def", "added", "Author") in only(diff, Category.WIRE_ADDITIVE)


def test_method_moving_to_another_handler_is_breaking() -> None:
    """``mcp/message`` went from ``x-side: both`` to one side per kind between releases."""
    diff = diff_after(lambda s: defs(s)["CancelNotification"].update({"x-side": "client"}))
    assert (
        Category.WIRE_BREAKING,
        "method",
        "changed",
        "session/cancel (notification)",
        "handled by agent -> client",
    ) in [(c.category, c.subject, c.action, c.path, c.detail) for c in diff.changes]
    assert not [c for c in diff.changes if c.subject == "method" and c.action != "changed"]


# -- defs and fields -----------------------------------------------------------


def test_def_added_and_removed() -> None:
    def edit(s: Schema) -> None:
        defs(s)["Cost"] = {"type": "object", "properties": {"amount": {"type": "number"}}}
        del defs(s)["Implementation"]
        defs(s)["InitializeRequest"]["properties"]["clientInfo"]["anyOf"][0] = {
            "type": "object",
            "properties": {"name": {"type": "string"}},
        }

    diff = diff_after(edit)
    assert ("def", "added", "Cost") in only(diff, Category.WIRE_ADDITIVE)
    assert ("def", "removed", "Implementation") in only(diff, Category.PYTHON_API)
    # the place that referenced the removed def carries the wire change
    assert ("type", "changed", "InitializeRequest.clientInfo[object]") in only(
        diff, Category.WIRE_BREAKING
    )


def test_optional_field_added_is_additive_required_field_added_is_breaking() -> None:
    def edit(s: Schema) -> None:
        props = defs(s)["PromptRequest"]["properties"]
        props["messageId"] = {"type": ["string", "null"]}
        props["mode"] = {"type": "string"}
        defs(s)["PromptRequest"]["required"].append("mode")

    diff = diff_after(edit)
    assert only(diff, Category.WIRE_ADDITIVE) == [("field", "added", "PromptRequest.messageId")]
    assert only(diff, Category.WIRE_BREAKING) == [("field", "added", "PromptRequest.mode")]


def test_field_removed_is_breaking() -> None:
    diff = diff_after(lambda s: defs(s)["ImageContent"]["properties"].pop("mimeType"))
    assert only(diff, Category.WIRE_BREAKING) == [("field", "removed", "ImageContent.mimeType")]


def test_optional_to_required_is_breaking() -> None:
    diff = diff_after(lambda s: defs(s)["InitializeRequest"]["required"].append("clientInfo"))
    assert only(diff) == [("field", "now-required", "InitializeRequest.clientInfo")]
    assert diff.bump is Bump.MAJOR


def test_required_to_optional_is_breaking_for_readers() -> None:
    diff = diff_after(lambda s: defs(s)["ReadTextFileResponse"]["required"].clear())
    assert only(diff, Category.WIRE_BREAKING) == [
        ("field", "now-optional", "ReadTextFileResponse.content")
    ]


def test_nullability_added_is_additive_and_removed_is_breaking() -> None:
    def edit(s: Schema) -> None:
        defs(s)["ReadTextFileRequest"]["properties"]["line"]["type"] = "integer"
        defs(s)["PromptResponse"]["properties"]["stopReason"] = {
            "anyOf": [ref("StopReason"), {"type": "null"}]
        }

    diff = diff_after(edit)
    assert only(diff, Category.WIRE_BREAKING) == [("type", "removed", "ReadTextFileRequest.line")]
    assert only(diff, Category.WIRE_ADDITIVE) == [
        ("variant", "added", "PromptResponse.stopReason[null]")
    ]


# -- enums and unions ----------------------------------------------------------


def stop_reasons(s: Schema) -> list[Any]:
    members: list[Any] = defs(s)["StopReason"]["oneOf"]
    return members


def test_enum_value_added_is_additive() -> None:
    diff = diff_after(lambda s: stop_reasons(s).append({"type": "string", "const": "refusal"}))
    assert only(diff) == [("enum-value", "added", 'StopReason["refusal"]')]
    assert diff.bump is Bump.MINOR


def test_enum_value_removed_is_breaking() -> None:
    diff = diff_after(lambda s: stop_reasons(s).pop())
    assert only(diff) == [("enum-value", "removed", 'StopReason["cancelled"]')]
    assert diff.bump is Bump.MAJOR


def test_plain_enum_keyword_values() -> None:
    old, new = base(), base()
    defs(old)["Role"] = {"type": "string", "enum": ["user", "agent"]}
    defs(new)["Role"] = {"type": "string", "enum": ["user", "assistant"]}
    diff = diff_schemas(old, new)
    assert only(diff) == [
        ("enum-value", "added", 'Role["assistant"]'),
        ("enum-value", "removed", 'Role["agent"]'),
    ]


def session_updates(s: Schema) -> list[Any]:
    members: list[Any] = defs(s)["SessionUpdate"]["oneOf"]
    return members


def test_union_variant_added_is_additive() -> None:
    def edit(s: Schema) -> None:
        session_updates(s).append(
            {
                "type": "object",
                "properties": {"sessionUpdate": {"type": "string", "const": "notice"}},
                "required": ["sessionUpdate"],
                "allOf": [ref("TextContent")],
            }
        )

    diff = diff_after(edit)
    assert only(diff) == [("variant", "added", "SessionUpdate[sessionUpdate=notice]")]
    assert diff.bump is Bump.MINOR


def test_union_variant_removed_is_breaking() -> None:
    diff = diff_after(lambda s: session_updates(s).pop())
    assert only(diff) == [("variant", "removed", "SessionUpdate[sessionUpdate=plan]")]


def test_variants_match_by_tag_not_position() -> None:
    diff = diff_after(lambda s: session_updates(s).reverse())
    assert diff.changes == []


def test_change_inside_a_variant_is_reported_at_the_variant() -> None:
    def edit(s: Schema) -> None:
        session_updates(s)[1]["properties"]["planId"] = {"type": "string"}

    diff = diff_after(edit)
    assert only(diff) == [("field", "added", "SessionUpdate[sessionUpdate=plan].planId")]


def test_inline_variant_hoisted_into_a_named_def_reports_only_real_field_changes() -> None:
    """v2 hoisted ``{outcome: cancelled}`` into ``allOf: [CancelledPermissionOutcome]``."""

    def hoist(s: Schema) -> None:
        plan = session_updates(s)[1]
        defs(s)["PlanUpdate"] = {
            "type": "object",
            "properties": {
                "entries": defs(s)["Plan"]["properties"]["entries"],
                "_meta": {"type": "object"},
            },
            "required": ["entries"],
        }
        plan["allOf"] = [ref("PlanUpdate")]

    diff = diff_after(hoist)
    assert only(diff, Category.PYTHON_API) == [
        ("type", "changed", "SessionUpdate[sessionUpdate=plan]")
    ]
    assert only(diff, Category.WIRE_ADDITIVE) == [
        ("def", "added", "PlanUpdate"),
        ("field", "added", "SessionUpdate[sessionUpdate=plan]._meta"),
    ]
    assert only(diff, Category.WIRE_BREAKING) == []
    [rebased] = [c for c in diff.changes if c.category is Category.PYTHON_API]
    assert rebased.detail == "built on Plan -> PlanUpdate"


def test_closed_union_becoming_open_is_breaking() -> None:
    def edit(s: Schema) -> None:
        defs(s)["StopReason"] = {"anyOf": [*stop_reasons(s), {"title": "other", "type": "string"}]}

    diff = diff_after(edit)
    assert only(diff, Category.WIRE_BREAKING) == [("union", "changed", "StopReason")]
    assert only(diff, Category.WIRE_ADDITIVE) == [("variant", "added", "StopReason[string]")]


def test_untagged_default_variant_matches_its_tagged_successor() -> None:
    """v1 ``AuthMethod.agent`` has no ``type``; v2 tags it: a new required field, not remove+add."""
    old, new = base(), base()
    terminal = {
        "type": "object",
        "properties": {"type": {"type": "string", "const": "terminal"}},
        "required": ["type"],
        "allOf": [ref("Implementation")],
    }
    defs(old)["AuthMethod"] = {
        "anyOf": [terminal, {"title": "agent", "allOf": [ref("TextContent")]}]
    }
    defs(new)["AuthMethod"] = {
        "anyOf": [
            terminal,
            {
                "type": "object",
                "properties": {"type": {"type": "string", "const": "agent"}},
                "required": ["type"],
                "allOf": [ref("TextContent")],
            },
        ]
    }
    diff = diff_schemas(old, new)
    assert ("field", "added", "AuthMethod[type=agent].type") in only(diff, Category.WIRE_BREAKING)
    assert not [c for c in diff.changes if c.subject == "variant"]


# -- types, constraints ----------------------------------------------------------


def test_string_hoisted_into_named_newtype_is_python_api_only() -> None:
    def edit(s: Schema) -> None:
        defs(s)["FilePath"] = {"description": "An absolute path.", "type": "string"}
        defs(s)["ReadTextFileRequest"]["properties"]["path"] = {"allOf": [ref("FilePath")]}

    diff = diff_after(edit)
    [hoisted] = [c for c in diff.changes if c.category is Category.PYTHON_API]
    assert (hoisted.path, hoisted.detail) == (
        "ReadTextFileRequest.path",
        "string -> FilePath (same wire shape)",
    )
    assert only(diff, Category.WIRE_BREAKING) == []


def test_ref_to_a_different_shape_is_wire_breaking() -> None:
    diff = diff_after(lambda s: defs(s)["ContentChunk"]["properties"].update(content=ref("Plan")))
    assert only(diff, Category.WIRE_BREAKING) == [("type", "changed", "ContentChunk.content")]


def test_format_change_is_breaking() -> None:
    def edit(s: Schema) -> None:
        defs(s)["ReadTextFileRequest"]["properties"]["line"]["format"] = "int64"

    diff = diff_after(edit)
    assert only(diff) == [("type", "changed", "ReadTextFileRequest.line")]
    assert diff.changes[0].detail == "format uint32 -> int64"


def test_constraint_tightened_is_breaking_and_loosened_is_additive() -> None:
    def edit(s: Schema) -> None:
        defs(s)["PromptRequest"]["properties"]["prompt"]["minItems"] = 1
        del defs(s)["ReadTextFileRequest"]["properties"]["line"]["minimum"]

    diff = diff_after(edit)
    assert only(diff, Category.WIRE_BREAKING) == [
        ("constraint", "tightened", "PromptRequest.prompt")
    ]
    assert only(diff, Category.WIRE_ADDITIVE) == [
        ("constraint", "loosened", "ReadTextFileRequest.line")
    ]


def test_any_value_narrowed_to_a_type_is_breaking() -> None:
    """npm 2.4.0 v2 typed ``Error.data`` (any JSON before) as ``ErrorData | null``."""
    old, new = base(), base()
    defs(old)["Error"]["properties"]["data"] = {"description": "Extra information."}
    defs(new)["Error"]["properties"]["data"] = {"anyOf": [ref("Implementation"), {"type": "null"}]}
    diff = diff_schemas(old, new)
    assert only(diff, Category.WIRE_BREAKING) == [("variant", "removed", "Error.data[any]")]
    assert only(diff, Category.WIRE_ADDITIVE) == [
        ("variant", "added", "Error.data[Implementation]"),
        ("variant", "added", "Error.data[null]"),
    ]


def test_request_id_losing_null_is_breaking() -> None:
    """npm 2.4.0 v2 dropped ``null`` from RequestId."""
    diff = diff_after(lambda s: defs(s)["RequestId"]["anyOf"].pop(0))
    assert only(diff) == [("variant", "removed", "RequestId[null]")]


# -- descriptions and annotations ------------------------------------------------


def test_description_only_change_is_a_patch() -> None:
    def edit(s: Schema) -> None:
        defs(s)["StopReason"]["description"] = "Why the agent stopped the prompt turn."

    diff = diff_after(edit)
    assert only(diff) == [("description", "changed", "StopReason")]
    assert diff.changes[0].category is Category.DESCRIPTION_ONLY
    assert diff.bump is Bump.PATCH


def test_doc_url_draft_rewrite_is_not_a_change() -> None:
    """Unstable schemas link ``/protocol/v1/draft/...``: noise, counted but not reported."""

    def edit(s: Schema) -> None:
        for name in ("SessionId", "PromptRequest"):
            node = defs(s)[name]
            node["description"] = node["description"].replace(
                "/protocol/v1/", "/protocol/v1/draft/"
            )

    diff = diff_after(edit)
    assert diff.changes == []
    assert diff.url_only_descriptions == 2


def test_annotation_only_change_is_a_patch() -> None:
    def edit(s: Schema) -> None:
        props = defs(s)["ReadTextFileRequest"]["properties"]
        props["line"]["x-deserialize-default-on-error"] = True
        props["path"]["title"] = "Path"

    diff = diff_after(edit)
    assert [(c.path, c.detail) for c in diff.changes] == [
        ("ReadTextFileRequest.path", 'title: null -> "Path"'),
        ("ReadTextFileRequest.line", "x-deserialize-default-on-error: null -> true"),
    ]
    assert {c.category for c in diff.changes} == {Category.ANNOTATION_ONLY}
    assert diff.bump is Bump.PATCH


def test_lenient_parsing_annotation_changes_are_listed_in_their_own_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``x-deserialize-*`` changes what the generated models salvage: the text output lists
    each one, added or removed, in its own section (never folded), and so does JSON."""
    changed = base()
    props = defs(changed)["ReadTextFileRequest"]["properties"]
    props["line"]["x-deserialize-default-on-error"] = True
    new = write_set(tmp_path, {"schema.json": changed}) / "schema.json"
    assert main([str(FIXTURES / "base.json"), str(new)]) == 0
    text = capsys.readouterr().out
    assert "  lenient parsing, x-deserialize-* (1): what the models salvage" in text
    assert "    + default-on-error ReadTextFileRequest.line" in text
    assert main([str(new), str(FIXTURES / "base.json"), "--json"]) == 0
    [schema] = json.loads(capsys.readouterr().out)["schemas"]
    assert schema["lenient_parsing"] == ["- default-on-error ReadTextFileRequest.line"]


def test_allof_wrapper_and_bare_ref_are_the_same_schema() -> None:
    """schemars writes ``allOf: [$ref]`` when it adds a description; no change on the wire."""

    def edit(s: Schema) -> None:
        defs(s)["CancelNotification"]["properties"]["sessionId"] = ref("SessionId")

    assert diff_after(edit).changes == []


# -- inputs, CLI, output ---------------------------------------------------------


def write_set(root: Path, schemas: dict[str, Schema]) -> Path:
    for rel, schema in schemas.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(schema))
    return root


def test_directories_pair_files_by_relative_path(tmp_path: Path) -> None:
    changed = base()
    stop_reasons(changed).append({"type": "string", "const": "refusal"})
    old = write_set(tmp_path / "old", {"v1/schema.json": base(), "v2/schema.json": base()})
    new = write_set(
        tmp_path / "new", {"v1/schema.json": changed, "v1/schema.unstable.json": base()}
    )
    report = diff_paths(old, new)
    assert [s.label for s in report.schemas] == ["v1/schema.json"]
    assert report.only_old == ["v2/schema.json"]
    assert report.only_new == ["v1/schema.unstable.json"]
    assert report.bump is Bump.MAJOR  # a whole schema file went away


def test_cli_text_output_and_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changed = base()
    session_updates(changed).pop()
    new = write_set(tmp_path, {"schema.json": changed}) / "schema.json"
    old = FIXTURES / "base.json"
    assert main([str(old), str(new)]) == 0
    text = capsys.readouterr().out
    assert "- variant removed SessionUpdate[sessionUpdate=plan]" not in text  # the mark says it
    assert "- variant SessionUpdate[sessionUpdate=plan]" in text
    assert "wire-breaking (1):" in text
    assert text.rstrip().endswith(
        "Suggested bump: MAJOR (breaking changes: bump the MAJOR version)"
    )
    assert main([str(old), str(new), "--fail-on", "major"]) == 1
    assert main([str(old), str(old), "--fail-on", "patch"]) == 0


def test_cli_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changed = base()
    stop_reasons(changed).append({"type": "string", "const": "refusal"})
    new = write_set(tmp_path, {"schema.json": changed}) / "schema.json"
    assert main([str(FIXTURES / "base.json"), str(new), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bump"] == "minor"
    [schema] = data["schemas"]
    assert schema["counts"]["wire-additive"] == 1
    assert schema["changes"] == [
        {
            "category": "wire-additive",
            "subject": "enum-value",
            "action": "added",
            "path": 'StopReason["refusal"]',
            "detail": "",
        }
    ]


def test_cli_rejects_missing_and_non_schema_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "nope"), str(FIXTURES / "base.json")]) == 2
    bogus = tmp_path / "schema.json"
    bogus.write_text("[1, 2]")
    assert main([str(bogus), str(FIXTURES / "base.json")]) == 2
    assert "not a JSON schema" in capsys.readouterr().err


def test_cli_rejects_a_file_against_a_directory(tmp_path: Path) -> None:
    write_set(tmp_path, {"v1/schema.json": base()})
    assert main([str(FIXTURES / "base.json"), str(tmp_path)]) == 2


def test_wired_into_the_codegen_cli() -> None:
    """``python -m codegen diff`` (the generator's CLI) forwards to this tool."""
    base_file = str(FIXTURES / "base.json")
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "diff", base_file, base_file, "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["bump"] == "none"


def test_output_is_deterministic() -> None:
    def edit(s: Schema) -> None:
        session_updates(s).pop()
        stop_reasons(s).append({"type": "string", "const": "refusal"})
        defs(s)["Cost"] = {"type": "object"}

    first, second = diff_after(edit), diff_after(edit)
    assert first.changes == second.changes
    assert all(isinstance(c, Change) for c in first.changes)


# -- the real schemas -------------------------------------------------------------


def cached_release(version: str) -> Path:
    require_schemas(version)
    return CACHE / version


def test_real_bump_npm_2_0_0_to_2_4_0() -> None:
    """Smoke test on the locked releases; the expectations are from the research notes §2.2."""
    report = diff_paths(cached_release("2.0.0"), cached_release("2.4.0"))
    by_label = {s.label: s for s in report.schemas}
    assert sorted(by_label) == [
        "v1/schema.json",
        "v1/schema.unstable.json",
        "v2/schema.json",
        "v2/schema.unstable.json",
    ]
    assert report.bump is Bump.MAJOR
    # v1 stable: doc and annotation changes only (notes: 14 annotation-only)
    v1 = by_label["v1/schema.json"]
    assert v1.bump is Bump.PATCH
    assert v1.count(Category.ANNOTATION_ONLY) == 14
    # v2 stable: two new methods, RequestId lost null, PromptRequest.prompt got minItems
    v2 = only(by_label["v2/schema.json"])
    assert ("method", "added", "terminal/cancel (request, handled by agent)") in v2
    assert ("method", "added", "tool_call/cancel (request, handled by agent)") in v2
    assert ("variant", "removed", "RequestId[null]") in v2
    assert ("constraint", "tightened", "PromptRequest.prompt") in v2
    assert ("field", "now-required", "ElicitationSchema.type") in v2
    # v1 unstable: proxy side and its methods appear
    v1u = only(by_label["v1/schema.unstable.json"], Category.WIRE_ADDITIVE)
    assert ("envelope", "added", "Proxy") in v1u
    assert ("method", "added", "proxy/initialize (request, handled by proxy)") in v1u
