"""Cancel storms: thousands of requests in flight both ways, each cancelled at a random moment.

Two connections over an in-memory pair (or, in the long mode, also two OS pipes with
the real framing) send each other ``count`` requests at once. The
serving side spawns each one's work (a random number of scheduler turns, or until
cancelled), stopped by its cancellation marker. Every request gets one cancel timing,
chosen by a seeded generator:

* ``before``: cancelled before publication (a no-op, not remembered), then awaited;
* ``in-flight``: cancelled after a random number of turns while awaited;
* ``twice``: like ``in-flight``, through the request and a cloned handle;
* ``race``: cancelled by the server right after it answered, before the answer is read;
* ``after``: cancelled once its answer was received;
* ``abandon``: the awaiting task is cancelled after a random number of turns;
* ``drop``: the handle is dropped unconsumed at once (automatic cancel).

Checked at the end, from both wire taps and both connections: every request got exactly
one response on the wire and every awaiter exactly one outcome (the right kind for its
timing); at most one ``$/cancel_request`` per request, none for ``before``/``after``;
both pending tables and both incoming registries are empty; nothing escaped to the
event loop.
"""

from __future__ import annotations

import gc
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from acp_runtime import (
    Connection,
    ConnectionBuilder,
    JsonValue,
    RequestCancellationHandle,
    RequestError,
    Responder,
    SentRequest,
    Transport,
    memory_pair,
)
from acp_runtime._stdio import FdReceiveStream, FdSendStream
from acp_runtime.transports import LineTransport

from .fuzz_rig import EscapeWatch

pytestmark = pytest.mark.anyio

QUICK_COUNT = 1_000
SLOW_COUNT = 10_000
TIMINGS = ("before", "in-flight", "twice", "race", "after", "abandon", "drop")
CANCELLED = -32800
STAGGER_TURNS = 100
"""Publications are spread over this many scheduler turns, so cancels interleave with
requests on the wire instead of queueing behind all of them."""
CANCELS_ALWAYS_COME = ("in-flight", "twice", "abandon", "drop")
"""Timings where a cancel always reaches the server, so half of their work runs until
cancelled (-32800 wins) and the other half finishes after 0-99 turns (a real race)."""


class WireTap:
    """Wraps a transport and counts what goes out: requests, responses, cancels, by id."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.requests: Counter[Any] = Counter()
        self.responses: Counter[Any] = Counter()
        self.cancels: Counter[Any] = Counter()

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        value = json.loads(message)
        if value.get("method") == "$/cancel_request":
            self.cancels[value["params"]["requestId"]] += 1
        elif value.get("method") == "work":
            self.requests[value["id"]] += 1
        else:
            self.responses[value["id"]] += 1
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def turns(count: int) -> None:
    for _ in range(count):
        await anyio.lowlevel.checkpoint()


@dataclass
class Side:
    """One connection's role in the storm: it serves the peer's requests and sends its own."""

    name: str
    rng: random.Random
    race_handles: dict[int, RequestCancellationHandle] = field(default_factory=dict)
    """Handles the *peer's* server cancels right after answering (timing ``race``)."""
    outcomes: dict[int, list[str]] = field(default_factory=dict)
    timing_of: dict[int, str] = field(default_factory=dict)
    wire_id_of: dict[int, int] = field(default_factory=dict)
    served: int = 0
    all_served: anyio.Event = field(default_factory=anyio.Event)
    expected_serves: int = 0

    # -- serving ------------------------------------------------------------------------

    async def handle(
        self, method: str, params: JsonValue, responder: Responder[JsonValue]
    ) -> JsonValue:
        if method == "ping":
            return "pong"
        assert isinstance(params, dict)
        responder.connection.spawn(self.serve, responder, params)
        return None

    async def serve(self, responder: Responder[JsonValue], params: dict[str, Any]) -> None:
        async def work() -> JsonValue:
            if params["delay"] < 0:
                await anyio.sleep_forever()  # only the cancellation ends this one
            await turns(params["delay"])
            return {"n": params["n"]}

        await responder.respond_with(responder.cancellation.run_until_cancelled(work()))
        assert responder.is_answered
        if params["timing"] == "race":
            self.peer.race_handles.pop(params["n"]).cancel()
        self.served += 1
        if self.served == self.expected_serves:
            self.all_served.set()

    peer: Side = field(init=False)

    # -- sending ------------------------------------------------------------------------

    async def send_one(self, cx: Connection, n: int) -> None:
        timing = self.rng.choice(TIMINGS)
        wait = self.rng.randrange(40)
        forever = timing in CANCELS_ALWAYS_COME and self.rng.random() < 0.5
        params = {"n": n, "delay": -1 if forever else self.rng.randrange(100), "timing": timing}
        self.timing_of[n] = timing
        outcome = self.outcomes.setdefault(n, [])
        await turns(self.rng.randrange(STAGGER_TURNS))
        if timing == "before":
            request = cx.prepare_raw_request("work", params)
            self.wire_id_of[n] = request.id
            request.cancellation_handle().cancel()
            outcome.append(await self._outcome(request))
        elif timing == "drop":
            self.wire_id_of[n] = cx.send_raw_request("work", params).id  # dropped: automatic cancel
            outcome.append("dropped")
        elif timing == "abandon":
            request = cx.send_raw_request("work", params)
            self.wire_id_of[n] = request.id
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._cancel_scope_after, scope, wait)
                    outcome.append(await self._outcome(request))
                    tg.cancel_scope.cancel()
            if scope.cancelled_caught and not outcome:
                outcome.append("abandoned")
        else:
            request = cx.send_raw_request("work", params)
            self.wire_id_of[n] = request.id
            if timing == "race":
                self.race_handles[n] = request.cancellation_handle()
            async with anyio.create_task_group() as tg:
                if timing in ("in-flight", "twice"):
                    tg.start_soon(self._cancel_after, request, wait, timing == "twice")
                outcome.append(await self._outcome(request))
                tg.cancel_scope.cancel()
            if timing == "after":
                request.cancellation_handle().cancel()

    @staticmethod
    async def _outcome(request: SentRequest[JsonValue]) -> str:
        try:
            await request
        except RequestError as error:
            assert error.code == CANCELLED, error
            return "cancelled"
        return "result"

    @staticmethod
    async def _cancel_after(request: SentRequest[JsonValue], wait: int, twice: bool) -> None:
        await turns(wait)
        handle = request.cancellation_handle()
        request.cancel()
        if twice:
            handle.cancel()
            request.cancel()

    @staticmethod
    async def _cancel_scope_after(scope: anyio.CancelScope, wait: int) -> None:
        await turns(wait)
        scope.cancel()


ALLOWED = {
    "before": {"result"},
    "race": {"result"},
    "after": {"result"},
    "in-flight": {"result", "cancelled"},
    "twice": {"result", "cancelled"},
    "abandon": {"result", "cancelled", "abandoned"},
    "drop": {"dropped"},
}


def check_side(side: Side, tap: WireTap, peer_tap: WireTap, count: int) -> Counter[str]:
    """Invariants for the requests ``side`` sent (its tap) and the peer answered."""
    ids = set(tap.requests)
    assert len(ids) == count and all(sent == 1 for sent in tap.requests.values())
    assert all(peer_tap.responses[wire_id] == 1 for wire_id in ids), "not exactly one response"
    assert set(tap.cancels) <= ids and all(n == 1 for n in tap.cancels.values())
    tally: Counter[str] = Counter()
    for n, timing in side.timing_of.items():
        (outcome,) = side.outcomes[n]
        assert outcome in ALLOWED[timing], (timing, outcome)
        tally[f"{timing}:{outcome}"] += 1
    quiet = {
        side.wire_id_of[n] for n, timing in side.timing_of.items() if timing in ("before", "after")
    }
    assert not quiet & set(tap.cancels), "a cancel went out before publication or after the answer"
    assert set(side.wire_id_of.values()) == ids
    tally["cancels on the wire"] = sum(tap.cancels.values())
    return tally


def pipe_pair() -> tuple[Transport, Transport]:
    """Two newline-framed transports over two OS pipes."""
    a_in, b_out = os.pipe()
    b_in, a_out = os.pipe()
    return (
        LineTransport(FdReceiveStream(a_in, close_fd=True), FdSendStream(a_out, close_fd=True)),
        LineTransport(FdReceiveStream(b_in, close_fd=True), FdSendStream(b_out, close_fd=True)),
    )


PAIRS: dict[str, Callable[[], tuple[Transport, Transport]]] = {
    "memory": memory_pair,
    "pipes": pipe_pair,
}


async def storm(count: int, seed: int, pair: str) -> dict[str, Counter[str]]:
    a_end, b_end = PAIRS[pair]()
    a_tap, b_tap = WireTap(a_end), WireTap(b_end)
    a, b = Side("a", random.Random(seed)), Side("b", random.Random(seed + 1))
    a.peer, b.peer = b, a
    a.expected_serves = b.expected_serves = count
    a_builder = ConnectionBuilder().on_raw_request(a.handle)
    b_builder = ConnectionBuilder().on_raw_request(b.handle)
    async with a_builder.connect(a_tap) as a_cx, b_builder.connect(b_tap) as b_cx:
        with anyio.fail_after(60 + count / 50):
            async with anyio.create_task_group() as tg:
                for n in range(count):
                    tg.start_soon(a.send_one, a_cx, n)
                    tg.start_soon(b.send_one, b_cx, n)
            gc.collect()
            await a.all_served.wait()
            await b.all_served.wait()
            # A round trip each way: every answer sent before it has been routed.
            assert await a_cx.send_raw_request("ping") == "pong"
            assert await b_cx.send_raw_request("ping") == "pong"
        for cx in (a_cx, b_cx):
            assert cx.pending_request_count == 0
            assert cx.incoming_request_count == 0
    assert not a.race_handles and not b.race_handles
    return {"a": check_side(a, a_tap, b_tap, count), "b": check_side(b, b_tap, a_tap, count)}


async def run_storm(count: int, anyio_backend: str, pair: str = "memory") -> None:
    started = time.monotonic()
    async with EscapeWatch.watching() as watch:
        tallies = await storm(count, seed=count, pair=pair)
    elapsed = time.monotonic() - started
    assert not watch.escaped, watch.escaped[:5]
    print(f"\n[cancel storm {anyio_backend}/{pair}] {count} requests each way in {elapsed:.1f} s")
    for name, tally in tallies.items():
        print(
            f"  {name} -> peer: "
            + ", ".join(f"{key}={value}" for key, value in sorted(tally.items()))
        )


async def test_cancel_storm(anyio_backend: str) -> None:
    await run_storm(QUICK_COUNT, anyio_backend)


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["memory", "pipes"])
async def test_cancel_storm_10k(anyio_backend: str, pair: str) -> None:
    await run_storm(SLOW_COUNT, anyio_backend, pair)
