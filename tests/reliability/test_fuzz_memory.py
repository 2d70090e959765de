"""One connection fed the same hostile cases round after round: its memory must level off.

The cases are derived from every real transcript message with a seeded generator
(truncations, invalid UTF-8, random bytes, odd literals, deep nesting, over-limit
lines, duplicate and mistyped responses), checked by the same oracle as the hypothesis
fuzzing. The live Python heap is counted (``sys.getallocatedblocks``, cheap enough to
leave the run at full speed) after two warm-up rounds and at the end.
"""

from __future__ import annotations

import gc
import random
import sys
from typing import Any

import pytest

from .fuzz_rig import FUZZ_LIMIT, FuzzRig, RespondTo
from .quiet_logs import runtime_logs_formatted_and_dropped
from .wire_strategies import ODD_LITERALS, corpus, nested

pytestmark = pytest.mark.anyio

QUICK_ROUNDS = 5
SLOW_ROUNDS = 100
GROWTH_LIMIT_BLOCKS = 250
"""Allowed growth in live heap blocks from the end of round 2 to the end of the run; a
leak of one object per case exceeds it within two rounds (140 cases each)."""

RESULT = (("jsonrpc", "2.0"), ("result", {"ok": True}))


def seeded_cases(seed: int = 7) -> list[list[Any]]:
    rng = random.Random(seed)
    cases: list[list[Any]] = []
    for line in corpus():
        cut = rng.randrange(len(line))
        cases.append(
            [
                line,
                line[:cut],
                line[:cut] + b"\xff" + line[cut:],
                rng.randbytes(rng.randrange(1, 80)).replace(b"\n", b""),
                rng.choice(ODD_LITERALS),
                nested(rng.choice([5, 50_000]), rng.choice([b"[", b'{"a":']), rng.random() < 0.5),
                b'{"jsonrpc":"2.0","id":9,"method":"echo","params":"' + b"x" * FUZZ_LIMIT + b'"}',
                b'[{"jsonrpc":"2.0","id":1,"method":"echo"}]',
                b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":[1]}}',
                RespondTo(0, rng.choice(["int", "str", "float", "unknown"]), RESULT),
                RespondTo(1, "int", RESULT),
                RespondTo(1, "int", RESULT),  # duplicate
            ]
        )
    return cases


async def run_rounds(rounds: int) -> tuple[int, int, int]:
    """Returns (live blocks after warm-up, live blocks at the end, cases run)."""
    cases = seeded_cases()
    with runtime_logs_formatted_and_dropped():
        async with FuzzRig.open() as rig:
            baseline = 0
            for round_number in range(rounds):
                for items in cases:
                    await rig.run_case(items, chunks=[97, 5, 4096])
                if round_number == 1:
                    gc.collect()
                    baseline = sys.getallocatedblocks()
            gc.collect()
            return baseline, sys.getallocatedblocks(), rig.cases


async def measure(rounds: int) -> None:
    baseline, final, count = await run_rounds(rounds)
    growth = final - baseline
    print(f"\n[fuzz memory] {count} cases, live heap blocks {baseline} -> {final} ({growth:+d})")
    assert growth < GROWTH_LIMIT_BLOCKS


async def test_memory_levels_off_under_repeated_hostile_input() -> None:
    await measure(QUICK_ROUNDS)


@pytest.mark.slow
async def test_memory_levels_off_over_a_long_hostile_run() -> None:
    await measure(SLOW_ROUNDS)
