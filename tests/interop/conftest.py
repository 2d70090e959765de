"""Interop fixtures: every test here drives real Node peers over real pipes.

Tests are skipped, with the reason, where `node` is not installed; CI has it. The
pinned npm packages are installed on first use if `make setup` has not done it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .node_peers import (
    Event,
    echo_agent_command,
    ensure_node_modules,
    node_executable,
    run_ts_client,
    ts_agent_command,
)
from .scenarios import scenario_with_cwd


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


class ScenarioRuns:
    """The TS client's runs of each scenario against one agent command, cached for the
    session: several tests look at the same run (each costs about a second)."""

    def __init__(self, agent: list[str], workdir: Path) -> None:
        self._agent = agent
        self._workdir = workdir
        self._runs: dict[str, tuple[list[Event], str]] = {}

    def run(self, name: str) -> tuple[list[Event], str]:
        """Events of the TS client and the transcript text of the scenario `name`."""
        if name not in self._runs:
            transcript = self._workdir / f"{name}.jsonl"
            events = run_ts_client(self._agent, scenario_with_cwd(name), transcript=transcript)
            self._runs[name] = (events, transcript.read_text())
        return self._runs[name]

    def events(self, name: str) -> list[Event]:
        return self.run(name)[0]


@pytest.fixture(scope="session")
def ts_agent_runs(node: str, tmp_path_factory: pytest.TempPathFactory) -> ScenarioRuns:
    """TS client <-> TS agent: the reference behaviour."""
    return ScenarioRuns(ts_agent_command("--quiet"), tmp_path_factory.mktemp("ts-agent"))


@pytest.fixture(scope="session")
def echo_agent_runs(node: str, tmp_path_factory: pytest.TempPathFactory) -> ScenarioRuns:
    """TS client <-> examples/echo_agent.py."""
    return ScenarioRuns(echo_agent_command("--quiet"), tmp_path_factory.mktemp("echo-agent"))
