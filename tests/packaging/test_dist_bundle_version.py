"""Without a verified spec tag, a generated package follows the npm bundle it was locked from."""

from __future__ import annotations

import json
from pathlib import Path

from distributions import versions


def test_schema_release_falls_back_to_the_locked_npm_bundle_release(tmp_path: Path) -> None:
    lock = {
        "current": "2.4.0",
        "releases": {
            "2.4.0": {
                "npm": {"package": "@agentclientprotocol/sdk", "version": "2.4.0"},
                "files": {"v1": {"github_asset": {"tag": None, "tag_hint": ">= schema-v1.25.0"}}},
            }
        },
    }
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(lock), encoding="utf-8")
    assert versions.schema_release("v1", path) == "2.4.0"


def test_a_verified_tag_wins_over_the_bundle_release(tmp_path: Path) -> None:
    lock = {
        "current": "2.4.0",
        "releases": {
            "2.4.0": {
                "npm": {"version": "2.4.0"},
                "files": {"v1": {"github_asset": {"tag": "schema-v1.25.0"}}},
            }
        },
    }
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(lock), encoding="utf-8")
    assert versions.schema_release("v1", path) == "1.25.0"
