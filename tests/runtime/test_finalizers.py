"""Garbage-collected handles after the event loop has gone (OUT-5, OUT-10, IN-6 finalizers).

A :class:`SentRequest` or :class:`Responder` collected unconsumed hands its work (cancel,
-32603) to the loop through a finalizer. When the loop has already finished, or the
interpreter is exiting, that work has nowhere to go: it must be dropped without an
exception, a warning or a log line above DEBUG. Each case runs in a fresh interpreter with
Python's development mode on (``-X dev``: resource and coroutine warnings shown) and all
logging at WARNING and above sent to stderr, which must stay empty.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable

import anyio
import pytest

from acp_runtime._loop import current_soon_caller

SCRIPT = textwrap.dedent(
    """
    import gc, logging, sys
    import anyio
    from acp_runtime import ConnectionBuilder, memory_pair

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    backend, ending = sys.argv[1], sys.argv[2]
    kept = []

    async def park(method, params, responder):
        kept.append(responder)  # never answered

    async def main():
        if backend == "asyncio":  # -X dev logs any step over 0.1 s: that times the machine
            import asyncio  # (a CI worker stalled once for 0.127 s), not the finalizers

            asyncio.get_running_loop().slow_callback_duration = 60
        ours, theirs = memory_pair()
        async with ConnectionBuilder().on_raw_request(park).connect(ours) as cx:
            pending = cx.send_raw_request("pending")  # never consumed
            kept.extend([pending, pending.cancellation_handle(), cx.prepare_raw_request("p")])
            await theirs.send(b'{"jsonrpc":"2.0","id":1,"method":"incoming"}')
            with anyio.fail_after(5):
                while not kept[3:]:
                    await anyio.lowlevel.checkpoint()
        kept.append(cx.send_raw_request("after-close"))
        await theirs.aclose()

    anyio.run(main, backend=backend)
    assert len(kept) == 5, kept
    if ending == "collect-after-loop":
        kept.clear()
        gc.collect()
    print("ok")
    """
)


@pytest.mark.parametrize("ending", ["collect-after-loop", "left-for-interpreter-exit"])
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_handles_collected_after_the_loop_finished_are_silent(backend: str, ending: str) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", SCRIPT, backend, ending],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_soon_caller_kept_past_its_loop_drops_the_callback_without_raising(
    backend: str,
) -> None:
    """OUT-5's finalizers hand their work to the loop through ``current_soon_caller``; one
    that runs after the loop finished finds it closed (asyncio) or the run over (trio): the
    callback is dropped and nothing raises, as the caller's contract says."""
    callers: list[Callable[[Callable[[], None]], None]] = []

    async def main() -> None:
        callers.append(current_soon_caller())

    anyio.run(main, backend=backend)
    called: list[int] = []
    callers[0](lambda: called.append(1))
    assert called == []
