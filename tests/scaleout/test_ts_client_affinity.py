"""The TypeScript SDK's Streamable HTTP client (2.4.0, ``createHttpStream`` with a
``MemoryAcpCookieStore``) behind HAProxy: it keeps HAProxy's ``SERVERID`` cookie, so every
request of a connection reaches one worker, as ours does (``test_http_affinity.py``)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.interop.node_peers import PEERS_DIR

from .cluster import Cluster

pytestmark = pytest.mark.interop

AFFINITY_CLIENT = PEERS_DIR / "affinity_client.mjs"


def test_the_ts_client_keeps_each_connection_on_one_worker(node: str, cluster: Cluster) -> None:
    before = cluster.answers_per_worker()
    run = subprocess.run(
        [node, str(AFFINITY_CLIENT), cluster.http_url, "4"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    after = cluster.answers_per_worker()
    workers = []
    for connection in result["connections"]:
        worker = cluster.worker_named(connection["agentName"])
        # every response the client got (POSTs, both SSE GETs, DELETE) came from that worker;
        # 8 of them, but a prompt's 202 can resolve after its answer and after the close
        assert set(connection["servedBy"]) == {worker.name}, connection
        assert len(connection["servedBy"]) >= 5
        assert connection["answers"] == [f"pid {worker.pid}"] * 3
        workers.append(worker.name)
    assert sorted(workers) == ["w1", "w2", "w3", "w4"]  # round robin spread them
    first, other, again = result["reconnects"]
    assert again == first != other  # a kept store brings the reconnect back
    served = sum(len(c["servedBy"]) for c in result["connections"])
    assert sum(after.values()) - sum(before.values()) >= served  # HAProxy agrees
