"""Opt-in pyinstrument profiles of a benchmark's client and agent processes.

``python -m bench.profile_runtime`` sets :data:`ENV` to a directory; the Python
drivers then profile their client loop there (``client.txt``) and start their agent
under ``python -m pyinstrument`` (``agent.txt``). Without it nothing changes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ENV = "BENCH_PROFILE_DIR"


def profile_dir() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value else None


def python_command(script: Path) -> list[str]:
    """How to start a Python agent script: plainly, or under pyinstrument when profiling."""
    out = profile_dir()
    if out is None:
        return [sys.executable, str(script)]
    target = str(out / "agent.txt")
    return [sys.executable, "-m", "pyinstrument", "-r", "text", "-o", target, str(script)]


@contextmanager
def profiled_client() -> Iterator[None]:
    out = profile_dir()
    if out is None:
        yield
        return
    from pyinstrument import Profiler

    profiler = Profiler(async_mode="disabled")  # sample the whole loop, not one task
    with profiler:
        yield
    (out / "client.txt").write_text(profiler.output_text(unicode=False, color=False))
