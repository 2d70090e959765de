"""WebSocket behind HAProxy: each socket is one TCP connection, held by one worker for its
life, so no affinity is needed, and round robin spreads the sockets over the workers."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest

from .client import Visit, visit
from .cluster import Cluster

pytestmark = pytest.mark.anyio


async def test_websocket_connections_spread_over_the_workers(cluster: Cluster) -> None:
    """Eight sockets at once: two on each of the four workers, every answer of a socket
    from its own worker, and HAProxy counted one upgrade (101) per socket per worker."""
    before = cluster.answers_per_worker()
    visits: list[Visit] = []

    async def one() -> None:
        visits.append(await visit(cluster.ws_url, ["whoami"] * 3))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(one)
    after = cluster.answers_per_worker()
    workers = Counter(cluster.worker_named(v.agent_name).name for v in visits)
    assert workers == {"w1": 2, "w2": 2, "w3": 2, "w4": 2}
    for seen in visits:
        assert seen.answers == [f"pid {cluster.worker_named(seen.agent_name).pid}"] * 3
    assert {name: after[name] - before[name] for name in after} == dict(workers)
