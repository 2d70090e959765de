"""Streamable HTTP behind HAProxy with cookie affinity: every request of a connection
(its POSTs, its SSE GETs, its DELETE) reaches the worker that answered its ``initialize``,
because our client sends back the ``SERVERID`` cookie HAProxy set. Without the cookie the
connection breaks at once (the control: affinity is what carries it)."""

from __future__ import annotations

import anyio
import pytest

from acp_runtime.remote import CookieStore

from .client import visit
from .cluster import Cluster

pytestmark = pytest.mark.anyio

WHOAMI = ["whoami"] * 3
MIN_ANSWERS_PER_VISIT = 5
"""Of the 8 (initialize, the connection's GET, session/new, the session's GET, three
prompts, DELETE), those sure to be counted by the time the client has closed: a prompt's
202 may come after its answer."""


async def test_every_request_of_a_connection_reaches_the_worker_of_its_initialize(
    cluster: Cluster,
) -> None:
    """Four connections one after another: round robin gives each its own worker, and
    HAProxy's counters show that worker, and no other, answered all of its requests."""
    workers = []
    for _ in range(4):
        before = cluster.answers_per_worker()
        with anyio.fail_after(20):
            seen = await visit(cluster.http_url, WHOAMI)
        after = cluster.answers_per_worker()
        worker = cluster.worker_named(seen.agent_name)
        answered = {name: after[name] - before[name] for name in after}
        assert {name for name, n in answered.items() if n} == {worker.name}, answered
        assert answered[worker.name] >= MIN_ANSWERS_PER_VISIT
        assert seen.answers == [f"pid {worker.pid}"] * len(WHOAMI)
        workers.append(worker.name)
    assert sorted(workers) == ["w1", "w2", "w3", "w4"]  # the connections spread


async def test_without_the_cookie_a_connection_fails_on_another_worker(cluster: Cluster) -> None:
    """The control: with ``cookies="omit"`` the requests after ``initialize`` are balanced
    like new ones, reach a worker that does not know the connection (404), and fail."""
    with anyio.fail_after(20), pytest.raises(Exception) as failure:
        await visit(cluster.http_url, WHOAMI, cookies="omit")
    assert "connection_closed" in repr(failure.value) or "404" in repr(failure.value)


async def test_a_kept_cookie_store_brings_a_reconnect_back_to_its_worker(cluster: Cluster) -> None:
    """A :class:`CookieStore` the caller keeps carries the affinity to the next
    connection (how a client reconnects to reload its sessions); a fresh one does not."""
    cookies = CookieStore()
    with anyio.fail_after(30):
        first = await visit(cluster.http_url, [], cookies=cookies)
        others = [(await visit(cluster.http_url, [])).agent_name for _ in range(3)]
        again = await visit(cluster.http_url, [], cookies=cookies)
    assert again.agent_name == first.agent_name
    assert len({first.agent_name, *others}) == 4  # in between, round robin went on
