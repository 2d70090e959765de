"""HAProxy refuses oversized request heads itself, whatever ASGI server the workers run
(uvicorn's httptools parser serves a 1 MiB header, or 2,000 headers, when reached
directly): 400 past ``tune.bufsize`` or ``tune.http.maxhdr``, no worker answering."""

from __future__ import annotations

import httpx
import pytest

from .cluster import Cluster

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


@pytest.mark.parametrize(
    "headers",
    [{"X-Big": "a" * (1 << 20)}, {f"X-H{i}": "v" for i in range(2000)}],
    ids=["1MiB-header", "2000-headers"],
)
def test_an_oversized_head_is_refused_by_haproxy(cluster: Cluster, headers: dict[str, str]) -> None:
    before = cluster.answers_per_worker()
    refused = httpx.post(cluster.http_url, json=INITIALIZE, headers=headers, timeout=10)
    assert refused.status_code == 400
    assert cluster.answers_per_worker() == before  # no worker saw it
    served = httpx.post(cluster.http_url, json=INITIALIZE, timeout=10)  # a normal head passes
    assert served.status_code == 200
    ended = httpx.delete(
        cluster.http_url,
        headers={
            "Acp-Connection-Id": served.headers["acp-connection-id"],
            "Cookie": served.headers["set-cookie"].split(";")[0],  # to the worker that has it
        },
        timeout=10,
    )
    assert ended.status_code == 202
