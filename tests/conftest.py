"""Shared pytest setup: every async test runs on both anyio backends."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from acp_runtime._log_throttle import peer_log

pytest_plugins = ["acp_runtime.testing.pytest_plugin"]  # the `acp_client` fixture
# How long an example takes is not what any property here checks, and on a shared 2-core
# machine running two test workers an example can stall past hypothesis's 200 ms deadline
# (test_json_codec failed that way once under load average 15): no deadline, no too_slow check.
settings.register_profile("acp", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("acp")


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: -p no:xdist still works
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Two test workers per core for ``-n auto``: about half of the suite's time is spent
    waiting on child processes, sockets and timers, which a second worker per core fills.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins (pytest-xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * (cores or 1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="run long soaks and full benchmarks")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: pass --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def fresh_log_budgets() -> Iterator[None]:
    """The runtime's log throttle is per process: each test starts with full budgets."""
    peer_log.reset()
    yield
    peer_log.reset()
