"""Scale-out fixtures: worker processes behind a real HAProxy, started on loopback.

The tests skip, with the reason, where ``haproxy`` is not installed; ``make haproxy``
installs Debian's package (CI does, through ``.ci/run``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.interop.node_peers import ensure_node_modules, node_executable

from .cluster import Cluster, running_cluster
from .haproxy import haproxy_executable


@pytest.fixture(scope="session")
def haproxy() -> str:
    """Path of ``haproxy``; skips where it is missing."""
    path = haproxy_executable()
    if path is None:
        pytest.skip("haproxy is not installed (`make haproxy`): the scale-out tests need it")
    return path


@pytest.fixture(scope="session")
def cluster(haproxy: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Four workers behind HAProxy, shared by the tests that kill none."""
    with running_cluster(4, tmp_path_factory.mktemp("cluster"), haproxy=haproxy) as running:
        yield running


@pytest.fixture(scope="session")
def node() -> str:
    """Path of ``node`` with the interop packages; skips where Node.js is missing."""
    path = node_executable()
    if path is None:
        pytest.skip("node is not installed: the TypeScript client test needs Node.js")
    ensure_node_modules()
    return path
