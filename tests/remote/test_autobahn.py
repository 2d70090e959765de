"""Autobahn|Testsuite on our WebSocket code: the text cases, both roles, both backends.

fuzzingclient drives an echo on our own listener; fuzzingserver is driven by our client
transport. Every case must end OK, NON-STRICT or INFORMATIONAL (its close behaviour
too). Skipped where ``wstest`` is not installed (``make autobahn-setup``, Python 2.7).
About 20-35 s per role and backend, two minutes for the four: of the cases' own time,
the four 6.4.x fail-fast UTF-8 cases wait 2 s each by design and the 27 9.x cases (text
messages up to 16 MiB, frames down to 64 bytes) take 7-16 s; they are kept, being the
large-message cases. Run alone with ``make autobahn``.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from .autobahn_runs import find_wstest, fuzz_client, fuzz_listener, summary

WSTEST, MISSING = find_wstest()

# make autobahn (and CI) runs these; make test leaves them out
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.autobahn,
    pytest.mark.skipif(WSTEST is None, reason=MISSING),
]

RUN_TIMEOUT = 300.0
"""Seconds one role's whole run may take (about 30 s here)."""


@pytest.mark.parametrize("role", ["listener", "client"])
async def test_every_text_case_passes(role: str, anyio_backend: str, tmp_path: Path) -> None:
    assert WSTEST is not None
    fuzz = fuzz_listener if role == "listener" else fuzz_client
    started = time.monotonic()
    with anyio.fail_after(RUN_TIMEOUT):
        results = await fuzz(WSTEST, tmp_path, f"acp-{role}-{anyio_backend}")
    report = summary(results)
    took = time.monotonic() - started
    print(f"{role} on {anyio_backend} in {took:.1f} s: {report}")  # shown with -rP
    assert results, "wstest reported no case"
    assert all(result.passed for result in results), report
