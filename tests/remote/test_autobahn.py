"""Autobahn|Testsuite on our WebSocket code: the text cases, both roles, both backends.

fuzzingclient drives an echo on our own listener; fuzzingserver is driven by our client
transport. Every case must end OK, NON-STRICT or INFORMATIONAL (its close behaviour
too). Skipped where ``wstest`` is not installed (``make autobahn-setup``, Python 2.7).
About 20-30 s per role and backend (the 6.4.x fail-fast UTF-8 cases wait 2 s each by
design, 9.x sends up to 16 MiB messages); run alone with ``make autobahn``.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from .autobahn import find_wstest, fuzz_client, fuzz_listener, summary

WSTEST, MISSING = find_wstest()

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(WSTEST is None, reason=MISSING)]

RUN_TIMEOUT = 300.0
"""Seconds one role's whole run may take (about 30 s here)."""


@pytest.mark.parametrize("role", ["listener", "client"])
async def test_every_text_case_passes(role: str, anyio_backend: str, tmp_path: Path) -> None:
    assert WSTEST is not None
    fuzz = fuzz_listener if role == "listener" else fuzz_client
    with anyio.fail_after(RUN_TIMEOUT):
        results = await fuzz(WSTEST, tmp_path, f"acp-{role}-{anyio_backend}")
    report = summary(results)
    print(f"{role} on {anyio_backend}: {report}")  # the counts, shown with -rP
    assert results, "wstest reported no case"
    assert all(result.passed for result in results), report
