"""Through HAProxy, an answer goes out as soon as the worker writes it.

Two settings hold answers back, each by a fixed delay per prompt, and each is set in
``cluster``/``haproxy`` (and named in ``docs/deploying.md``):

* without ``option http-no-delay`` HAProxy forwards a streamed body (the SSE events) with
  ``MSG_MORE``, so the event answering a prompt waits about 200 ms;
* a worker socket without ``TCP_NODELAY`` (uvicorn on an inherited socket) holds the
  answer written right after a notification until the client's delayed ACK, about 40 ms.

Both fail these bounds (the delayed ACK is 40 ms at least on Linux), set far above what
a prompt costs here (a few ms)."""

from __future__ import annotations

import statistics

import anyio
import pytest

from .client import visit
from .cluster import Cluster

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("scheme", "bound_ms"), [("http", 150), ("ws", 35)])
async def test_a_prompt_is_answered_without_a_proxy_or_nagle_delay(
    cluster: Cluster, scheme: str, bound_ms: int
) -> None:
    url = cluster.http_url if scheme == "http" else cluster.ws_url
    with anyio.fail_after(30):
        seen = await visit(url, ["whoami"] * 9)
    median_ms = statistics.median(seen.prompt_ns) / 1e6
    assert median_ms < bound_ms, [round(ns / 1e6, 1) for ns in seen.prompt_ns]
