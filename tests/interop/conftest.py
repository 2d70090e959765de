"""Interop fixtures: every test here drives real Node peers over real pipes.

Tests are skipped, with the reason, where `node` is not installed; CI has it. The
pinned npm packages are installed on first use if `make setup` has not done it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from node_peers import ensure_node_modules, node_executable


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture(scope="session")
def node() -> str:
    """Path of `node` with the interop packages installed; skips where Node.js is missing."""
    path = node_executable()
    if path is None:
        pytest.skip("node is not installed: the TypeScript SDK interop tests need Node.js")
    ensure_node_modules()
    return path
