"""Finding the spec release tag of a locked schema file by its bytes, in a git repository."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from distributions import schema_tags

V1_OLD = b'{\n  "title": "v1",\n  "$defs": {}\n}\n'
V1_NEW = b'{\n  "title": "v1",\n  "$defs": {"A": {}}\n}\n'
UNSTABLE_UNTAGGED = b'{\n  "title": "v1 unstable",\n  "$defs": {"A": {}, "B": {}}\n}\n'


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def _commit_and_tag(repo: Path, files: dict[str, bytes], tag: str) -> None:
    for path, data in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(data)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", tag)
    _git(repo, "tag", tag)


def _spec_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "spec"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    unstable = b'{\n  "title": "v1 unstable"\n}\n'
    _commit_and_tag(
        repo,
        {"schema/v1/schema.json": V1_OLD, "schema/v1/schema.unstable.json": unstable},
        "schema-v1.9.0",
    )
    _commit_and_tag(repo, {"schema/v1/schema.json": V1_NEW}, "schema-v1.10.0")
    return repo


def _locked(tmp_path: Path, files: dict[str, tuple[str, bytes]]) -> tuple[Path, Path]:
    cache = tmp_path / "cache"
    entries = {}
    for key, (name, data) in files.items():
        target = cache / "2.4.0" / key.split("/")[0] / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        entries[key] = {
            "path": f"package/schema/v1/{name}",
            "sha256": hashlib.sha256(data).hexdigest(),
            "github_asset": {"tag": None},
        }
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps({"current": "2.4.0", "releases": {"2.4.0": {"files": entries}}}))
    return lock, cache


def test_a_file_is_matched_to_the_tag_holding_its_exact_bytes_or_to_none(tmp_path: Path) -> None:
    repo = _spec_repo(tmp_path)
    lock, cache = _locked(
        tmp_path,
        {
            "v1": ("schema.json", V1_NEW),
            "v1/unstable": ("schema.unstable.json", UNSTABLE_UNTAGGED),
        },
    )
    results = {r.key: r for r in schema_tags.search(repo, lock, cache)}
    # Tag order is by release, not by name: 1.10.0 comes after 1.9.0.
    assert results["v1"].compared == ("schema-v1.9.0", "schema-v1.10.0")
    assert results["v1"].tag == "schema-v1.10.0"
    assert results["v1"].differing_lines == 0
    assert results["v1/unstable"].tag is None
    assert results["v1/unstable"].nearest == "schema-v1.10.0"  # the same file at both: newest
    assert results["v1/unstable"].differing_lines > 0

    schema_tags.write(list(results.values()), lock)
    files = json.loads(lock.read_text())["releases"]["2.4.0"]["files"]
    assert files["v1"]["github_asset"]["tag"] == "schema-v1.10.0"
    assert files["v1"]["github_asset"]["tag_search"]["result"] == "matches schema-v1.10.0"
    search = files["v1/unstable"]["github_asset"]["tag_search"]
    assert files["v1/unstable"]["github_asset"]["tag"] is None
    assert search["result"] == "no tag matches"
    assert search["nearest"].startswith("schema-v1.10.0 (")
    assert search["mirror_head"].startswith("main ")


def test_spec_paths_follow_the_lock_keys() -> None:
    assert schema_tags.spec_path("v2") == "schema/v2/schema.json"
    assert schema_tags.spec_path("v2/unstable") == "schema/v2/schema.unstable.json"
