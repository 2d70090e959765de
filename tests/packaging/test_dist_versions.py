"""Versions and requirement ranges are derived from the repository's own files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from distributions import versions
from distributions.catalog import load_catalog, runtime_of
from distributions.resolve import resolve_all


def _lock(tmp_path: Path, v1: dict[str, Any], v2: dict[str, Any] | None = None) -> Path:
    files: dict[str, Any] = {"v1": v1}
    if v2 is not None:
        files["v2"] = v2
    lock = {"current": "2.4.0", "releases": {"2.4.0": {"files": files}}}
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(lock), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("runtime", "expected"),
    [("0.1.0", ">=0.1.0,<0.2"), ("0.3.2", ">=0.3.2,<0.4"), ("1.2.0", ">=1.2.0,<2")],
)
def test_generated_packages_accept_runtimes_up_to_the_next_breaking_release(
    runtime: str, expected: str
) -> None:
    assert versions.compatible_range(Version(runtime)) == expected


def test_schema_release_comes_from_an_explicit_lock_field(tmp_path: Path) -> None:
    lock = _lock(tmp_path, {"schema_release": "1.25.0", "github_asset": {"tag": None}})
    assert versions.schema_release("v1", lock) == "1.25.0"


def test_schema_release_falls_back_to_the_release_tag(tmp_path: Path) -> None:
    lock = _lock(tmp_path, {"github_asset": {"tag": "schema-v2.0.0-alpha.3"}})
    assert versions.schema_release("v1", lock) == "2.0.0-alpha.3"


def test_the_origin_says_whether_a_tag_or_the_npm_bundle_numbers_the_package(
    tmp_path: Path,
) -> None:
    tagged = _lock(tmp_path, {"github_asset": {"tag": "schema-v1.25.0"}})
    assert versions.locked_schema_release("v1", tagged) == (
        "1.25.0",
        "schema 1.25.0 (tag schema-v1.25.0)",
    )
    untagged = json.loads(tagged.read_text())
    untagged["releases"]["2.4.0"]["npm"] = {"version": "2.4.0"}
    untagged["releases"]["2.4.0"]["files"]["v1"]["github_asset"]["tag"] = None
    tagged.write_text(json.dumps(untagged), encoding="utf-8")
    release, origin = versions.locked_schema_release("v1", tagged)
    assert (release, origin) == ("2.4.0", "npm bundle 2.4.0, no schema tag matches")


@pytest.mark.parametrize("unstable_tag", ["schema-v1.24.0", None])
def test_stable_and_unstable_files_of_one_package_must_match_one_tag(
    tmp_path: Path, unstable_tag: str | None
) -> None:
    """The package ships both files, so it is numbered after a tag only if both match it."""
    lock = _lock(tmp_path, {"github_asset": {"tag": "schema-v1.25.0"}})
    raw = json.loads(lock.read_text())
    raw["releases"]["2.4.0"]["files"]["v1/unstable"] = {"github_asset": {"tag": unstable_tag}}
    lock.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(versions.VersionSourceError, match="cannot be numbered after either"):
        versions.schema_release("v1", lock)
    raw["releases"]["2.4.0"]["files"]["v1/unstable"]["github_asset"]["tag"] = "schema-v1.25.0"
    lock.write_text(json.dumps(raw), encoding="utf-8")
    assert versions.schema_release("v1", lock) == "1.25.0"


def test_the_real_lock_says_for_every_file_which_tag_matched_or_what_was_compared() -> None:
    """Where no tag matches, the lock says so (tag_search), and the package follows the
    npm bundle; where one does, the package follows it."""
    lock = json.loads(versions.SCHEMA_LOCK.read_text(encoding="utf-8"))
    current = lock["releases"][lock["current"]]
    for entry in current["files"].values():
        asset = entry["github_asset"]
        if asset["tag"] is None:
            assert asset["tag_search"]["result"] == "no tag matches"
            assert asset["tag_search"]["nearest"]
        else:
            assert asset["tag_search"]["result"] == f"matches {asset['tag']}"
    for dist in load_catalog():
        if dist.protocol is None:
            continue
        tag = current["files"][dist.protocol]["github_asset"]["tag"]
        expected = tag.removeprefix("schema-v") if tag else current["npm"]["version"]
        assert versions.schema_release(dist.protocol) == expected


def test_a_lock_without_the_release_is_refused_rather_than_guessed(tmp_path: Path) -> None:
    lock = _lock(tmp_path, {"github_asset": {"tag": None, "tag_hint": ">= schema-v1.25.0"}})
    with pytest.raises(versions.VersionSourceError, match="names no schema release"):
        versions.schema_release("v1", lock)
    with pytest.raises(versions.VersionSourceError, match="locks no schema file for 'v9'"):
        versions.schema_release("v9", lock)


@pytest.mark.parametrize(
    ("release", "post", "expected"),
    [("1.25.0", 0, "1.25.0"), ("2.0.0-alpha.3", 0, "2.0.0a3"), ("1.25.0", 2, "1.25.0.post2")],
)
def test_package_version_follows_the_schema_release_in_pep440_spelling(
    release: str, post: int, expected: str
) -> None:
    assert str(versions.generated_version(release, post)) == expected


def test_requirements_are_picked_from_the_root_project_by_normalized_name() -> None:
    project = {"dependencies": ["pydantic>=2.12,<3", "typing_extensions>=4.12"]}
    assert versions.root_requirements(project, ["Typing-Extensions", "pydantic"]) == [
        "typing_extensions>=4.12",
        "pydantic>=2.12,<3",
    ]
    with pytest.raises(versions.VersionSourceError, match="'httpx' is not a dependency"):
        versions.root_requirements(project, ["httpx"])


def test_catalog_resolves_runtime_and_generated_packages_consistently(tmp_path: Path) -> None:
    """The repository's real catalog and pyproject, with a lock that names both releases."""
    lock = _lock(
        tmp_path,
        {"schema_release": "1.25.0"},
        {"github_asset": {"tag": "schema-v2.0.0-alpha.3"}},
    )
    dists = load_catalog()
    resolved = {r.dist.key: r for r in resolve_all(dists, lock=lock)}
    project = versions.root_project()
    runtime = resolved[runtime_of(dists).key]
    assert runtime.version == project["version"]
    assert runtime.dist.name == "acp-typed-runtime"
    post = {d.key: f".post{d.post}" if d.post else "" for d in dists}
    assert resolved["v1"].version == f"1.25.0{post['v1']}"
    assert resolved["v2"].version == f"2.0.0a3{post['v2']}"
    for key in ("v1", "v2"):
        assert resolved[key].dependencies[0] == f"acp-typed-runtime{runtime.runtime_range}"
        assert resolved[key].requires_python == project["requires-python"]


def test_resolving_only_the_runtime_needs_no_schema_lock(tmp_path: Path) -> None:
    missing_lock = tmp_path / "absent.json"
    [runtime] = resolve_all(load_catalog(), only=["runtime"], lock=missing_lock)
    assert runtime.schema_release == ""


def test_the_catalogs_extras_are_the_root_projects_groups(tmp_path: Path) -> None:
    lock = _lock(tmp_path, {"schema_release": "1.25.0"}, {"schema_release": "2.0.0"})
    dists = load_catalog()
    project = versions.root_project()
    runtime = next(r for r in resolve_all(dists, lock=lock) if r.dist.key == "runtime")
    assert runtime.extras
    for extra, requirements in runtime.extras.items():
        assert requirements == project["optional-dependencies"][extra]
    with pytest.raises(versions.VersionSourceError, match="no optional-dependencies group"):
        versions.root_extras(project, ["no-such-extra"])
