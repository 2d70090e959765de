"""The build machinery lives in ``distributions/`` at the repository root, not in ``src/``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "dist: builds and installs the distributions (about a minute); runs by default and in "
        'CI, deselect locally with -m "not dist"',
    )
