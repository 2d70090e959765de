"""``acp_runtime.testing.wire_connection``: the raw-JSON peer of the test helpers."""

from __future__ import annotations

import gc
import warnings

import pytest

from acp_runtime import ConnectionBuilder
from acp_runtime.testing import request, wire_connection


@pytest.mark.anyio
async def test_wire_connection_leaves_no_stream_open() -> None:
    """Both ends of its memory pair are closed on the way out: an end left open warns
    (``ResourceWarning``) when it is collected, which a suite run with warnings as errors
    reports against whatever test is running then."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        async with wire_connection(ConnectionBuilder()) as (cx, peer):
            await peer.send(request(1, "nobody/handles"))
            assert (await peer.receive())["error"]["code"] == -32601
        del cx, peer
        gc.collect()
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []
