"""Wire fuzzing: hostile bytes into one live connection, invariants checked after every case.

Per backend, one connection runs in a background event loop for the whole hypothesis
run, so whatever a case leaves behind (a wedged request, a stale table entry) breaks a
later case. Each case pushes a list of hostile lines through the real newline framing,
split at random read boundaries; the rig (:mod:`.fuzz_rig`) checks the oracle's
replies, a ping, exactly-once settlement of outgoing requests, empty tables and that
nothing escaped to the event loop.
"""

from __future__ import annotations

from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings

from .fuzz_rig import FuzzRig
from .wire_strategies import cases, chunkings

QUICK_EXAMPLES = 120
SLOW_EXAMPLES = 5_000


def fuzz_one_connection(backend: str, examples: int) -> int:
    """Run ``examples`` hypothesis cases through one connection; returns lines sent."""
    with (
        start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(FuzzRig.open()) as rig,
    ):

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(items=cases, chunks=chunkings)
        def case(items: list[Any], chunks: list[int]) -> None:
            portal.call(rig.run_case, items, chunks)

        case()
        print(f"\n[fuzz {backend}] {rig.cases} cases, {rig.lines} lines, one connection")
        return rig.lines


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_hostile_input_gets_the_right_replies_and_the_connection_survives(backend: str) -> None:
    assert fuzz_one_connection(backend, QUICK_EXAMPLES) > QUICK_EXAMPLES


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_long_fuzz(backend: str) -> None:
    assert fuzz_one_connection(backend, SLOW_EXAMPLES) > SLOW_EXAMPLES
