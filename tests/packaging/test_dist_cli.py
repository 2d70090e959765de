"""``python -m distributions``: what it prints and how it fails, without building."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from distributions.__main__ import main
from distributions.catalog import load_catalog
from distributions.versions import root_project


def _lock(tmp_path: Path, v1: dict[str, str], v2: dict[str, str]) -> Path:
    files = {"v1": v1, "v2": v2}
    path = tmp_path / "lock.json"
    path.write_text(json.dumps({"current": "9.9.9", "releases": {"9.9.9": {"files": files}}}))
    return path


def test_list_prints_each_distribution_with_its_derived_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = _lock(tmp_path, {"schema_release": "1.30.1"}, {"schema_release": "2.0.0-beta.1"})
    assert main(["--list", "--lock", str(lock), "--out", str(tmp_path / "dist")]) == 0
    output = capsys.readouterr().out.splitlines()
    lines = [line for line in output if not line.startswith("  ")]
    assert [line for line in output if line.startswith("  ")] == [
        f"  [{extra}] requires {', '.join(group)}"
        for extra, group in root_project()["optional-dependencies"].items()
        if extra in next(d for d in load_catalog() if d.key == "runtime").extras
    ]
    runtime = f"acp-typed-runtime {root_project()['version']} (from pyproject.toml)"
    post = {d.key: f".post{d.post}" if d.post else "" for d in load_catalog()}
    assert [line.split(" requires ")[0] for line in lines] == [
        runtime,
        f"acp-typed-v1 1.30.1{post['v1']} (from schema 1.30.1)",
        f"acp-typed-v2 2.0.0b1{post['v2']} (from schema 2.0.0-beta.1)",
    ]
    assert not (tmp_path / "dist").exists()


def test_a_lock_without_releases_stops_before_building(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = _lock(tmp_path, {}, {})
    assert main(["--lock", str(lock), "--out", str(tmp_path / "dist")]) == 2
    assert "names no schema release" in capsys.readouterr().err
    assert not (tmp_path / "dist").exists()


def test_an_unknown_distribution_key_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--list", "--only", "v3"])
    assert exit_info.value.code == 2
