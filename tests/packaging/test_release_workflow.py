"""The release workflow runs the same build and checks as the local-index round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = REPO_ROOT / ".github" / "workflows" / "release.yml"


def _workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return loaded


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = job["steps"]
    return steps


def test_the_workflow_builds_and_checks_with_the_make_target_the_test_runs() -> None:
    runs = [step.get("run", "") for step in _steps(_workflow()["jobs"]["build"])]
    assert "make release-check" in runs
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("\nrelease-check:", 1)[1].split("\n\n", 1)[0]
    assert "-m distributions.release --out dist" in target


def test_the_workflow_runs_on_a_published_release_and_by_hand() -> None:
    triggers = _workflow()[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["release"] == {"types": ["published"]}
    assert "workflow_dispatch" in triggers


def test_the_upload_uses_trusted_publishing_from_an_environment() -> None:
    publish = _workflow()["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]
    uses = [step.get("uses", "") for step in _steps(publish)]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    assert not any("password" in step.get("with", {}) for step in _steps(publish))
